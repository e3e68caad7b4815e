//! The REST transport: the routes over the application ([`App`]), each declared once by its
//! handler's operation, and the problem+json fallback for unknown routes and methods. A
//! sibling of `mcp`: neither imports the other; the composition root merges them and wraps
//! both in the request layers.

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
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use self::extract::etag;
pub use self::openapi::{Document, allowed_methods, document, operations};
pub use crate::problem;
use crate::problem::Problem;
use etappe_app::{App, AppError};

/// The REST routes with their operations: each resource's module declares its routes by
/// their handlers (`utoipa_axum::routes!` reads each handler's path and method off its
/// `#[utoipa::path]`), so a route and its place in the document are written once.
pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(trips::routes())
        .merge(work::routes())
        .merge(places::routes())
        .merge(stages::routes())
        .merge(share::routes())
        .merge(health::routes())
        .routes(routes!(openapi::serve))
}

/// The application's router: the REST routes, with problem+json for a path nobody serves
/// and for a method a path does not take (405 with its `Allow`).
pub fn router(state: App) -> Router {
    let (router, _) = routes().split_for_parts();
    router
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .with_state(state)
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
    Problem::from(AppError::MethodNotAllowed {
        method: method.to_string(),
        allowed: allowed.join(", "),
    })
    .into_response()
}
