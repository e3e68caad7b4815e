//! Request extractors: who is calling, the request's context, a JSON object body, a trip id
//! or a day from the path, the `If-Match` precondition, and all of a day's edit at once. Each refuses with a problem document.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_domain::ids::TripId;
use serde_json::{Map, Value};

use super::App;
use super::problem::Problem;
use etappe_app::trips::BaseVersion;
use etappe_app::{AppError, RequestContext};

/// The largest JSON body accepted (settings are small; uploads have their own route).
pub(super) const MAX_JSON_BODY: usize = 64 * 1024;

/// The authenticated caller of a REST request: `Authorization: Bearer etp_…`, or the session
/// cookie (a write then passes the CSRF rule of `auth`), with the request's context as the
/// edge set it. The application's [`etappe_app::Caller`], read the way this transport reads it
/// (it derefs to it, so a handler hands `&caller` to a service as it is).
#[derive(Clone, Debug)]
pub(super) struct Caller(pub etappe_app::Caller);

impl std::ops::Deref for Caller {
    type Target = etappe_app::Caller;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl FromRequestParts<App> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &App) -> Result<Self, Self::Rejection> {
        if crate::auth::bearer_token(&parts.headers)
            .is_some_and(etappe_app::authorization::is_agent_token)
        {
            return Err(AppError::AgentTokenOnRest.into());
        }
        // A change spends from the budget MCP spends from too (the same key), so switching
        // transport does not reset it.
        let caller =
            crate::auth::admit_request(state, &parts.method, &parts.headers, false).await?;
        Ok(Caller(etappe_app::Caller {
            principal: caller.principal,
            context: request_context(parts),
        }))
    }
}

/// The address of the peer the request came from (the TCP connection's; a proxy in front
/// is one peer: budgets then count per proxy unless it is given its own limits).
#[derive(Debug, Clone, Copy)]
pub(super) struct PeerAddress(pub std::net::IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for PeerAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let address = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
        Ok(PeerAddress(address))
    }
}

/// The request's id and trace, as the edge layer set them.
fn request_context(parts: &Parts) -> RequestContext {
    parts
        .extensions
        .get::<RequestContext>()
        .cloned()
        .unwrap_or_default()
}

/// A trip id from the path. A malformed id cannot name anybody's trip: 404, like a missing one.
#[derive(Debug, Clone, Copy)]
pub(super) struct TripPath(pub TripId);

impl FromRequestParts<App> for TripPath {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &App) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(raw) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|_| AppError::NotFound)?;
        raw.parse().map(TripPath).map_err(|_| {
            // `/trips/{id}.gpx` is a file to read: another method on it is a 405, not a 404.
            let allowed = super::allowed_methods(parts.uri.path());
            if allowed.is_empty() || allowed.iter().any(|m| m == parts.method.as_str()) {
                AppError::NotFound
            } else {
                AppError::MethodNotAllowed {
                    method: parts.method.to_string(),
                    allowed: allowed.join(", "),
                }
            }
            .into()
        })
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
    TimedOut,
}

/// Whether a body error is the body deadline passing (anywhere in its chain of causes).
pub(super) fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The problem of a body that did not arrive within the deadline.
pub(super) fn body_timed_out() -> Response {
    Problem::new(
        StatusCode::REQUEST_TIMEOUT,
        "body_timeout",
        "Request body timeout",
        "the request body did not arrive within the server's deadline (ETAPPE_BODY_TIMEOUT_SECS)",
    )
    .into_response()
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
            Self::Malformed(detail) => {
                Problem::from(AppError::MalformedBody(detail)).into_response()
            }
            Self::TimedOut => body_timed_out(),
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

impl FromRequest<App> for JsonObject {
    type Rejection = BodyRejection;

    async fn from_request(request: Request, state: &App) -> Result<Self, Self::Rejection> {
        if !is_json(request.headers()) {
            return Err(BodyRejection::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(request, state).await.map_err(|e| {
            if is_body_timeout(&e) {
                BodyRejection::TimedOut
            } else {
                BodyRejection::TooLarge
            }
        })?;
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

impl FromRequest<App> for OptionalJsonObject {
    type Rejection = BodyRejection;

    async fn from_request(request: Request, state: &App) -> Result<Self, Self::Rejection> {
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
/// the caller read; a list (`"3", "4"`) is evaluated, matching when it holds the current
/// version; `*` means whatever is current; `None` when the header is missing (the service
/// answers 428, after the guards that come first). A weak tag never matches (RFC 9110 §13.1.1
/// compares strongly), so it is refused by name.
#[derive(Debug, Clone)]
pub(super) struct IfMatch(pub Option<BaseVersion>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let values = parts.headers.get_all(header::IF_MATCH);
        // An empty field (`If-Match:` or only commas) names no version: the precondition is
        // missing, as if the header were (428), not malformed (400).
        let says_nothing = values.iter().all(|raw| {
            raw.to_str()
                .is_ok_and(|text| text.split(',').all(|t| t.trim().is_empty()))
        });
        if says_nothing {
            return Ok(IfMatch(None));
        }
        let mut versions = Vec::new();
        for raw in values {
            let text = raw.to_str().map_err(|_| malformed_if_match())?;
            for tag in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                if tag == "*" {
                    return Ok(IfMatch(Some(BaseVersion::Current)));
                }
                if tag.starts_with("W/") {
                    return Err(AppError::BadHeader(
                        "If-Match compares strongly: a weak tag (W/\"…\") never matches; send the strong ETag read from the trip".into(),
                    ).into());
                }
                let version = tag
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .and_then(|t| t.parse::<u64>().ok())
                    .ok_or_else(malformed_if_match)?;
                versions.push(version);
            }
        }
        Ok(IfMatch(Some(match versions.as_slice() {
            [] => return Err(malformed_if_match().into()),
            [one] => BaseVersion::Exact(*one),
            _ => BaseVersion::AnyOf(versions),
        })))
    }
}

/// `Prefer: handling=strict` (RFC 7240) on an edit of the days: ask before removing what a
/// person made. Such an edit is then refused (428 `confirmation_required`, naming what it
/// would remove, nothing written); the same request without the preference makes it. The
/// rider's page sends it and asks the rider in between. Without it, the request is the
/// decision, and the answer's `alsoChanged` says what else changed.
#[derive(Debug, Clone, Copy)]
pub(super) struct AskFirst(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for AskFirst {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let strict = parts.headers.get_all("prefer").iter().any(|value| {
            value.to_str().is_ok_and(|text| {
                text.split([',', ';'])
                    .any(|p| p.trim().eq_ignore_ascii_case("handling=strict"))
            })
        });
        Ok(AskFirst(strict))
    }
}

impl etappe_app::confirmation::Confirm for AskFirst {
    fn asks(&self) -> bool {
        self.0
    }
    fn verdict(
        &self,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = etappe_app::confirmation::Verdict> + Send + '_>,
    > {
        Box::pin(std::future::ready(etappe_app::confirmation::Verdict::Ask))
    }
}

fn malformed_if_match() -> AppError {
    AppError::BadHeader(
        "If-Match must be the strong ETag read from the trip (for example \"3\"), a list of them, or *".into(),
    )
}

/// The strong ETag of a trip version.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

/// Path segments; a path that cannot be read (not UTF-8 once decoded, the wrong number of
/// segments) names nothing we serve: 404 as problem+json, like any missing resource.
#[derive(Debug, Clone)]
pub(super) struct Segments<T>(pub T);

impl<S, T> FromRequestParts<S> for Segments<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned + Send,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Segments(value))
            .map_err(|_| AppError::NotFound.into())
    }
}

/// A day's path, `/trips/{id}/stages/{stageId}…`: a trip id that is none is the trip's 404,
/// a day id that is none the day's.
#[derive(Debug, Clone, Copy)]
pub(super) struct DayPath(pub TripId, pub uuid::Uuid);

impl<S: Send + Sync> FromRequestParts<S> for DayPath {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Segments((trip, stage)) =
            Segments::<(String, String)>::from_request_parts(parts, state).await?;
        let trip_id = trip.parse().map_err(|_| AppError::NotFound)?;
        let stage_id = uuid::Uuid::parse_str(&stage).map_err(|_| AppError::StageNotFound)?;
        Ok(DayPath(trip_id, stage_id))
    }
}

/// What an edit of the days carries besides its body: the version it was made on
/// ([`IfMatch`]) and whether to ask before removing a person's work ([`AskFirst`]).
#[derive(Debug, Clone)]
pub(super) struct EditConditions {
    pub base: Option<BaseVersion>,
    pub ask: AskFirst,
}

impl<S: Send + Sync> FromRequestParts<S> for EditConditions {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let IfMatch(base) = IfMatch::from_request_parts(parts, state).await?;
        let ask = AskFirst::from_request_parts(parts, state).await?;
        Ok(EditConditions { base, ask })
    }
}

/// Everything an edit of one day is given: who asks, the day, the edit's conditions and its
/// body (absent reads as `{}`), refused in that order, as the four extractors would be.
#[derive(Debug)]
pub(super) struct DayEdit {
    pub caller: Caller,
    pub day: DayPath,
    pub conditions: EditConditions,
    pub body: Map<String, Value>,
}

impl FromRequest<App> for DayEdit {
    type Rejection = Response;

    async fn from_request(request: Request, state: &App) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let caller = Caller::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let day = DayPath::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let conditions = EditConditions::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let OptionalJsonObject(body) =
            OptionalJsonObject::from_request(Request::from_parts(parts, body), state)
                .await
                .map_err(IntoResponse::into_response)?;
        Ok(DayEdit {
            caller,
            day,
            conditions,
            body,
        })
    }
}

/// A multipart body, its rejections as problem+json (a missing boundary, the wrong type).
#[derive(Debug)]
pub(super) struct Upload(pub axum::extract::Multipart);

impl<S: Send + Sync> FromRequest<S> for Upload {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Multipart::from_request(request, state)
            .await
            .map(Upload)
            .map_err(|rejection| {
                Problem::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "Unsupported media type",
                    format!(
                        "send the file as multipart/form-data with a part named file ({})",
                        rejection.body_text()
                    ),
                )
                .into_response()
            })
    }
}

/// The most bytes an upload's body may hold (the file and its multipart framing).
pub(super) const MAX_UPLOAD_BODY: usize = etappe_infra::fetch::MAX_SOURCE_BYTES + 64 * 1024;

/// The answer to an upload over the limit.
fn upload_too_large() -> Response {
    Problem::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        "Payload too large",
        format!(
            "an upload may be at most {} MB",
            etappe_infra::fetch::MAX_SOURCE_BYTES / (1024 * 1024)
        ),
    )
    .into_response()
}

/// Refuses an upload whose declared `Content-Length` is over the limit before a byte of it is
/// read: the client learns at once, and the server spends nothing reading what it will refuse.
/// A body without a declared length is held to the limit as it is read.
pub(super) async fn refuse_declared_oversize(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_UPLOAD_BODY as u64) {
        return upload_too_large();
    }
    next.run(request).await
}

/// The answer to a multipart body that could not be read: 413 over the size limit, 408
/// past the body deadline, else 400 naming what went wrong.
pub(super) fn multipart_failure(error: &axum::extract::multipart::MultipartError) -> Response {
    if is_body_timeout(error) {
        return body_timed_out();
    }
    if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return upload_too_large();
    }
    Problem::from(AppError::MalformedBody(format!(
        "the multipart body cannot be read: {}",
        error.body_text()
    )))
    .into_response()
}
