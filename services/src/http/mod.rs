//! The REST transport: the router over the application ([`App`]) and the problem+json
//! fallback for unknown routes and methods. A sibling of `mcp`: neither imports the other;
//! the composition root merges them and wraps both in the `edge` layers.

mod extract;
mod health;
mod openapi;
mod places;
pub mod problem;
pub(crate) mod share;
mod stages;
mod trips;
mod work;

use axum::Router;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

pub use self::extract::etag;
pub use self::openapi::OPENAPI_JSON;
use self::problem::Problem;
use crate::app::{App, AppError};

/// Every route the API serves, as `(method, OpenAPI path)`. The OpenAPI test checks this
/// table against the published document both ways.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/trips"),
    ("POST", "/trips"),
    ("GET", "/trips/{id}"),
    ("PATCH", "/trips/{id}"),
    ("DELETE", "/trips/{id}"),
    ("GET", "/trips/{id}/detail"),
    ("POST", "/trips/{id}/analyze"),
    ("GET", "/trips/{id}/events"),
    ("POST", "/trips/gpx-upload"),
    ("GET", "/metrics"),
    ("GET", "/geocode/search"),
    ("GET", "/trips/{id}.gpx"),
    ("GET", "/trips/{id}.fit"),
    ("GET", "/trips/{id}/stages/{stageId}/export.gpx"),
    ("GET", "/trips/{id}/stages/{stageId}/export.fit"),
    ("GET", "/trips/{id}/history"),
    ("POST", "/trips/{id}/duplicate"),
    ("POST", "/trips/{id}/stages"),
    ("PATCH", "/trips/{id}/stages/{stageId}"),
    ("DELETE", "/trips/{id}/stages/{stageId}"),
    ("GET", "/trips/{id}/stages/{stageId}/detail"),
    ("PATCH", "/trips/{id}/stages/{stageId}/move"),
    ("POST", "/trips/{id}/stages/{stageId}/rest-day"),
    ("PATCH", "/trips/{id}/stages/{stageId}/accommodation"),
    ("POST", "/trips/{id}/stages/{stageId}/accommodations/manual"),
    ("POST", "/trips/{id}/stages/{stageId}/poi-waypoint"),
    ("POST", "/trips/{id}/accommodations/scan"),
    ("GET", "/trips/{id}/route"),
    ("GET", "/s/{code}/route"),
    ("GET", "/trips/{id}/share"),
    ("POST", "/trips/{id}/share"),
    ("DELETE", "/trips/{id}/share"),
    ("GET", "/s/{code}"),
    ("GET", "/s/{code}.gpx"),
    ("GET", "/s/{code}.fit"),
    ("GET", "/s/{code}/stages/{stageId}"),
    ("GET", "/livez"),
    ("GET", "/readyz"),
    ("GET", "/openapi.json"),
];

/// The application's router.
pub fn router(state: App) -> Router {
    let routes: Vec<(&str, MethodRouter<App>)> = vec![
        ("/trips", get(trips::list).post(trips::create)),
        (
            "/trips/{id}",
            get(trips::summary)
                .patch(trips::update)
                .delete(trips::delete),
        ),
        ("/trips/{id}/detail", get(trips::detail)),
        ("/trips/{id}/analyze", axum::routing::post(work::analyse)),
        ("/trips/{id}/events", get(work::events)),
        (
            "/trips/gpx-upload",
            axum::routing::post(work::upload).layer(axum::extract::DefaultBodyLimit::max(
                etappe_workers::fetch::MAX_SOURCE_BYTES + 64 * 1024,
            )),
        ),
        ("/metrics", get(work::metrics)),
        ("/geocode/search", get(places::search)),
        ("/trips/{id}/stages", axum::routing::post(stages::add)),
        (
            "/trips/{id}/stages/{stage}",
            axum::routing::patch(stages::update).delete(stages::delete),
        ),
        (
            "/trips/{id}/stages/{stage}/{leaf}",
            get(stages::read)
                .patch(stages::patch_leaf)
                .post(stages::post_leaf),
        ),
        (
            "/trips/{id}/stages/{stage}/accommodations/manual",
            axum::routing::post(stages::manual_accommodation),
        ),
        (
            "/trips/{id}/accommodations/scan",
            axum::routing::post(stages::scan),
        ),
        ("/trips/{id}/route", get(stages::route)),
        ("/s/{code}/route", get(share::public_route)),
        (
            "/trips/{id}/share",
            get(share::get).post(share::create).delete(share::revoke),
        ),
        ("/s/{code}", get(share::public)),
        ("/trips/{id}/history", get(trips::history)),
        (
            "/trips/{id}/duplicate",
            axum::routing::post(trips::duplicate),
        ),
        ("/s/{code}/stages/{stage}", get(share::public_stage)),
        ("/livez", get(health::live)),
        ("/readyz", get(health::ready)),
        ("/openapi.json", get(openapi::document)),
    ];
    let mut router = Router::new();
    for (path, method_router) in routes {
        router = router.route(path, method_router.fallback(method_not_allowed));
    }
    router.fallback(not_found).with_state(state)
}

async fn not_found() -> Response {
    Problem::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "Not found",
        "no such resource",
    )
    .into_response()
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> Response {
    let allowed = allowed_methods(uri.path());
    if allowed.is_empty() {
        return not_found().await;
    }
    AppError::MethodNotAllowed {
        method: method.to_string(),
        allowed: allowed.join(", "),
    }
    .into_response()
}

/// The methods `ROUTES` serves on a concrete path (a `{name}` segment matches any segment;
/// `{id}.gpx` matches a segment ending in `.gpx`), with HEAD wherever GET is.
pub fn allowed_methods(path: &str) -> Vec<&'static str> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let matches = |template: &str| {
        let parts: Vec<&str> = template.split('/').collect();
        parts.len() == segments.len()
            && parts.iter().zip(&segments).all(|(t, s)| {
                if let Some(rest) = t.strip_prefix('{') {
                    match rest.split_once('}') {
                        Some((_, "")) => {
                            !s.is_empty() && !s.ends_with(".gpx") && !s.ends_with(".fit")
                        }
                        Some((_, suffix)) => s.len() > suffix.len() && s.ends_with(suffix),
                        None => false,
                    }
                } else {
                    t == s
                }
            })
    };
    let mut allowed: Vec<&'static str> = ROUTES
        .iter()
        .filter(|(_, template)| matches(template))
        .map(|(method, _)| *method)
        .collect();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.contains(&"GET") {
        allowed.push("HEAD");
    }
    allowed
}
