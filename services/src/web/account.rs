//! The account routes, `/users/me*`: REST, over a bearer token or the session cookie (a
//! cookie write passes the CSRF rule). Creating a token and deleting the account need the
//! session: a person, not a script.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use uuid::Uuid;

use super::extract::{Fields, Person};
use crate::app::{App, AppError};
use crate::identity::Scope;

fn id_of(raw: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(raw).map_err(|_| AppError::NoSuchCredential)
}

/// `GET /users/me`.
pub(super) async fn me(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, AppError> {
    let me = app
        .accounts
        .me(&caller.principal, caller.session.as_ref())
        .await?;
    Ok(axum::Json(me).into_response())
}

/// `GET /users/me/sessions`.
pub(super) async fn sessions(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, AppError> {
    let sessions = app.accounts.sessions(&caller.principal).await?;
    Ok(axum::Json(json!({
        "items": sessions,
        "current": caller.session.as_ref().map(|s| s.session_id),
    }))
    .into_response())
}

/// `DELETE /users/me/sessions/{id}`.
pub(super) async fn revoke_session(
    State(app): State<App>,
    Person(caller): Person,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    app.accounts
        .revoke_session(&caller.principal, id_of(&id)?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /users/me/tokens`.
pub(super) async fn tokens(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, AppError> {
    let me = app.accounts.me(&caller.principal, None).await?;
    Ok(axum::Json(json!({"items": me.tokens})).into_response())
}

/// `POST /users/me/tokens {label, scopes}`: 201 with the token, shown this once.
pub(super) async fn create_token(
    State(app): State<App>,
    Person(caller): Person,
    fields: Fields,
) -> Result<Response, AppError> {
    let unknown: Vec<String> = fields
        .map
        .keys()
        .filter(|k| !matches!(k.as_str(), "label" | "scopes"))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(AppError::Input(
            etappe_domain::trip::InputError::UnknownFields {
                unknown,
                accepted: vec!["label".into(), "scopes".into()],
            },
        ));
    }
    let invalid = |field: &str, message: &str| {
        AppError::Input(etappe_domain::trip::InputError::Invalid(vec![
            etappe_domain::trip::FieldError::new(field, message),
        ]))
    };
    let label = match fields.map.get("label") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(invalid("label", "must be a string")),
    };
    let scopes: Vec<Scope> = match fields.map.get("scopes") {
        None | Some(Value::Null) => Scope::ALL.to_vec(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().and_then(|s| s.parse().ok()))
            .collect::<Option<Vec<Scope>>>()
            .ok_or_else(|| invalid("scopes", "a list of scopes: trips:read, trips:write"))?,
        Some(_) => {
            return Err(invalid(
                "scopes",
                "a list of scopes: trips:read, trips:write",
            ));
        }
    };
    let created = app
        .accounts
        .create_token(caller.session.as_ref(), label, &scopes)
        .await?;
    let mut response = (StatusCode::CREATED, axum::Json(created)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `DELETE /users/me/tokens/{id}`.
pub(super) async fn revoke_token(
    State(app): State<App>,
    Person(caller): Person,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    app.accounts
        .revoke_token(&caller.principal, id_of(&id)?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /users/me/export`: a download.
pub(super) async fn export(
    State(app): State<App>,
    Person(caller): Person,
) -> Result<Response, AppError> {
    let document = app.accounts.export(&caller.principal).await?;
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
pub(super) async fn delete(
    State(app): State<App>,
    Person(caller): Person,
    fields: Fields,
) -> Result<Response, AppError> {
    let trips = app
        .accounts
        .delete(caller.session.as_ref(), fields.text("confirm"))
        .await?;
    let mut response = (
        StatusCode::OK,
        axum::Json(json!({"deleted": true, "tripsDeleted": trips})),
    )
        .into_response();
    // The session is gone with the account: the browser may forget its cookie too.
    let name = app.accounts.web.cookie_name();
    let secure = if app.accounts.web.secure {
        "; Secure"
    } else {
        ""
    };
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// `GET /users/me/audit?limit=&offset=`: newest first.
pub(super) async fn audit(
    State(app): State<App>,
    Person(caller): Person,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
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
    let (items, total) = app.accounts.audit(&caller.principal, limit, offset).await?;
    Ok(
        axum::Json(json!({"items": items, "total": total, "limit": limit, "offset": offset}))
            .into_response(),
    )
}
