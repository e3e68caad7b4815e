//! Request extractors: who is calling, the request's context, a JSON object body, a trip id
//! from the path, and the `If-Match` precondition. Each refuses with a problem document.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_events::ids::TripId;
use serde_json::{Map, Value};

use super::AppState;
use super::problem::Problem;
use crate::app::trips::BaseVersion;
use crate::app::{AppError, RequestContext};
use crate::identity::Principal;

/// The largest JSON body accepted (settings are small; uploads have their own route).
pub(super) const MAX_JSON_BODY: usize = 64 * 1024;

/// The authenticated caller, from `Authorization: Bearer etp_…`.
#[derive(Debug, Clone)]
pub(super) struct Caller(pub Principal);

impl FromRequestParts<AppState> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or(AppError::Unauthenticated)?;
        let principal = state
            .identity
            .authenticate(token)
            .await?
            .ok_or(AppError::Unauthenticated)?;
        Ok(Caller(principal))
    }
}

impl FromRequestParts<AppState> for RequestContext {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<RequestContext>()
            .cloned()
            .unwrap_or_default())
    }
}

/// A trip id from the path. A malformed id cannot name anybody's trip: 404, like a missing one.
#[derive(Debug, Clone, Copy)]
pub(super) struct TripPath(pub TripId);

impl FromRequestParts<AppState> for TripPath {
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(raw) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|_| AppError::NotFound)?;
        raw.parse().map(TripPath).map_err(|_| AppError::NotFound)
    }
}

/// A JSON object body (`application/json` or `application/merge-patch+json`).
#[derive(Debug, Clone)]
pub(super) struct JsonObject(pub Map<String, Value>);

/// Why a body was refused before it reached a service.
#[derive(Debug)]
pub(super) enum BodyRejection {
    UnsupportedMediaType,
    TooLarge,
    Malformed(String),
}

impl IntoResponse for BodyRejection {
    fn into_response(self) -> Response {
        match self {
            Self::UnsupportedMediaType => Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Unsupported media type",
                "send the body as application/json",
            )
            .into_response(),
            Self::TooLarge => Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "Payload too large",
                format!("a JSON body may be at most {MAX_JSON_BODY} bytes"),
            )
            .into_response(),
            Self::Malformed(detail) => AppError::MalformedBody(detail).into_response(),
        }
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|m| m == "application/json" || m == "application/merge-patch+json")
}

impl FromRequest<AppState> for JsonObject {
    type Rejection = BodyRejection;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        if !is_json(request.headers()) {
            return Err(BodyRejection::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|_| BodyRejection::TooLarge)?;
        if bytes.len() > MAX_JSON_BODY {
            return Err(BodyRejection::TooLarge);
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(JsonObject(map)),
            Ok(_) => Err(BodyRejection::Malformed(
                "the body must be a JSON object".into(),
            )),
            Err(e) => Err(BodyRejection::Malformed(format!(
                "the body is not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ))),
        }
    }
}

/// A JSON object body that may be absent: no body (or an empty one) reads as `{}`.
#[derive(Debug, Clone)]
pub(super) struct OptionalJsonObject(pub Map<String, Value>);

impl FromRequest<AppState> for OptionalJsonObject {
    type Rejection = BodyRejection;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let empty = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() == b"0")
            || (request.headers().get(header::CONTENT_TYPE).is_none()
                && request.headers().get(header::TRANSFER_ENCODING).is_none());
        if empty {
            return Ok(OptionalJsonObject(Map::new()));
        }
        JsonObject::from_request(request, state)
            .await
            .map(|JsonObject(map)| OptionalJsonObject(map))
    }
}

/// The `If-Match` precondition of a structural write. A strong ETag `"N"` names the version
/// the caller read; `*` means whatever is current; `None` when the header is missing (the
/// service answers 428, after the guards that come first).
#[derive(Debug, Clone, Copy)]
pub(super) struct IfMatch(pub Option<BaseVersion>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let Some(raw) = parts.headers.get(header::IF_MATCH) else {
            return Ok(IfMatch(None));
        };
        let text = raw.to_str().map_err(|_| malformed_if_match())?.trim();
        if text == "*" {
            return Ok(IfMatch(Some(BaseVersion::Current)));
        }
        let version = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .and_then(|t| t.parse::<u64>().ok())
            .ok_or_else(malformed_if_match)?;
        Ok(IfMatch(Some(BaseVersion::Exact(version))))
    }
}

fn malformed_if_match() -> AppError {
    AppError::BadHeader(
        "If-Match must be the strong ETag read from the trip (for example \"3\"), or *".into(),
    )
}

/// The strong ETag of a trip version.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}
