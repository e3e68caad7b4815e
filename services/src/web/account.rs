//! The account routes, `/users/me*`: REST, over a bearer token or the session cookie (a
//! cookie write passes the CSRF rule). Creating a token and deleting the account need the
//! session: a person, not a script.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use uuid::Uuid;

use super::extract::{Fields, Person};
use super::schemas::*;
use crate::problem::Problem;
use etappe_app::identity::Scope;
use etappe_app::{App, AppError};

fn id_of(raw: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(raw).map_err(|_| AppError::NoSuchCredential)
}

/// `GET /users/me`.
#[utoipa::path(get, path = "/users/me", operation_id = "getAccount", tag = "account",
    summary = "My account", description = "Bearer token or session cookie. The email, sessions, tokens and agents; with the cookie, the csrfToken the page sends back on writes.",
    responses((status = 200, description = "The account", body = AccountSchema),
        AccountUnauthorized, AccountRateLimited))]
pub(super) async fn me(
    State(app): State<App>,
    Person(caller): Person,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let me = app
        .accounts()
        .me(&caller.principal, caller.session.as_ref())
        .await?;
    let mut response = axum::Json(me).into_response();
    // The page reads this on load: the cookie's Max-Age slides with the session's expiry.
    if caller.session.is_some()
        && let Some(value) = crate::auth::cookie(&headers, app.accounts().web.cookie_name())
        && let Ok(value) = HeaderValue::from_str(&super::session_cookie(&app, Some(value)))
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `GET /users/me/sessions`.
#[utoipa::path(get, path = "/users/me/sessions", operation_id = "listSessions", tag = "account",
    summary = "My live sessions",
    responses((status = 200, description = "Newest first", body = SessionListSchema),
        AccountUnauthorized, AccountRateLimited))]
pub(super) async fn sessions(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, Problem> {
    let sessions = app.accounts().sessions(&caller.principal).await?;
    Ok(axum::Json(json!({
        "items": sessions,
        "current": caller.session.as_ref().map(|s| s.session_id),
    }))
    .into_response())
}

/// `DELETE /users/me/sessions/{id}`.
#[utoipa::path(delete, path = "/users/me/sessions/{id}", operation_id = "revokeSession", tag = "account",
    summary = "Revoke a session", description = "Its cookie stops working at once, on every replica.",
    params(("id" = uuid::Uuid, Path, description = "The session's id")),
    responses((status = 204, description = "Revoked"),
        AccountUnauthorized, AccountForbidden, AccountNotFound, AccountRateLimited))]
pub(super) async fn revoke_session(
    State(app): State<App>,
    Person(caller): Person,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    app.accounts()
        .revoke_session(&caller.principal, id_of(&id)?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /users/me/tokens`.
#[utoipa::path(get, path = "/users/me/tokens", operation_id = "listAccessTokens", tag = "account",
    summary = "My personal access tokens", description = "Never their values.",
    responses((status = 200, description = "Newest first, revoked ones included", body = TokenListSchema),
        AccountUnauthorized, AccountRateLimited))]
pub(super) async fn tokens(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, Problem> {
    let me = app.accounts().me(&caller.principal, None).await?;
    Ok(axum::Json(json!({"items": me.tokens})).into_response())
}

/// `POST /users/me/tokens {label, scopes}`: 201 with the token, shown this once.
#[utoipa::path(post, path = "/users/me/tokens", operation_id = "createAccessToken", tag = "account",
    summary = "Make a personal access token",
    description = "Needs the session cookie (a token cannot mint tokens: session_required). The value is shown this once.",
    request_body(content = CreateTokenSchema, content_type = "application/json"),
    responses((status = 201, description = "The token", body = CreatedTokenSchema),
        AccountBadRequest, AccountUnauthorized, AccountForbidden, AccountInvalid, AccountRateLimited))]
pub(super) async fn create_token(
    State(app): State<App>,
    Person(caller): Person,
    fields: Fields,
) -> Result<Response, Problem> {
    let unknown: Vec<String> = fields
        .map
        .keys()
        .filter(|k| !matches!(k.as_str(), "label" | "scopes"))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(
            AppError::Input(etappe_domain::trip::InputError::UnknownFields {
                unknown,
                accepted: vec!["label".into(), "scopes".into()],
            })
            .into(),
        );
    }
    let invalid = |field: &str, message: &str| {
        AppError::Input(etappe_domain::trip::InputError::Invalid(vec![
            etappe_domain::trip::FieldError::new(field, message),
        ]))
    };
    let label = match fields.map.get("label") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(invalid("label", "must be a string").into()),
    };
    let scopes: Vec<Scope> = match fields.map.get("scopes") {
        None | Some(Value::Null) => Scope::ALL.to_vec(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().and_then(|s| s.parse().ok()))
            .collect::<Option<Vec<Scope>>>()
            .ok_or_else(|| invalid("scopes", "a list of scopes: trips:read, trips:write"))?,
        Some(_) => {
            return Err(invalid("scopes", "a list of scopes: trips:read, trips:write").into());
        }
    };
    let created = app
        .accounts()
        .create_token(caller.session.as_ref(), label, &scopes)
        .await?;
    let mut response = (StatusCode::CREATED, axum::Json(created)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `DELETE /users/me/tokens/{id}`.
#[utoipa::path(delete, path = "/users/me/tokens/{id}", operation_id = "revokeAccessToken", tag = "account",
    summary = "Revoke a personal access token",
    description = "It stops working at once here, within 30 s on other replicas.",
    params(("id" = uuid::Uuid, Path, description = "The token's id")),
    responses((status = 204, description = "Revoked"),
        AccountUnauthorized, AccountForbidden, AccountNotFound, AccountRateLimited))]
pub(super) async fn revoke_token(
    State(app): State<App>,
    Person(caller): Person,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    app.accounts()
        .revoke_token(&caller.principal, id_of(&id)?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /users/me/export`: a download.
#[utoipa::path(get, path = "/users/me/export", operation_id = "exportAccount", tag = "account",
    summary = "Export my account",
    description = "A JSON download: the account, its sessions, tokens and audit trail, and every trip it ever had with its whole event history.",
    responses((status = 200, description = "The export (Content-Disposition: attachment)", body = Object,
            headers(("Content-Disposition" = String, description = "attachment; filename=\"etappe-account.json\""))),
        AccountUnauthorized, AccountRateLimited))]
pub(super) async fn export(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, Problem> {
    let document = app.accounts().export(&caller.principal).await?;
    let mut response = axum::Json(document).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"etappe-account.json\""),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `DELETE /users/me {confirm: <the account's e-mail address>}`.
#[utoipa::path(delete, path = "/users/me", operation_id = "deleteAccount", tag = "account",
    summary = "Delete my account",
    description = "Needs the session cookie and the account's e-mail address as confirm. Deletes every trip (events, read models, share links, files), every session and token at once, and the account; leaves an audit row without personal data.",
    request_body(content = DeleteAccountSchema, content_type = "application/json"),
    responses((status = 200, description = "Deleted", body = DeletedSchema),
        AccountBadRequest, AccountUnauthorized, AccountForbidden, AccountInvalid, AccountRateLimited))]
pub(super) async fn delete(
    State(app): State<App>,
    Person(caller): Person,
    fields: Fields,
) -> Result<Response, Problem> {
    let trips = app
        .accounts()
        .delete(caller.session.as_ref(), fields.text("confirm"))
        .await?;
    let mut response = (
        StatusCode::OK,
        axum::Json(json!({"deleted": true, "tripsDeleted": trips})),
    )
        .into_response();
    // The session is gone with the account: the browser may forget its cookie too.
    if let Ok(value) = HeaderValue::from_str(&super::session_cookie(&app, None)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// `GET /users/me/audit?limit=&offset=`: newest first.
#[utoipa::path(get, path = "/users/me/audit", operation_id = "listAudit", tag = "account",
    summary = "What happened to my credentials",
    params(("limit" = Option<u32>, Query, description = "1 to 200 (default 50)", minimum = 0, maximum = 200),
        ("offset" = Option<u32>, Query, description = "Rows to skip", minimum = 0, maximum = 1000000)),
    responses((status = 200, description = "Newest first", body = AuditPageSchema),
        AccountBadRequest, AccountUnauthorized, AccountRateLimited))]
pub(super) async fn audit(
    State(app): State<App>,
    Person(caller): Person,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, Problem> {
    let number = |name: &str, default: u32, max: u32| -> Result<u32, AppError> {
        match query.get(name) {
            None => Ok(default),
            Some(raw) => raw
                .parse::<u32>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| {
                    AppError::InvalidQuery(vec![etappe_domain::trip::FieldError::new(
                        name,
                        format!("a whole number from 0 to {max}"),
                    )])
                }),
        }
    };
    let limit = number("limit", 50, 200)?.max(1);
    let offset = number("offset", 0, 1_000_000)?;
    let (items, total) = app
        .accounts()
        .audit(&caller.principal, limit, offset)
        .await?;
    Ok(
        axum::Json(json!({"items": items, "total": total, "limit": limit, "offset": offset}))
            .into_response(),
    )
}
