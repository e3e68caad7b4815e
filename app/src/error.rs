//! The application layer's one error type. The REST transport maps it to problem+json (and
//! the MCP transport will map it to tool results) in exactly one place each.

use etappe_domain::trip::{FieldError, InputError, TripError};
use etappe_events::{ExecuteError, StoreError};

use crate::identity::{IdentityError, Scope};

/// Why a service refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// No valid credentials.
    #[error("authentication required: send a bearer token (Authorization: Bearer etp_…)")]
    Unauthenticated,
    /// An agent's OAuth access token on the REST API: those are for `/mcp` only.
    #[error(
        "an agent's OAuth access token is accepted on /mcp only: on the REST API use a personal access token (Authorization: Bearer etp_…) or a session"
    )]
    AgentTokenOnRest,
    /// Valid credentials without the scope this operation needs.
    #[error("this operation needs the {0} scope")]
    InsufficientScope(Scope),
    /// The trip does not exist, or it is someone else's: the two are told apart by nobody.
    #[error("trip not found")]
    NotFound,
    /// The caller's trip has no open public link (told only to the owner: anyone else gets
    /// [`Self::NotFound`] first).
    #[error(
        "this trip has no open public link: POST /trips/{{id}}/share (MCP share_trip) opens one"
    )]
    NotShared,
    /// The trip has no day with this id.
    #[error("no day with this id in this trip: read the stage ids from the trip's detail")]
    StageNotFound,
    /// The input names fields the operation does not accept, or carries invalid values.
    #[error("{0}")]
    Input(InputError),
    /// The body is not a JSON object, or not JSON at all.
    #[error("{0}")]
    MalformedBody(String),
    /// A request header has a value that cannot be read.
    #[error("{0}")]
    BadHeader(String),
    /// Query parameters that are unknown or out of range.
    #[error("invalid query parameter(s): {}", .0.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    InvalidQuery(Vec<FieldError>),
    /// The trip has started: structural edits and analysis are refused.
    #[error("this trip is locked: its start date is today or in the past")]
    Locked,
    /// The caller edited an older version than the current one.
    #[error(
        "the trip has moved on: you edited version {expected}, the current one is {current}; reload it and reapply your change"
    )]
    StaleVersion { expected: u64, current: u64 },
    /// A structural write came without the version it was based on.
    #[error(
        "this operation requires If-Match with the trip's current ETag (read it from GET /trips/{{id}}/detail)"
    )]
    PreconditionRequired,
    /// The trip never had the version asked for.
    #[error("the trip never had version {0}")]
    NoSuchVersion(u64),
    /// The operation needs the days, and they are not computed yet.
    #[error("the trip has no days yet: wait until partial is false (GET /trips/{{id}})")]
    NotReady,
    /// A conflict with the current state, named in the message.
    #[error("{0}")]
    Conflict(String),
    /// The request is sound, but this deployment is not set up for it (planning a route
    /// with no routing engine configured): the message names the setting.
    #[error("{0}")]
    NotConfigured(String),
    /// A dependency (the database) is down or overloaded; retrying later may succeed.
    #[error("{0}")]
    Unavailable(String),
    /// A third party this operation needs failed (named, with how, and whether to retry).
    #[error("{0}")]
    Upstream(etappe_upstream::UpstreamError),
    /// The caller spent a budget (REST and MCP share them); retry after the named delay.
    #[error("{} {} a minute are allowed; retry in {} seconds", .0.limit, .0.what, .0.retry_after_secs)]
    RateLimited(crate::budgets::Exceeded),
    /// The user's uploaded files would exceed their quota.
    #[error("{0}")]
    QuotaExceeded(String),
    /// Every upload slot stayed busy while this upload waited.
    #[error(
        "the server is reading {0} other uploads and this one waited its turn too long; send it again in a few seconds"
    )]
    UploadsBusy(usize),
    /// Too many live streams open at once for this user.
    #[error("{0} live event streams are open for this user already; close one first")]
    TooManyStreams(usize),
    /// The resource exists but not with this method.
    #[error("{method} is not allowed on this resource; allowed: {allowed}")]
    MethodNotAllowed { method: String, allowed: String },
    /// A fault of ours; the details are logged, not shown.
    /// A change that cannot be undone, not confirmed yet: what it would touch.
    #[error("this change cannot be undone and needs confirming first")]
    ConfirmationRequired(Box<super::confirmation::Impact>),
    /// A confirmation that does not hold (spent, expired, or for other arguments).
    #[error(
        "this confirmation is not valid for this change: it was given for different arguments, has been used, or has expired"
    )]
    ConfirmationInvalid,
    /// Too many login requests from one client address (per e-mail address, the answer is
    /// the neutral one: see `accounts`).
    #[error("{} {} per 15 minutes are allowed; retry in {} seconds", .0.limit, .0.what, .0.retry_after_secs)]
    LoginRateLimited(crate::budgets::Exceeded),
    /// A login link that was used or has expired.
    #[error("{0}")]
    LoginLinkSpent(String),
    /// A login link that was never issued (or is malformed).
    #[error("this is not a valid login link: ask for a new one")]
    LoginLinkInvalid,
    /// A session or token id that is not one of the caller's live ones.
    #[error("no such session or token of yours (it may be revoked already)")]
    NoSuchCredential,
    /// Account management a token may not do: it needs a person logged in.
    #[error("this needs a logged-in session (a personal access token cannot manage the account)")]
    SessionRequired,
    /// A cookie-authenticated write without proof that our own page sent it.
    #[error("{0}")]
    CsrfRefused(String),
    #[error("internal error")]
    Internal(String),
}

impl AppError {
    /// The field errors a refusal carries, if any.
    pub fn field_errors(&self) -> Vec<FieldError> {
        match self {
            Self::Input(input) => input.field_errors(),
            Self::InvalidQuery(errors) => errors.clone(),
            _ => Vec::new(),
        }
    }
}

impl From<TripError> for AppError {
    fn from(error: TripError) -> Self {
        match error {
            TripError::NotFound => Self::NotFound,
            TripError::AlreadyExists => Self::Conflict("the trip already exists".into()),
            TripError::Locked => Self::Locked,
            TripError::StaleVersion { expected, current } => {
                Self::StaleVersion { expected, current }
            }
            TripError::Invalid(errors) => Self::Input(InputError::Invalid(errors)),
            TripError::NoStages => Self::NotReady,
            TripError::AnalysisRunning => {
                Self::Conflict("an analysis is already in progress; read computationStatus and try again when it is done".into())
            }
            TripError::StageNotFound => Self::StageNotFound,
            TripError::NoDetour => Self::Conflict(
                "this day has no detour (or it was removed meanwhile): read the day again".into(),
            ),
            TripError::NotPlanned => Self::Input(InputError::Invalid(vec![
                etappe_domain::trip::FieldError::new(
                    "plan",
                    "plan is only for trips planned from places; this trip's route comes from a link or a file: create a new trip to plan one",
                ),
            ])),
            TripError::Superseded { .. } => Self::Conflict("the trip was re-paced meanwhile; reload it".into()),
        }
    }
}

impl From<StoreError> for AppError {
    fn from(error: StoreError) -> Self {
        if error.is_unavailable() {
            return Self::Unavailable("the database is unavailable; retry in a moment".into());
        }
        match error {
            StoreError::Conflict { .. } => {
                Self::Conflict("the trip changed while this request was applied; retry it".into())
            }
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<ExecuteError> for AppError {
    fn from(error: ExecuteError) -> Self {
        match error {
            ExecuteError::Refused(refused) => refused.into(),
            ExecuteError::Contended => AppError::Conflict(
                "the trip is being changed by others right now; retry in a moment".into(),
            ),
            ExecuteError::Store(store) => store.into(),
            // The app's own gates stop with an `AppError` (a confirmation to ask for).
            ExecuteError::Stopped(stop) => match stop.downcast::<AppError>() {
                Ok(app) => *app,
                Err(other) => AppError::Internal(other.to_string()),
            },
        }
    }
}

impl From<IdentityError> for AppError {
    fn from(error: IdentityError) -> Self {
        match error {
            IdentityError::Database(e) => AppError::from(StoreError::Database(e)),
            IdentityError::Invalid(message) => Self::Internal(message),
        }
    }
}

impl From<InputError> for AppError {
    fn from(error: InputError) -> Self {
        Self::Input(error)
    }
}
