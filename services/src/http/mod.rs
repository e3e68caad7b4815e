//! The REST transport: the router, its shared state, the request-context middleware and the
//! problem+json fallback for unknown routes.

mod extract;
mod health;
pub mod openapi;
mod places;
pub mod problem;
pub(crate) mod share;
mod stages;
mod trips;
mod work;

use std::sync::Arc;

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use tower_http::trace::TraceLayer;
use uuid::Uuid;

pub use self::extract::etag;
pub use self::openapi::{Document, allowed_methods, document, operations};
use self::problem::Problem;
use crate::app::trips::TripService;
use crate::app::{AppError, RequestContext};
use crate::identity::Identity;

/// What every handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    pub trips: Arc<TripService>,
    pub identity: Arc<Identity>,
    /// The queue, progress and metrics of the work side.
    pub work: crate::runtime::Work,
    /// The public base URL share links are built on (`ETAPPE_PUBLIC_URL`); unset: the request's
    /// Host.
    pub public_url: Option<String>,
    /// Where `/mcp` may be reached from (Host and Origin checks).
    pub mcp: crate::mcp::McpSettings,
    /// Request budgets, shared by REST and MCP (and by replicas, through Redis).
    pub budgets: Arc<crate::budgets::Budgets>,
    /// Live event streams open per user (capped by the budgets' `streams_per_user`).
    pub streams: Arc<crate::streams::StreamSlots>,
    /// The server's deadlines (the body deadline is a layer of the router).
    pub limits: crate::server::ServerLimits,
}

/// The application's router.
pub fn router(state: AppState) -> Router {
    let routes: Vec<(&str, MethodRouter<AppState>)> = vec![
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
        ("/openapi.json", get(openapi::serve)),
    ];
    let mut router = Router::new();
    for (path, method_router) in routes {
        router = router.route(path, method_router.fallback(method_not_allowed));
    }
    router
        .merge(crate::mcp::router(state.clone(), &state.mcp))
        .fallback(not_found)
        .layer(axum::middleware::from_fn(request_context))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            state.limits.body_timeout(),
        ))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let route = request.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str());
            let span = tracing::info_span!("http", method = %request.method(), route, status = tracing::field::Empty);
            crate::telemetry::continue_trace(&span, request.headers());
            span
        }))
        .with_state(state)
}

/// Gives each request an id (the caller's `X-Request-Id`, or a new one) and a trace context,
/// which the services carry into event metadata; echoes the id on the response.
async fn request_context(mut request: Request, next: Next) -> Response {
    let correlation_id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| Uuid::parse_str(v).ok())
        .unwrap_or_else(Uuid::now_v7);
    let context = RequestContext {
        correlation_id: Some(correlation_id),
        traceparent: crate::telemetry::current_traceparent(),
    };
    request.extensions_mut().insert(context);
    let mut response = next.run(request).await;
    if let Ok(value) = HeaderValue::from_str(&correlation_id.to_string()) {
        response.headers_mut().insert("x-request-id", value);
    }
    tracing::Span::current().record("status", response.status().as_u16());
    response
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
