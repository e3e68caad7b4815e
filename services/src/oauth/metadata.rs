//! Discovery: RFC 9728 protected-resource metadata at the path-inserted `/mcp` address
//! (`/mcp` is the one resource; the root would describe the origin, RFC 9728 §3.3, and
//! answers 404) and RFC 8414 authorization-server metadata. Both are public and
//! unauthenticated.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use etappe_app::App;
use etappe_app::authorization::AuthorizationService;
use etappe_app::links::issuer;

/// `OPTIONS`: answered by the CORS layer; this is only the route's placeholder.
pub(super) async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// `GET /.well-known/oauth-protected-resource/mcp`.
pub(super) async fn protected_resource(State(app): State<App>) -> Response {
    let public = issuer(&app);
    axum::Json(json!({
        "resource": AuthorizationService::resource_of(&public),
        "authorization_servers": [public],
        "scopes_supported": ["trips:read", "trips:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Etappe",
    }))
    .into_response()
}

/// `GET /.well-known/oauth-authorization-server`.
pub(super) async fn authorization_server(State(app): State<App>) -> Response {
    let public = issuer(&app);
    axum::Json(json!({
        "issuer": public,
        "authorization_endpoint": format!("{public}/oauth/authorize"),
        "token_endpoint": format!("{public}/oauth/token"),
        "registration_endpoint": format!("{public}/oauth/register"),
        "revocation_endpoint": format!("{public}/oauth/revoke"),
        "scopes_supported": ["trips:read", "trips:write"],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}
