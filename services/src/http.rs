//! The REST transport: the router over the application ([`App`]) and the problem+json
//! fallback for unknown routes and methods. A sibling of `mcp`: neither imports the other;
//! the composition root merges them and wraps both in the `edge` layers.

mod extract;
mod health;
pub mod openapi;
mod places;
pub(crate) mod share;
mod stages;
mod trips;
mod work;

use axum::Router;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

pub use self::extract::etag;
pub use self::openapi::{Document, allowed_methods, document, operations};
use crate::app::{App, AppError};
pub use crate::problem;
use crate::problem::Problem;

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
            axum::routing::post(work::upload)
                .layer(axum::extract::DefaultBodyLimit::max(
                    extract::MAX_UPLOAD_BODY,
                ))
                .layer(axum::middleware::from_fn(extract::refuse_declared_oversize)),
        ),
        ("/metrics", get(work::metrics)),
        ("/geocode/search", get(places::search)),
        ("/trips/{id}/stages", axum::routing::post(stages::add)),
        (
            "/trips/{id}/stages/{stage}",
            axum::routing::patch(stages::update).delete(stages::delete),
        ),
        ("/trips/{id}/stages/{stage}/detail", get(stages::detail)),
        (
            "/trips/{id}/stages/{stage}/export.gpx",
            get(stages::export_file),
        ),
        (
            "/trips/{id}/stages/{stage}/export.fit",
            get(stages::export_file),
        ),
        (
            "/trips/{id}/stages/{stage}/move",
            axum::routing::patch(stages::move_stage),
        ),
        (
            "/trips/{id}/stages/{stage}/accommodation",
            axum::routing::patch(stages::choose_accommodation),
        ),
        (
            "/trips/{id}/stages/{stage}/rest-day",
            axum::routing::post(stages::rest_day),
        ),
        (
            "/trips/{id}/stages/{stage}/poi-waypoint",
            axum::routing::post(stages::add_waypoint).delete(stages::remove_detour),
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
        ("/trips/{id}/restore", axum::routing::post(trips::restore)),
        (
            "/trips/{id}/duplicate",
            axum::routing::post(trips::duplicate),
        ),
        ("/s/{code}/stages/{stage}", get(share::public_stage)),
        ("/livez", get(health::live)),
        ("/readyz", get(health::ready)),
        ("/openapi.json", get(openapi::serve)),
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
