//! The one place application errors become HTTP answers (for every HTTP transport: REST and
//! the web pages' JSON routes alike, hence a neutral module beside them): `application/problem+json`
//! (RFC 9457) with a stable `type` per kind of problem, a `code` naming it, and, for input
//! problems, the list of fields with what each accepts. 5xx details are logged, not shown.

pub mod documented;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use etappe_app::AppError;
use etappe_domain::trip::{FieldError, InputError};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Every problem `code` the API answers with (the document's enumeration of `code`; a problem
/// made with another code fails a debug assertion, so the tests catch a new one unlisted).
pub const CODES: &[&str] = &[
    "unauthenticated",
    "insufficient_scope",
    "not_found",
    "unknown_field",
    "invalid_value",
    "malformed_body",
    "bad_header",
    "invalid_query",
    "locked",
    "stale_version",
    "precondition_required",
    "conflict",
    "not_configured",
    "unavailable",
    "internal",
    "unsupported_media_type",
    "payload_too_large",
    "method_not_allowed",
    "not_ready",
    "no_such_version",
    "stage_not_found",
    "upstream_unavailable",
    "rate_limited",
    "too_many_streams",
    "upload_quota",
    "body_timeout",
    "confirmation_required",
    "confirmation_invalid",
    "login_link_spent",
    "login_link_invalid",
    "session_required",
    "csrf_refused",
];

/// A problem document.
#[derive(Debug, Serialize)]
pub struct Problem {
    #[serde(rename = "type")]
    pub type_uri: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    /// The problem's stable name (the last segment of `type`).
    pub code: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<&'static str>,
    #[serde(rename = "currentVersion", skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// Seconds until a spent budget has room again (also sent as `Retry-After`).
    #[serde(rename = "retryAfter", skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// The methods a 405 allows (sent as `Allow`, not in the body).
    #[serde(skip)]
    pub allow: Option<String>,
    /// What an edit asked first would remove of what a person made (confirmation_required).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removes: Vec<String>,
    /// For a failed third party: `{upstream, failure, retryable}` at the top level.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<etappe_upstream::UpstreamError>,
}

impl Problem {
    /// A problem of kind `code`.
    pub fn new(
        status: StatusCode,
        code: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        debug_assert!(CODES.contains(&code), "problem code {code} is not in CODES");
        Self {
            type_uri: format!("https://etappe.dev/problems/{code}"),
            title,
            status: status.as_u16(),
            detail: detail.into(),
            code,
            errors: Vec::new(),
            scope: None,
            current_version: None,
            retry_after: None,
            allow: None,
            removes: Vec::new(),
            upstream: None,
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(&self)).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(allow) = self
            .allow
            .as_deref()
            .and_then(|a| HeaderValue::from_str(a).ok())
        {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        // The rest of a body too large or too slow is not read: the connection cannot carry
        // another request, and the client must know not to reuse it.
        if matches!(
            status,
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
        ) {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"etappe\""),
            );
        }
        if let Some(scope) = self.scope {
            let value = format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"");
            if let Ok(value) = HeaderValue::from_str(&value) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
        }
        response
    }
}

/// Each error's status, problem code and title: the one table of REST's answers.
fn kind_of(error: &AppError) -> (StatusCode, &'static str, &'static str) {
    use StatusCode as S;
    match error {
        AppError::Unauthenticated | AppError::AgentTokenOnRest => (
            S::UNAUTHORIZED,
            "unauthenticated",
            "Authentication required",
        ),
        AppError::InsufficientScope(_) => {
            (S::FORBIDDEN, "insufficient_scope", "Insufficient scope")
        }
        AppError::NotFound | AppError::NoSuchCredential | AppError::NotShared => {
            (S::NOT_FOUND, "not_found", "Not found")
        }
        AppError::StageNotFound => (S::NOT_FOUND, "stage_not_found", "Stage not found"),
        AppError::Input(InputError::UnknownFields { .. }) => {
            (S::BAD_REQUEST, "unknown_field", "Unknown field")
        }
        AppError::Input(InputError::Invalid(_)) => {
            (S::UNPROCESSABLE_ENTITY, "invalid_value", "Invalid value")
        }
        AppError::MalformedBody(_) => (S::BAD_REQUEST, "malformed_body", "Malformed body"),
        AppError::BadHeader(_) => (S::BAD_REQUEST, "bad_header", "Bad header"),
        AppError::InvalidQuery(_) => (S::BAD_REQUEST, "invalid_query", "Invalid query"),
        AppError::Locked => (S::LOCKED, "locked", "Trip locked"),
        AppError::StaleVersion { .. } => (S::PRECONDITION_FAILED, "stale_version", "Stale version"),
        AppError::PreconditionRequired => (
            S::PRECONDITION_REQUIRED,
            "precondition_required",
            "Precondition required",
        ),
        AppError::Conflict(_) => (S::CONFLICT, "conflict", "Conflict"),
        AppError::NoSuchVersion(_) => (S::NOT_FOUND, "no_such_version", "No such version"),
        AppError::NotReady => (S::UNPROCESSABLE_ENTITY, "not_ready", "Not ready"),
        AppError::NotConfigured(_) => (
            S::UNPROCESSABLE_ENTITY,
            "not_configured",
            "Not configured here",
        ),
        AppError::Unavailable(_) => (S::SERVICE_UNAVAILABLE, "unavailable", "Service unavailable"),
        AppError::Upstream(_) => (
            S::SERVICE_UNAVAILABLE,
            "upstream_unavailable",
            "Upstream unavailable",
        ),
        AppError::RateLimited(_) | AppError::LoginRateLimited(_) => {
            (S::TOO_MANY_REQUESTS, "rate_limited", "Too many requests")
        }
        AppError::QuotaExceeded(_) => (
            S::PAYLOAD_TOO_LARGE,
            "upload_quota",
            "Upload quota exceeded",
        ),
        AppError::TooManyStreams(_) => {
            (S::TOO_MANY_REQUESTS, "too_many_streams", "Too many streams")
        }
        AppError::UploadsBusy(_) => (
            S::SERVICE_UNAVAILABLE,
            "unavailable",
            "Busy with other uploads",
        ),
        AppError::MethodNotAllowed { .. } => (
            S::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "Method not allowed",
        ),
        // REST confirms by sending the request, unless it asked to be asked first
        // (`Prefer: handling=strict`): the precondition that was not met.
        AppError::ConfirmationRequired(_) => (
            S::PRECONDITION_REQUIRED,
            "confirmation_required",
            "Confirmation required",
        ),
        AppError::ConfirmationInvalid => {
            (S::CONFLICT, "confirmation_invalid", "Confirmation invalid")
        }
        AppError::LoginLinkSpent(_) => (S::GONE, "login_link_spent", "Login link spent"),
        AppError::LoginLinkInvalid => (S::BAD_REQUEST, "login_link_invalid", "Invalid login link"),
        AppError::SessionRequired => (S::FORBIDDEN, "session_required", "Session required"),
        AppError::CsrfRefused(_) => (S::FORBIDDEN, "csrf_refused", "Cross-site request refused"),
        AppError::Internal(_) => (S::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
    }
}

impl From<&AppError> for Problem {
    fn from(error: &AppError) -> Self {
        let (status, code, title) = kind_of(error);
        let detail = match error {
            // The details are logged, never shown.
            AppError::Internal(_) => "something went wrong on our side; it has been logged".into(),
            // What the change would do, asked first (`Prefer: handling=strict`).
            AppError::ConfirmationRequired(impact) => match &impact.change {
                Some(change) => format!(
                    "nothing was changed: this edit {change} Send it again without `Prefer: handling=strict` to make it"
                ),
                None => error.to_string(),
            },
            _ => error.to_string(),
        };
        let mut problem = Problem::new(status, code, title, detail);
        // What some problems carry besides: the fields, the scope, the version, the wait.
        match error {
            AppError::InsufficientScope(scope) => problem.scope = Some(scope.as_str()),
            AppError::Input(_) | AppError::InvalidQuery(_) => problem.errors = error.field_errors(),
            AppError::StaleVersion { current, .. } => problem.current_version = Some(*current),
            AppError::Upstream(failure) => problem.upstream = Some(failure.clone()),
            AppError::RateLimited(exceeded) | AppError::LoginRateLimited(exceeded) => {
                problem.retry_after = Some(exceeded.retry_after_secs);
            }
            AppError::TooManyStreams(_) => problem.retry_after = Some(5),
            AppError::UploadsBusy(_) => problem.retry_after = Some(5),
            AppError::MethodNotAllowed { allowed, .. } => problem.allow = Some(allowed.clone()),
            AppError::ConfirmationRequired(impact) => problem.removes = impact.removes.clone(),
            _ => {}
        }
        problem
    }
}

/// What a transport answers for an application error: the problem it maps to, once. An
/// internal error's details and a dependency's outage are logged here, where the error
/// leaves the application for good (a handler's `?` converts through this).
impl From<AppError> for Problem {
    fn from(error: AppError) -> Self {
        match &error {
            AppError::Internal(details) => {
                tracing::error!(error.message = %details, "internal error");
            }
            AppError::Unavailable(details) => {
                tracing::warn!(error.message = %details, "dependency unavailable");
            }
            _ => {}
        }
        Problem::from(&error)
    }
}

/// A refused input, answered as the application answers it.
impl From<InputError> for Problem {
    fn from(error: InputError) -> Self {
        AppError::from(error).into()
    }
}

/// A failure of identity's storage, answered as the application answers it.
impl From<etappe_app::identity::IdentityError> for Problem {
    fn from(error: etappe_app::identity::IdentityError) -> Self {
        AppError::from(error).into()
    }
}
