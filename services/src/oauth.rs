//! The authorization server's transport: OAuth 2.1 for agents (MCP hosts), beside `http`
//! and `mcp`, taking the `App` and importing neither. Its endpoints speak OAuth's wire
//! format (form-encoded requests, `{"error", "error_description"}` answers, redirects),
//! not the REST API's problem+json, so they are not in the OpenAPI document: their
//! contract is RFC 8414's metadata, served at `/.well-known/oauth-authorization-server`.
//!
//! - `metadata`: RFC 9728 protected-resource and RFC 8414 authorization-server metadata;
//! - `authorize`: the authorization request, the consent page and the person's decision;
//! - `token`: code exchange and refresh, dynamic registration, revocation;
//! - `agents`: the person's list of authorized agents, each revocable (REST, in the
//!   OpenAPI document through `openapi`).
//!
//! The discovery, token, registration and revocation endpoints answer any origin
//! (`Access-Control-Allow-Origin: *`, never with credentials): browser-based MCP clients
//! call them cross-origin, and none of them reads a cookie.

mod agents;
mod authorize;
mod html;
mod metadata;
pub mod openapi;
mod schemas;
mod session;
mod token;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use etappe_app::App;
use etappe_app::authorization::OAuthError;

/// The address a request came from (rate limits).
fn peer(request_extensions: &axum::http::Extensions) -> String {
    request_extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |c| c.0.ip().to_string())
}

/// An OAuth JSON error (RFC 6749 §5.2): 400 (`invalid_client` too: the clients served
/// are public and authenticate with nothing, and RFC 6749 §5.2 keeps 401 for a client that
/// tried the `Authorization` header, which the token endpoint answers itself), 429 with
/// `Retry-After` over a rate limit, 500 for ours.
pub(crate) fn error_response(error: &OAuthError) -> Response {
    let status = match error {
        OAuthError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        OAuthError::Server(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    let mut response = (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(json!({"error": error.code(), "error_description": error.to_string()})),
    )
        .into_response();
    if let OAuthError::RateLimited {
        retry_after_secs, ..
    } = error
        && let Ok(value) = HeaderValue::from_str(&retry_after_secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// Any origin may call (no credentials): answers preflights and marks every answer.
async fn open_cors(request: Request, next: Next) -> Response {
    if request.method() == Method::OPTIONS {
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, mcp-protocol-version"),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("86400"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        return response;
    }
    let mut response = next.run(request).await;
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// The authorization server's routes.
pub fn router(app: App) -> Router {
    let open = Router::new()
        // Only the path-inserted document (RFC 9728 §3.1): the one protected resource is
        // `/mcp`, and a document at the root would describe the origin (§3.3), which is not
        // one. Clients find this one through the 401's `resource_metadata`.
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(metadata::protected_resource).options(metadata::preflight),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::authorization_server).options(metadata::preflight),
        )
        .route(
            "/oauth/token",
            post(token::token).options(metadata::preflight),
        )
        .route(
            "/oauth/register",
            post(token::register).options(metadata::preflight),
        )
        .route(
            "/oauth/revoke",
            post(token::revoke).options(metadata::preflight),
        )
        .route_layer(middleware::from_fn(open_cors));
    let pages = Router::new()
        .route(
            "/oauth/authorize",
            get(authorize::authorize).post(authorize::decide),
        )
        .route("/users/me/agents", get(agents::list))
        .route("/agents", get(agents::page))
        .route("/agents/{id}/revoke", post(agents::revoke_from_page))
        .route(
            "/users/me/agents/{id}",
            axum::routing::delete(agents::revoke),
        );
    open.merge(pages).with_state(app)
}
