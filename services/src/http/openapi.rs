//! The published OpenAPI document. It is written by hand (`openapi.json` beside this file)
//! and kept true by tests: every route of [`super::ROUTES`] is in it and nothing else, and
//! the end-to-end tests validate real answers against its schemas.

use axum::http::header;
use axum::response::IntoResponse;

/// The OpenAPI 3.1 document.
pub const OPENAPI_JSON: &str = include_str!("openapi.json");

/// `GET /openapi.json`.
pub(super) async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI_JSON)
}
