//! The agents a person authorized: `GET /users/me/agents` (JSON) and
//! `DELETE /users/me/agents/{id}` (revokes the grant and every token of it, at once, on
//! every replica: each request looks its token up). Authenticated like the account routes:
//! a personal access token, or the session cookie (a cookie write needs our Origin and the
//! `X-CSRF-Token`). An agent's own token is refused here, as on every REST route.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::app::{App, AppError};
use crate::auth::Authenticated;
use crate::problem::Problem;

async fn person(
    app: &App,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Authenticated, AppError> {
    if crate::auth::bearer_token(headers)
        .is_some_and(|t| t.starts_with("eta_") || t.starts_with("etr_"))
    {
        return Err(AppError::AgentTokenOnRest);
    }
    let caller = crate::auth::authenticate_request(app, method, headers, false)
        .await?
        .ok_or(AppError::Unauthenticated)?;
    let key = crate::budgets::key_of(&[&caller.principal.user_id.to_string(), &caller.credential]);
    let budget = if method.is_safe() {
        app.budgets.settings.reads()
    } else {
        app.budgets.settings.changes()
    };
    app.budgets
        .admit(&key, &[budget])
        .await
        .map_err(AppError::RateLimited)?;
    Ok(caller)
}

fn problem(error: &AppError) -> Response {
    Problem::from(error).into_response()
}

/// `GET /users/me/agents`.
#[utoipa::path(get, path = "/users/me/agents", operation_id = "listAgents", tag = "account",
    summary = "The agents I authorized",
    description = "Bearer token or session cookie. Each live grant: the client's name and id, the scopes, when it was authorized and last used (to within 5 minutes).",
    responses((status = 200, description = "Newest first", body = super::openapi::AgentListSchema),
        super::openapi::AgentsUnauthorized, super::openapi::AgentsRateLimited))]
pub(super) async fn list(State(app): State<App>, headers: HeaderMap) -> Response {
    let caller = match person(&app, &Method::GET, &headers).await {
        Ok(c) => c,
        Err(e) => return problem(&e),
    };
    match app.authorization.agents(caller.principal.user_id).await {
        Ok(items) => axum::Json(json!({"items": items})).into_response(),
        Err(e) => problem(&AppError::Unavailable(e.to_string())),
    }
}

/// `DELETE /users/me/agents/{id}`.
#[utoipa::path(delete, path = "/users/me/agents/{id}", operation_id = "revokeAgent", tag = "account",
    summary = "Revoke an agent",
    description = "Ends the grant and every access and refresh token of it, at once.",
    params(("id" = uuid::Uuid, Path, description = "The grant's id (from GET /users/me/agents)")),
    responses((status = 204, description = "Revoked"),
        super::openapi::AgentsUnauthorized, super::openapi::AgentsForbidden,
        super::openapi::AgentsNotFound, super::openapi::AgentsRateLimited))]
pub(super) async fn revoke(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let caller = match person(&app, &Method::DELETE, &headers).await {
        Ok(c) => c,
        Err(e) => return problem(&e),
    };
    let Ok(grant) = uuid::Uuid::parse_str(&id) else {
        return problem(&AppError::NoSuchCredential);
    };
    match app
        .authorization
        .revoke_agent(caller.principal.user_id, grant)
        .await
    {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => problem(&AppError::NoSuchCredential),
        Err(e) => problem(&AppError::Unavailable(e.to_string())),
    }
}
