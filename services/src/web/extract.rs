//! What the people's routes read from a request: the person (bearer token or session
//! cookie, under the budgets REST spends from), a small body as JSON or as an HTML form, and
//! the peer's address.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde_json::{Map, Value};

use crate::auth::Authenticated;
use crate::problem::Problem;
use etappe_app::{App, AppError};

/// The largest body these routes read (an address, a label, a confirmation).
const MAX_BODY: usize = 16 * 1024;

/// The authenticated person: a bearer token or the session cookie. A cookie write has
/// passed the CSRF rule with the `X-CSRF-Token` header, except on the routes that read
/// [`FormCaller`] instead.
#[derive(Debug, Clone)]
pub(super) struct Person(pub Authenticated);

async fn admit(parts: &Parts, state: &App, csrf_checked: bool) -> Result<Authenticated, AppError> {
    crate::auth::admit_request(state, &parts.method, &parts.headers, csrf_checked).await
}

impl FromRequestParts<App> for Person {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &App) -> Result<Self, Self::Rejection> {
        admit(parts, state, false)
            .await
            .map(Person)
            .map_err(Problem::from)
    }
}

/// The person of a route that may be posted by an HTML form: the CSRF rule is applied by
/// the handler, once the body (and its `csrf` field) is read.
#[derive(Debug, Clone)]
pub(super) struct FormCaller(pub Option<Authenticated>);

impl FromRequestParts<App> for FormCaller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &App) -> Result<Self, Self::Rejection> {
        match admit(parts, state, true).await {
            Ok(caller) => Ok(FormCaller(Some(caller))),
            Err(AppError::Unauthenticated) => Ok(FormCaller(None)),
            Err(other) => Err(other.into()),
        }
    }
}

/// A body of fields: a JSON object, or an HTML form (`application/x-www-form-urlencoded`),
/// or nothing (no fields).
#[derive(Debug, Clone, Default)]
pub(super) struct Fields {
    pub map: Map<String, Value>,
    /// Whether the body came from an HTML form (its answer is a page, not JSON).
    pub form: bool,
}

impl Fields {
    /// A text field.
    pub(super) fn text(&self, name: &str) -> Option<&str> {
        self.map.get(name).and_then(Value::as_str)
    }
}

fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

impl FromRequest<App> for Fields {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &App) -> Result<Self, Self::Rejection> {
        let kind = media_type(request.headers());
        let bytes = Bytes::from_request(request, state).await.map_err(|_| {
            AppError::MalformedBody(format!(
                "the body could not be read (at most {MAX_BODY} bytes)"
            ))
        })?;
        if bytes.len() > MAX_BODY {
            return Err(AppError::MalformedBody(format!(
                "the body may be at most {MAX_BODY} bytes"
            ))
            .into());
        }
        if bytes.is_empty() {
            return Ok(Fields::default());
        }
        match kind.as_str() {
            "application/json" => match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(map)) => Ok(Fields { map, form: false }),
                Ok(_) => {
                    Err(AppError::MalformedBody("the body must be a JSON object".into()).into())
                }
                Err(e) => Err(AppError::MalformedBody(format!(
                    "the body is not valid JSON (line {}, column {})",
                    e.line(),
                    e.column()
                ))
                .into()),
            },
            "application/x-www-form-urlencoded" => Ok(Fields {
                map: url::form_urlencoded::parse(&bytes)
                    .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
                    .collect(),
                form: true,
            }),
            _ => Err(AppError::MalformedBody(
                "send the body as application/json (or an HTML form)".into(),
            )
            .into()),
        }
    }
}

/// The address of the peer (the TCP connection's; behind a proxy, the proxy's).
#[derive(Debug, Clone, Copy)]
pub(super) struct Peer(pub std::net::IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0.ip()),
        ))
    }
}
