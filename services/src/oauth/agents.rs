//! The agents a person authorized: `GET /users/me/agents` (JSON) and
//! `DELETE /users/me/agents/{id}` (revokes the grant and every token of it, at once, on
//! every replica: each request looks its token up). Authenticated like the account routes:
//! a personal access token, or the session cookie (a cookie write needs our Origin and the
//! `X-CSRF-Token`). An agent's own token is refused here, as on every REST route. For
//! people, `GET /agents` is the same list as a page, each agent with a Revoke button.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::html::{esc, page as html_page};
use crate::auth::Authenticated;
use crate::problem::Problem;
use etappe_app::{App, AppError};

async fn person(
    app: &App,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Authenticated, AppError> {
    if crate::auth::bearer_token(headers).is_some_and(etappe_app::authorization::is_agent_token) {
        return Err(AppError::AgentTokenOnRest);
    }
    crate::auth::admit_request(app, method, headers, false).await
}

fn problem(error: &AppError) -> Response {
    Problem::from(error).into_response()
}

/// `GET /users/me/agents`.
#[utoipa::path(get, path = "/users/me/agents", operation_id = "listAgents", tag = "account",
    summary = "The agents I authorized",
    description = "Bearer token or session cookie. Each live grant: the client's name and id, the scopes, when it was authorized and last used (to within 5 minutes).",
    responses((status = 200, description = "Newest first", body = super::schemas::AgentListSchema),
        super::schemas::AgentsUnauthorized, super::schemas::AgentsRateLimited))]
pub(super) async fn list(State(app): State<App>, headers: HeaderMap) -> Response {
    let caller = match person(&app, &Method::GET, &headers).await {
        Ok(c) => c,
        Err(e) => return problem(&e),
    };
    match app.authorization().agents(caller.principal.user_id).await {
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
        super::schemas::AgentsUnauthorized, super::schemas::AgentsForbidden,
        super::schemas::AgentsNotFound, super::schemas::AgentsRateLimited))]
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
        .authorization()
        .revoke_agent(caller.principal.user_id, grant)
        .await
    {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => problem(&AppError::NoSuchCredential),
        Err(e) => problem(&AppError::Unavailable(e.to_string())),
    }
}

/// `GET /agents`: the agents page of the signed-in person, each agent with a Revoke button
/// (a form POST carrying the session's CSRF token). Without a session: to the login page.
pub(super) async fn page(State(app): State<App>, headers: HeaderMap) -> Response {
    let Some(session) = super::session::signed_in(&app, &headers).await else {
        return super::authorize::redirect(
            StatusCode::FOUND,
            &super::session::login_url("/agents"),
        );
    };
    let agents = match app.authorization().agents(session.user_id).await {
        Ok(a) => a,
        Err(e) => return problem(&AppError::Unavailable(e.to_string())),
    };
    let rows: String = if agents.is_empty() {
        "<p>No agent is authorized to use your account.</p>".to_owned()
    } else {
        agents
            .iter()
            .map(|a| {
                format!(
                    "<li><strong>{name}</strong> <code>{id}</code><br>may: {scopes}<br>authorized {created}, last used {used}\
                     <form method=\"post\" action=\"/agents/{grant}/revoke\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <button type=\"submit\">Revoke</button></form></li>",
                    name = esc(&a.client_name),
                    id = esc(&a.client_id),
                    scopes = esc(&a.scopes.join(", ")),
                    created = a.created_at.format("%Y-%m-%d %H:%M UTC"),
                    used = a.last_used_at.map_or_else(|| "never".to_owned(), |t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
                    grant = a.grant_id,
                    csrf = esc(&session.csrf),
                )
            })
            .collect::<String>()
    };
    html_page(
        StatusCode::OK,
        "Your agents",
        &format!("<h1>Agents that may use your account</h1><ul>{rows}</ul>"),
    )
}

#[derive(serde::Deserialize)]
struct RevokeForm {
    csrf: Option<String>,
}

/// `POST /agents/{id}/revoke` (the page's form): revokes, then back to the page (303).
pub(super) async fn revoke_from_page(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Some(session) = super::session::signed_in(&app, &headers).await else {
        return super::authorize::redirect(
            StatusCode::SEE_OTHER,
            &super::session::login_url("/agents"),
        );
    };
    let token = serde_urlencoded::from_bytes::<RevokeForm>(&body)
        .ok()
        .and_then(|f| f.csrf)
        .unwrap_or_default();
    if !super::session::csrf_holds(&app, &headers, &session, &token) {
        return html_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "<h1>This did not come from your agents page</h1><p>Nothing was revoked.</p>",
        );
    }
    if let Ok(grant) = uuid::Uuid::parse_str(&id)
        && let Err(e) = app
            .authorization()
            .revoke_agent(session.user_id, grant)
            .await
    {
        return problem(&AppError::Unavailable(e.to_string()));
    }
    (
        StatusCode::SEE_OTHER,
        [(axum::http::header::LOCATION, "/agents")],
    )
        .into_response()
}
