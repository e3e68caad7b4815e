//! The rules of Etappe's OAuth 2.1 authorization server, for its one protected resource,
//! `{public}/mcp`. The transport (the services crate's `oauth`) only reads requests and writes answers.
//!
//! - **Clients** are public (no secret, `token_endpoint_auth_method: none`), registered
//!   either by dynamic registration (RFC 7591) or by a Client ID Metadata Document: the
//!   client id is an https URL whose JSON is fetched (no redirects, 5 s, 5 KB, only a 200),
//!   must name itself, and is cached per `Cache-Control` within 5 minutes to 24 hours;
//!   failures are never cached.
//! - **Redirect URIs** are https, loopback http, or (a native client's only) a private-use
//!   scheme; never with credentials, a wildcard host, a fragment, or text the parser would
//!   mend (`http:/host`). A registration or document that omits `application_type` is
//!   native when it lists a private-use scheme (desktop hosts such as Cursor omit it), web
//!   otherwise; one that says `web` cannot list one.
//! - **Authorization** needs PKCE with S256 (a missing method is `plain`, refused), an exact
//!   redirect URI (a loopback one may vary its port, RFC 8252 §7.3), and defaults a missing
//!   `scope` to both scopes and a missing `resource` to `{public}/mcp`; any other resource
//!   is `invalid_target`. A refusal is redirected to the client only when the person holds
//!   a live grant to it; for any other client it is a page (no open redirector, RFC 9700
//!   §4.11.2).
//! - **The token endpoint** answers an unknown `client_id` with `invalid_client`, and
//!   refuses a code exchange without the `redirect_uri` its authorization request named.
//! - **Codes** live 2 minutes and are consumed by a conditional UPDATE: a second use revokes
//!   the grant with every token it issued (RFC 6749 §4.1.2).
//! - **Tokens** are opaque, 256-bit, stored as SHA-256 digests: access `eta_` (15 minutes by
//!   default, audience `{public}/mcp`), refresh `etr_` (30 days), rotated on every use; a
//!   refresh token presented again revokes the grant (reuse detection). Opaque rather than
//!   signed: every request looks the token up, so a revocation holds at once on every
//!   replica, and there is no signing key to keep.
//! - Every grant, refresh (at most one audit row an hour per grant) and revocation is written
//!   to the person's audit trail.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use etappe_infra::fetch::{Fetcher, Limits};
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::budgets::{Budget, Budgets};
use crate::identity::oauth::{ClientRecord, GrantRecord, OAuthStore};
use crate::identity::{Identity, IdentityError, Principal, Scope};
use crate::settings::OAuthSettings;

/// How long a code is valid.
/// What begins an OAuth access token, so the door tells it from a personal access token
/// (and refuses it on REST) before any lookup.
pub const ACCESS_TOKEN_PREFIX: &str = "eta_";
/// What begins an OAuth refresh token (never a credential for a request).
pub const REFRESH_TOKEN_PREFIX: &str = "etr_";
/// What begins an authorization code.
const CODE_PREFIX: &str = "etc_";

/// True for a token of the OAuth kinds (access or refresh): an agent's, not a person's.
pub fn is_agent_token(token: &str) -> bool {
    token.starts_with(ACCESS_TOKEN_PREFIX) || token.starts_with(REFRESH_TOKEN_PREFIX)
}

const CODE_TTL: Duration = Duration::from_secs(120);
/// How long a refresh token is valid.
const REFRESH_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// A client metadata document's cache bounds.
const CIMD_MIN_CACHE: Duration = Duration::from_secs(300);
const CIMD_MAX_CACHE: Duration = Duration::from_secs(24 * 3600);
/// How a grant's `last_used_at` and its refresh audit rows are throttled.
const TOUCH_EVERY: Duration = Duration::from_secs(300);
const REFRESH_AUDIT_EVERY: Duration = Duration::from_secs(3600);
/// The limits of a client metadata document's fetch.
pub const CIMD_LIMITS: Limits = Limits {
    max_redirects: 0,
    max_bytes: 5 * 1024,
    timeout: Duration::from_secs(5),
    retries: 0,
};

/// The scopes every protected resource challenge names.
pub const ALL_SCOPES: &str = "trips:read trips:write";

/// Why an OAuth request was refused, in the protocol's vocabulary (RFC 6749 §5.2, RFC 7591
/// §3.2.2, RFC 8707 §2). The message names the parameter at fault.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidClient(String),
    #[error("{0}")]
    InvalidGrant(String),
    #[error("{0}")]
    UnsupportedGrantType(String),
    #[error("{0}")]
    UnsupportedResponseType(String),
    #[error("{0}")]
    InvalidScope(String),
    #[error("{0}")]
    InvalidTarget(String),
    #[error("{0}")]
    InvalidRedirectUri(String),
    #[error("{0}")]
    InvalidClientMetadata(String),
    #[error("the person denied the request")]
    AccessDenied,
    #[error("too many requests: {limit} {what}; retry in {retry_after_secs} seconds")]
    RateLimited {
        limit: usize,
        what: &'static str,
        retry_after_secs: u64,
    },
    #[error("the authorization server failed: {0}")]
    Server(String),
}

impl OAuthError {
    /// The `error` code of the wire.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidClient(_) => "invalid_client",
            Self::InvalidGrant(_) => "invalid_grant",
            Self::UnsupportedGrantType(_) => "unsupported_grant_type",
            Self::UnsupportedResponseType(_) => "unsupported_response_type",
            Self::InvalidScope(_) => "invalid_scope",
            Self::InvalidTarget(_) => "invalid_target",
            Self::InvalidRedirectUri(_) => "invalid_redirect_uri",
            Self::InvalidClientMetadata(_) => "invalid_client_metadata",
            Self::AccessDenied => "access_denied",
            Self::RateLimited { .. } => "rate_limited",
            Self::Server(_) => "server_error",
        }
    }
}

impl From<IdentityError> for OAuthError {
    fn from(e: IdentityError) -> Self {
        tracing::error!(error = %e, "oauth storage");
        Self::Server("storage is unavailable; try again".into())
    }
}

/// The parameters of `GET /oauth/authorize` (and of the consent form that repeats them).
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// An authorization request that may be shown to the person.
#[derive(Clone, Debug)]
pub struct Authorization {
    pub client: ClientRecord,
    /// Where the answer goes: the URI asked for, or the client's one registered URI.
    pub redirect_uri: String,
    /// Whether the request named `redirect_uri` (then the code exchange must repeat it,
    /// RFC 6749 §4.1.3).
    pub redirect_uri_given: bool,
    pub state: Option<String>,
    pub code_challenge: String,
    pub scopes: Vec<Scope>,
    pub resource: String,
    /// The hosts of the client's redirect URIs (shown on the consent page).
    pub redirect_hosts: Vec<String>,
    /// Every redirect URI is loopback: any program on the person's machine could be it.
    pub loopback_only: bool,
}

/// Why an authorization request fails: shown as a page (the redirect URI cannot be
/// trusted, or the person has not approved the client yet), or sent back to the client's
/// redirect URI (a client the person holds a live grant to).
#[derive(Debug)]
pub enum AuthorizeFailure {
    Page(OAuthError),
    Redirect { url: String, error: OAuthError },
}

/// The parameters of `POST /oauth/token` (form-encoded).
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct TokenParams {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub client_id: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// A token response (RFC 6749 §5.1).
#[derive(Clone, Debug, Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub refresh_token: String,
    pub scope: String,
}

/// An agent that presented a live access token for this resource.
#[derive(Clone, Debug)]
pub struct Agent {
    pub principal: Principal,
    pub grant_id: Uuid,
    pub client_id: String,
}

/// Why an access token does not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenRefusal {
    Unknown,
    Expired,
    Revoked,
    WrongAudience,
}

impl TokenRefusal {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Unknown => "the access token is unknown",
            Self::Expired => "the access token has expired; refresh it",
            Self::Revoked => "the access token was revoked",
            Self::WrongAudience => "the access token was issued for another resource",
        }
    }
}

/// An agent a person authorized, as the person sees it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentGrant {
    pub grant_id: Uuid,
    pub client_id: String,
    pub client_name: String,
    pub scopes: Vec<String>,
    pub created_at: chrono::DateTime<Utc>,
    pub last_used_at: Option<chrono::DateTime<Utc>>,
}

impl From<GrantRecord> for AgentGrant {
    fn from(g: GrantRecord) -> Self {
        Self {
            grant_id: g.grant_id,
            client_id: g.client_id,
            client_name: g.client_name,
            scopes: g.scopes.split_whitespace().map(str::to_owned).collect(),
            created_at: g.created_at,
            last_used_at: g.last_used_at,
        }
    }
}

/// The authorization server's service.
pub struct AuthorizationService {
    store: OAuthStore,
    /// The people's identity: the audit trail they read.
    identity: Arc<Identity>,
    fetcher: Option<Fetcher>,
    /// Hosts whose metadata documents may be served over http (the operator's list of
    /// local source hosts; tests).
    http_hosts: Vec<String>,
    budgets: Arc<Budgets>,
    settings: OAuthSettings,
    touched: Mutex<HashMap<Uuid, Instant>>,
    refresh_audited: Mutex<HashMap<Uuid, Instant>>,
}

impl std::fmt::Debug for AuthorizationService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationService")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn random_token(prefix: &str) -> String {
    format!("{prefix}{}", hex::encode(rand::random::<[u8; 32]>()))
}

fn quote(text: &str) -> String {
    etappe_domain::text::quote(text)
}

/// The names of `scopes`, sorted, space-separated.
fn scope_text(scopes: &[Scope]) -> String {
    let mut names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(" ")
}

/// The scopes asked for: none asked is both; `offline_access` is dropped (refresh tokens
/// are always issued); any other unknown name is refused.
pub fn parse_scope(scope: Option<&str>) -> Result<Vec<Scope>, OAuthError> {
    let mut scopes = Vec::new();
    for name in scope.unwrap_or_default().split_whitespace() {
        if name == "offline_access" {
            continue;
        }
        let scope = name.parse::<Scope>().map_err(|_| {
            OAuthError::InvalidScope(format!(
                "scope: unknown scope {}; accepted: {ALL_SCOPES}",
                quote(name)
            ))
        })?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        scopes = Scope::ALL.to_vec();
    }
    scopes.sort();
    Ok(scopes)
}

mod authorize;
mod grants;
mod redirects;
mod registration;
mod tokens;

pub use self::redirects::{
    ApplicationType, application_type, cache_lifetime, check_redirect_uri, redirect_matches, s256,
};

impl AuthorizationService {
    /// The service over `identity`'s database, fetching metadata documents with `fetcher`.
    pub fn new(
        identity: Arc<Identity>,
        fetcher: Option<Fetcher>,
        http_hosts: Vec<String>,
        budgets: Arc<Budgets>,
        settings: OAuthSettings,
    ) -> Self {
        Self {
            store: OAuthStore::new(identity.db().clone()),
            identity,
            fetcher,
            http_hosts,
            budgets,
            settings,
            touched: Mutex::default(),
            refresh_audited: Mutex::default(),
        }
    }

    /// The storage (tests pre-register clients with it).
    pub fn store(&self) -> &OAuthStore {
        &self.store
    }

    /// The settings.
    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// The resource every token is bound to.
    pub fn resource_of(public: &str) -> String {
        format!("{public}/mcp")
    }

    // ---- rate limits

    async fn limit(
        &self,
        name: &'static str,
        limit: usize,
        what: &'static str,
        key: &str,
        window: Duration,
    ) -> Result<(), OAuthError> {
        let budget = Budget { name, limit, what };
        self.budgets
            .admit_within(&crate::budgets::key_of(&[key]), &[budget], window)
            .await
            .map_err(|e| OAuthError::RateLimited {
                limit: e.limit,
                what: e.what,
                retry_after_secs: e.retry_after_secs,
            })
    }

    /// Counts a token request from `address` (60 a minute).
    pub async fn admit_token_request(&self, address: &str) -> Result<(), OAuthError> {
        self.limit(
            "oauth-token",
            self.settings.tokens_per_minute,
            "token requests a minute from one address",
            address,
            Duration::from_secs(60),
        )
        .await
    }

    /// Counts an authorization request from `address` (30 in 5 minutes).
    pub async fn admit_authorize_request(&self, address: &str) -> Result<(), OAuthError> {
        self.limit(
            "oauth-authorize",
            self.settings.authorize_per_5_minutes,
            "authorization requests in 5 minutes from one address",
            address,
            Duration::from_secs(300),
        )
        .await
    }

    /// Counts a registration from `address` (20 an hour).
    pub async fn admit_registration(&self, address: &str) -> Result<(), OAuthError> {
        self.limit(
            "oauth-register",
            self.settings.registrations_per_hour,
            "client registrations an hour from one address",
            address,
            Duration::from_secs(3600),
        )
        .await
    }

    // ---- clients
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn loopback_redirects_may_vary_their_port_and_nothing_else() {
        let r = "http://127.0.0.1:33418/callback";
        assert!(redirect_matches(r, "http://127.0.0.1:5000/callback"));
        assert!(redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:1234/cb"
        ));
        assert!(!redirect_matches(r, "http://127.0.0.1:5000/other"));
        assert!(!redirect_matches(r, "http://127.0.0.2:5000/callback"));
        assert!(!redirect_matches(
            "https://app.example/cb",
            "https://app.example/cb2"
        ));
        assert!(!redirect_matches(
            "https://app.example:443/cb",
            "https://app.example:444/cb"
        ));
        assert!(redirect_matches(
            "https://app.example/cb",
            "https://app.example/cb"
        ));
    }

    #[test]
    fn registered_redirects_are_https_loopback_http_or_app_schemes() {
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://localhost:6274/oauth/callback",
            "http://127.0.0.1:33418",
            "https://vscode.dev/redirect",
        ] {
            assert!(check_redirect_uri(ok, ApplicationType::Web).is_ok(), "{ok}");
            assert!(
                check_redirect_uri(ok, ApplicationType::Native).is_ok(),
                "{ok}"
            );
        }
        assert!(
            check_redirect_uri(
                "cursor://anysphere.cursor-mcp/oauth/callback",
                ApplicationType::Native
            )
            .is_ok()
        );
        for bad in [
            "http://evil.example/cb",
            "javascript:alert(1)",
            "https://a.example/cb#frag",
            "not a uri",
            "data:text/html,x",
        ] {
            assert!(
                check_redirect_uri(bad, ApplicationType::Native).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn credentials_one_slash_wildcards_and_web_app_schemes_are_refused() {
        for bad in [
            "https://user@claude.ai/cb",
            "https://user:pw@claude.ai/cb",
            "http://user@127.0.0.1:7777/cb",
            "http:/127.0.0.1:7777/cb",
            "https:/claude.ai/cb",
            "https:claude.ai/cb",
            "https://*.example.org/cb",
            "https://claude.ai\\@evil.example/cb",
            "cursor://user@anysphere.cursor-mcp/oauth/callback",
        ] {
            let refused = check_redirect_uri(bad, ApplicationType::Native);
            assert!(
                matches!(refused, Err(OAuthError::InvalidRedirectUri(_))),
                "{bad}: {refused:?}"
            );
        }
        // A private-use scheme is a native application's; a web one cannot register it.
        let web = check_redirect_uri(
            "cursor://anysphere.cursor-mcp/oauth/callback",
            ApplicationType::Web,
        );
        assert!(
            matches!(&web, Err(OAuthError::InvalidRedirectUri(m)) if m.contains("application_type")),
            "{web:?}"
        );
    }

    #[test]
    fn the_application_type_is_what_the_client_says_or_follows_its_schemes() {
        let cursor = [
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "https://www.cursor.com/agents/mcp/oauth/callback",
            "http://localhost:8787/callback",
        ];
        assert_eq!(
            application_type(None, &cursor).ok(),
            Some(ApplicationType::Native)
        );
        assert_eq!(
            application_type(Some(&Value::from("native")), &["http://127.0.0.1/cb"]).ok(),
            Some(ApplicationType::Native)
        );
        assert_eq!(
            application_type(None, &["https://claude.ai/api/mcp/auth_callback"]).ok(),
            Some(ApplicationType::Web)
        );
        assert_eq!(
            application_type(Some(&Value::from("web")), &cursor).ok(),
            Some(ApplicationType::Web)
        );
        assert!(matches!(
            application_type(Some(&Value::from("desktop")), &cursor),
            Err(OAuthError::InvalidClientMetadata(_))
        ));
    }

    #[test]
    fn scopes_default_to_both_and_refuse_unknown_names() {
        assert_eq!(parse_scope(None).ok(), Some(Scope::ALL.to_vec()));
        assert_eq!(parse_scope(Some("  ")).ok(), Some(Scope::ALL.to_vec()));
        assert_eq!(
            parse_scope(Some("trips:read offline_access")).ok(),
            Some(vec![Scope::TripsRead])
        );
        assert!(matches!(
            parse_scope(Some("admin")),
            Err(OAuthError::InvalidScope(_))
        ));
    }

    #[test]
    fn documents_are_cached_within_bounds() {
        assert_eq!(cache_lifetime(None), CIMD_MIN_CACHE);
        assert_eq!(cache_lifetime(Some("no-store")), CIMD_MIN_CACHE);
        assert_eq!(
            cache_lifetime(Some("public, max-age=3600")),
            Duration::from_secs(3600)
        );
        assert_eq!(cache_lifetime(Some("max-age=99999999")), CIMD_MAX_CACHE);
    }

    #[test]
    fn s256_is_unpadded_base64url_of_the_sha256() {
        // The value Python's hashlib and base64.urlsafe_b64encode give, '=' stripped.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWpEjk-Q"),
            "N7_R_0KWX6OZ6NpbB7cMNQ3_-zR09Izn9SA8LPYM60o"
        );
    }
}
