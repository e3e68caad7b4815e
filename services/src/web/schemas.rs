//! The shapes the account routes answer and the problems they may answer, for the OpenAPI
//! document: the handlers (`account`) name them in their annotations, and the document
//! (`openapi`) lists them, so neither of those two imports the other.

use utoipa::ToSchema;
use utoipa::openapi::RefOr;

crate::problem::documented::problems! {
    [pub(super)]
    AccountBadRequest = 400, "Unknown field or query parameter, malformed body";
    AccountUnauthorized = 401, "No valid token or session";
    AccountForbidden = 403, "A cookie write without our Origin and the X-CSRF-Token (csrf_refused), or an operation that needs a session (session_required)";
    AccountNotFound = 404, "No such session or token of yours";
    AccountInvalid = 422, "Invalid value (named in errors)";
    AccountRateLimited = 429, "Over a budget: reads and changes per credential a minute";
}

/// A browser session.
#[derive(ToSchema)]
#[schema(as = Session, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct SessionSchema {
    id: uuid::Uuid,
    created_at: chrono::DateTime<chrono::Utc>,
    last_seen_at: chrono::DateTime<chrono::Utc>,
    /// Slides with use (30 days by default).
    expires_at: chrono::DateTime<chrono::Utc>,
    /// The browser's User-Agent, cut to 120 characters.
    user_agent: String,
}

/// A personal access token as listed (never its value).
#[derive(ToSchema)]
#[schema(as = AccessToken, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct TokenSchema {
    id: uuid::Uuid,
    label: String,
    #[schema(schema_with = scopes)]
    scopes: Vec<String>,
    created_at: chrono::DateTime<chrono::Utc>,
    revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

fn scopes() -> RefOr<utoipa::openapi::Schema> {
    crate::openapi::schema(serde_json::json!({
        "type": "array",
        "items": {"type": "string", "enum": ["trips:read", "trips:write"]}
    }))
}

/// The account.
#[derive(ToSchema)]
#[schema(as = Account, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct AccountSchema {
    id: uuid::Uuid,
    email: String,
    created_at: chrono::DateTime<chrono::Utc>,
    /// Live sessions, newest first.
    sessions: Vec<SessionSchema>,
    /// Personal access tokens, newest first, revoked ones included.
    tokens: Vec<TokenSchema>,
    /// The agents (OAuth clients) authorized.
    agents: Vec<serde_json::Value>,
    /// The session's synchronizer token: send it as X-CSRF-Token on cookie writes (absent
    /// with a bearer token).
    #[schema(required = false)]
    csrf_token: String,
    /// The session of this request (absent with a bearer token).
    #[schema(required = false)]
    current_session: uuid::Uuid,
}

/// The live sessions.
#[derive(ToSchema)]
#[schema(as = SessionList)]
#[allow(dead_code)]
pub(super) struct SessionListSchema {
    items: Vec<SessionSchema>,
    /// The session of this request (null with a bearer token).
    current: Option<uuid::Uuid>,
}

/// The tokens.
#[derive(ToSchema)]
#[schema(as = AccessTokenList)]
#[allow(dead_code)]
pub(super) struct TokenListSchema {
    items: Vec<TokenSchema>,
}

/// `POST /users/me/tokens`.
#[derive(ToSchema)]
#[schema(as = CreateAccessToken)]
#[allow(dead_code)]
pub(super) struct CreateTokenSchema {
    /// At most 80 characters.
    #[schema(required = false, max_length = 80)]
    label: String,
    /// Default: both.
    #[schema(required = false, schema_with = scopes)]
    scopes: Vec<String>,
}

/// A token just made: its value is shown this once.
#[derive(ToSchema)]
#[schema(as = CreatedAccessToken)]
#[allow(dead_code)]
pub(super) struct CreatedTokenSchema {
    id: uuid::Uuid,
    /// `etp_` and 64 hex digits: send as Authorization: Bearer.
    token: String,
    label: String,
    #[schema(schema_with = scopes)]
    scopes: Vec<String>,
}

/// `DELETE /users/me`.
#[derive(ToSchema)]
#[schema(as = DeleteAccount)]
#[allow(dead_code)]
pub(super) struct DeleteAccountSchema {
    /// The account's e-mail address, as confirmation.
    confirm: String,
}

/// An account deleted.
#[derive(ToSchema)]
#[schema(as = AccountDeleted, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct DeletedSchema {
    deleted: bool,
    trips_deleted: u64,
}

/// One audit row.
#[derive(ToSchema)]
#[schema(as = AuditEntry)]
#[allow(dead_code)]
pub(super) struct AuditEntrySchema {
    id: uuid::Uuid,
    at: chrono::DateTime<chrono::Utc>,
    /// login, logout, session_revoked, token_created, token_revoked, export, account_deleted.
    kind: String,
    detail: String,
}

/// A page of the audit trail, newest first.
#[derive(ToSchema)]
#[schema(as = AuditPage)]
#[allow(dead_code)]
pub(super) struct AuditPageSchema {
    items: Vec<AuditEntrySchema>,
    total: u64,
    limit: u32,
    offset: u32,
}
