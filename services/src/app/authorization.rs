//! The rules of Etappe's OAuth 2.1 authorization server, for its one protected resource,
//! `{public}/mcp`. The transport (`crate::oauth`) only reads requests and writes answers.
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

use base64::Engine;
use chrono::Utc;
use etappe_domain::ids::UserId;
use etappe_workers::fetch::{FetchError, Fetcher, Limits};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;
use uuid::Uuid;

use crate::budgets::{Budget, Budgets};
use crate::config::OAuthSettings;
use crate::identity::oauth::{ClientRecord, GrantRecord, NewToken, OAuthStore};
use crate::identity::{Identity, IdentityError, Principal, Scope};

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
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
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

fn is_loopback_host(host: &str) -> bool {
    matches!(
        host.trim_matches(['[', ']']).to_ascii_lowercase().as_str(),
        "127.0.0.1" | "::1" | "localhost"
    )
}

/// Whether `asked` matches the registered `registered` exactly, or differs only in the port
/// of a loopback http URI (RFC 8252 §7.3).
pub fn redirect_matches(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let (Ok(r), Ok(a)) = (Url::parse(registered), Url::parse(asked)) else {
        return false;
    };
    r.scheme() == "http"
        && a.scheme() == "http"
        && r.host_str().is_some_and(is_loopback_host)
        && r.host_str() == a.host_str()
        && r.path() == a.path()
        && r.query() == a.query()
        && a.fragment().is_none()
        && r.username().is_empty()
        && a.username().is_empty()
}

/// What a client says it is (OpenID Connect Dynamic Client Registration's
/// `application_type`): a web application redirects over https (or loopback http); only a
/// native one may also use a private-use scheme (`cursor://…`, RFC 8252 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplicationType {
    Web,
    Native,
}

impl ApplicationType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Web => "web",
            Self::Native => "native",
        }
    }
}

/// Whether `uri`'s scheme is http or https (which redirect to a web origin).
fn is_web_scheme(uri: &str) -> bool {
    Url::parse(uri)
        .ok()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// The application type of registration metadata or of a metadata document: `native` or
/// `web` as it says; when it says nothing, `native` if it registers a private-use scheme
/// (what desktop hosts that omit the field, such as Cursor, register: a web application
/// cannot receive one) and `web` otherwise. Anything else is `invalid_client_metadata`.
pub fn application_type(
    value: Option<&Value>,
    redirect_uris: &[&str],
) -> Result<ApplicationType, OAuthError> {
    match value {
        Some(Value::String(t)) if t == "native" => Ok(ApplicationType::Native),
        Some(Value::String(t)) if t == "web" => Ok(ApplicationType::Web),
        None | Some(Value::Null) => Ok(if redirect_uris.iter().any(|u| !is_web_scheme(u)) {
            ApplicationType::Native
        } else {
            ApplicationType::Web
        }),
        Some(other) => Err(OAuthError::InvalidClientMetadata(format!(
            "application_type: {} is not one of native, web",
            quote(&other.to_string())
        ))),
    }
}

/// Checks one redirect URI a client registers: https; http on loopback only (any port);
/// or, for a native client only, a private-use scheme (`cursor://…`); never a fragment,
/// credentials (`https://user@host`), a wildcard host (`https://*.example`), a web URI
/// whose text is not what a browser reads (`http:/host` with one slash, backslashes), nor
/// a scheme that runs or reads something (`javascript:`, `data:`, `file:`).
pub fn check_redirect_uri(uri: &str, kind: ApplicationType) -> Result<(), OAuthError> {
    let bad =
        |why: &str| OAuthError::InvalidRedirectUri(format!("redirect_uris: {} {why}", quote(uri)));
    if uri.len() > 2000 {
        return Err(bad("is too long"));
    }
    let url = Url::parse(uri).map_err(|_| bad("is not an absolute URI"))?;
    if url.fragment().is_some() {
        return Err(bad("has a fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("carries credentials (user@)"));
    }
    if url.host_str().is_some_and(|h| h.contains('*')) || uri.contains('\\') {
        return Err(bad("has a wildcard or a backslash"));
    }
    match url.scheme() {
        "http" | "https" => {
            // The parser mends `http:/host` and `http:host` into `http://host/`: the text
            // registered would then not be where the browser goes.
            let text = uri.to_ascii_lowercase();
            if !(text.starts_with("http://") || text.starts_with("https://")) {
                return Err(bad("is not written scheme://host/…"));
            }
        }
        _ => {}
    }
    match url.scheme() {
        "https" if url.host_str().is_none_or(str::is_empty) => return Err(bad("names no host")),
        "http" if !url.host_str().is_some_and(is_loopback_host) => {
            return Err(bad("uses http on a host that is not loopback (use https)"));
        }
        "http" | "https" => {}
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ftp" | "ws" | "wss" => {
            return Err(bad("uses a scheme that is not a redirect"));
        }
        _ if kind == ApplicationType::Web => {
            return Err(bad(
                "uses a private-use scheme, which only a native application may register (application_type: native)",
            ));
        }
        _ => {}
    }
    Ok(())
}

fn host_of(uri: &str) -> String {
    Url::parse(uri)
        .ok()
        .map(|u| match u.host_str() {
            Some(h) => h.to_owned(),
            None => format!("{}:", u.scheme()),
        })
        .unwrap_or_default()
}

/// The cache lifetime a `Cache-Control` header allows, within the bounds.
pub fn cache_lifetime(cache_control: Option<&str>) -> Duration {
    let max_age = cache_control.and_then(|value| {
        value.split(',').find_map(|d| {
            let d = d.trim().to_ascii_lowercase();
            if d == "no-store" || d == "no-cache" {
                return Some(0);
            }
            d.strip_prefix("max-age=")
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
    });
    Duration::from_secs(max_age.unwrap_or(0)).clamp(CIMD_MIN_CACHE, CIMD_MAX_CACHE)
}

/// `base64url(sha256(verifier))`, as S256 compares.
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn is_pkce_text(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

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

    /// Registers a public client (RFC 7591) from its metadata; answers the registration.
    pub async fn register(&self, metadata: &Value) -> Result<Value, OAuthError> {
        let Value::Object(fields) = metadata else {
            return Err(OAuthError::InvalidClientMetadata(
                "the body must be a JSON object of client metadata".into(),
            ));
        };
        let uris = fields
            .get("redirect_uris")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| {
                OAuthError::InvalidRedirectUri(
                    "redirect_uris: a non-empty array of URIs is required".into(),
                )
            })?;
        if uris.len() > 20 {
            return Err(OAuthError::InvalidRedirectUri(
                "redirect_uris: at most 20".into(),
            ));
        }
        let mut redirect_uris = Vec::new();
        for uri in uris {
            let uri = uri.as_str().ok_or_else(|| {
                OAuthError::InvalidRedirectUri("redirect_uris: every entry must be a string".into())
            })?;
            redirect_uris.push(uri.to_owned());
        }
        let listed: Vec<&str> = redirect_uris.iter().map(String::as_str).collect();
        let kind = application_type(fields.get("application_type"), &listed)?;
        for uri in &listed {
            check_redirect_uri(uri, kind)?;
        }
        match fields.get("token_endpoint_auth_method").map(|v| v.as_str()) {
            None | Some(Some("none")) => {}
            Some(other) => {
                return Err(OAuthError::InvalidClientMetadata(format!(
                    "token_endpoint_auth_method: only public clients are registered (\"none\"), not {}",
                    quote(other.unwrap_or("a non-string"))
                )));
            }
        }
        check_list(
            fields.get("grant_types"),
            "grant_types",
            &["authorization_code", "refresh_token"],
        )?;
        check_list(fields.get("response_types"), "response_types", &["code"])?;
        let client_name = client_name(fields.get("client_name"))?;
        let client_id = format!("dcr_{}", hex::encode(rand::random::<[u8; 16]>()));
        self.store
            .put_client(&ClientRecord {
                client_id: client_id.clone(),
                kind: "dcr".into(),
                client_name: client_name.clone(),
                redirect_uris: redirect_uris.clone(),
                metadata: metadata.to_string(),
                fetched_at: None,
                expires_at: None,
            })
            .await?;
        Ok(serde_json::json!({
            "client_id": client_id,
            "client_id_issued_at": Utc::now().timestamp(),
            "client_name": client_name,
            "redirect_uris": redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": kind.as_str(),
        }))
    }

    /// Whether `client_id` names a metadata document (an https URL, or http on a host the
    /// operator lists for local fixtures).
    fn is_document_id(&self, client_id: &str) -> bool {
        client_id.starts_with("https://")
            || (client_id.starts_with("http://")
                && Url::parse(client_id)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                    .is_some_and(|h| self.http_hosts.iter().any(|a| a.eq_ignore_ascii_case(&h))))
    }

    /// The client `client_id` names: a registered one, or a metadata document (from the
    /// cache, else fetched).
    pub async fn client(&self, client_id: &str) -> Result<ClientRecord, OAuthError> {
        if client_id.is_empty() || client_id.len() > 2000 {
            return Err(OAuthError::InvalidClient(
                "client_id: missing or too long".into(),
            ));
        }
        if !self.is_document_id(client_id) {
            return self
                .store
                .client(client_id)
                .await?
                .filter(|c| c.kind == "dcr")
                .ok_or_else(|| {
                    OAuthError::InvalidClient(format!(
                        "client_id: no client {} is registered",
                        quote(client_id)
                    ))
                });
        }
        let cached = self.store.client(client_id).await?;
        let now = Utc::now();
        if let Some(c) = &cached
            && c.kind == "cimd"
            && c.expires_at.is_some_and(|e| e > now)
        {
            return Ok(c.clone());
        }
        match self.fetch_document(client_id).await {
            Ok(client) => {
                self.store.put_client(&client).await?;
                Ok(client)
            }
            Err(e) => Err(e),
        }
    }

    /// Fetches and checks a client metadata document.
    pub async fn fetch_document(&self, client_id: &str) -> Result<ClientRecord, OAuthError> {
        let refused = |why: String| {
            OAuthError::InvalidClient(format!(
                "client_id: the client metadata document {} {why}",
                quote(client_id)
            ))
        };
        let url = Url::parse(client_id).map_err(|_| refused("is not a URL".into()))?;
        if url.path().len() <= 1 {
            return Err(refused("names no path".into()));
        }
        if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
            return Err(refused("carries credentials or a fragment".into()));
        }
        if client_id.contains("/./")
            || client_id.contains("/../")
            || client_id.ends_with("/.")
            || client_id.ends_with("/..")
        {
            return Err(refused("has dot segments".into()));
        }
        let host = url.host_str().unwrap_or_default().to_owned();
        self.limit(
            "oauth-cimd",
            self.settings.cimd_fetches_per_hour,
            "metadata documents an hour from one host",
            &host,
            Duration::from_secs(3600),
        )
        .await?;
        let Some(fetcher) = &self.fetcher else {
            return Err(refused(
                "cannot be fetched: this server has no fetcher".into(),
            ));
        };
        let document = fetcher.get_document(client_id).await.map_err(|e| match e {
            FetchError::Status(s) if (300..400).contains(&s) => {
                refused(format!("answered a redirect ({s}), which is not followed"))
            }
            FetchError::Status(s) => refused(format!("answered {s}, not 200")),
            FetchError::TooLarge => {
                refused(format!("is larger than {} bytes", CIMD_LIMITS.max_bytes))
            }
            FetchError::Refused(why) => refused(format!("cannot be fetched: {why}")),
            FetchError::Transient(why) | FetchError::InvalidProxy(why) => {
                refused(format!("could not be fetched: {why}"))
            }
        })?;
        let value: Value =
            serde_json::from_slice(&document.body).map_err(|_| refused("is not JSON".into()))?;
        let Value::Object(fields) = &value else {
            return Err(refused("is not a JSON object".into()));
        };
        if fields.get("client_id").and_then(Value::as_str) != Some(client_id) {
            return Err(refused(
                "names another client_id (it must name its own URL)".into(),
            ));
        }
        if fields.contains_key("client_secret") || fields.contains_key("client_secret_expires_at") {
            return Err(refused("carries a secret".into()));
        }
        match fields
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
        {
            None | Some("none") => {}
            Some(other) => {
                return Err(refused(format!(
                    "asks for {}, and only public clients (none) are served",
                    quote(other)
                )));
            }
        }
        let uris = fields
            .get("redirect_uris")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| refused("has no redirect_uris".into()))?;
        let mut redirect_uris = Vec::new();
        for uri in uris {
            let uri = uri
                .as_str()
                .ok_or_else(|| refused("has a redirect URI that is not a string".into()))?;
            redirect_uris.push(uri.to_owned());
        }
        // A document declares its kind as a registration does (`application_type`).
        let listed: Vec<&str> = redirect_uris.iter().map(String::as_str).collect();
        let kind = application_type(fields.get("application_type"), &listed)
            .map_err(|e| refused(e.to_string()))?;
        for uri in &listed {
            check_redirect_uri(uri, kind).map_err(|e| refused(e.to_string()))?;
        }
        let client_name =
            client_name(fields.get("client_name")).map_err(|e| refused(e.to_string()))?;
        let now = Utc::now();
        let lifetime = cache_lifetime(document.cache_control.as_deref());
        Ok(ClientRecord {
            client_id: client_id.to_owned(),
            kind: "cimd".into(),
            client_name,
            redirect_uris,
            metadata: value.to_string(),
            fetched_at: Some(now),
            expires_at: chrono::Duration::from_std(lifetime).ok().map(|d| now + d),
        })
    }

    // ---- authorization

    /// Checks an authorization request for no one in particular: every refusal is a page.
    /// `public` is the issuer (the public base URL).
    pub async fn validate(
        &self,
        params: &AuthorizeParams,
        public: &str,
    ) -> Result<Authorization, AuthorizeFailure> {
        self.validate_as(params, public, None).await
    }

    /// Checks an authorization request of `person`. A refusal goes back to the client's
    /// redirect URI only when that is trusted twice over: it is one the client registered
    /// (exact match), and the person already holds a live grant to the client. Registration
    /// is open to anyone, so for any other client a redirect would make this server an open
    /// redirector (RFC 9700 §4.11.2): a registered `https://evil.example/` plus an unknown
    /// scope would send a signed-in person there without a click. Those refusals are pages.
    pub async fn validate_as(
        &self,
        params: &AuthorizeParams,
        public: &str,
        person: Option<UserId>,
    ) -> Result<Authorization, AuthorizeFailure> {
        let page = AuthorizeFailure::Page;
        let client_id = params.client_id.as_deref().unwrap_or_default();
        if client_id.is_empty() {
            return Err(page(OAuthError::InvalidRequest(
                "client_id: missing".into(),
            )));
        }
        let client = self.client(client_id).await.map_err(page)?;
        let redirect_uri = match params.redirect_uri.as_deref() {
            Some(asked) => {
                if !client
                    .redirect_uris
                    .iter()
                    .any(|r| redirect_matches(r, asked))
                {
                    return Err(page(OAuthError::InvalidRequest(format!(
                        "redirect_uri: {} is not one this client registered",
                        quote(asked)
                    ))));
                }
                asked.to_owned()
            }
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            None => {
                return Err(page(OAuthError::InvalidRequest(
                    "redirect_uri: missing, and the client registered more than one".into(),
                )));
            }
        };
        let challenge = params.code_challenge.as_deref().unwrap_or_default();
        if challenge.is_empty() {
            return Err(page(OAuthError::InvalidRequest(
                "code_challenge: missing; PKCE with S256 is required".into(),
            )));
        }
        match params.code_challenge_method.as_deref() {
            Some("S256") => {}
            None => {
                return Err(page(OAuthError::InvalidRequest(
                    "code_challenge_method: missing, which means plain; only S256 is accepted"
                        .into(),
                )));
            }
            Some(other) => {
                return Err(page(OAuthError::InvalidRequest(format!(
                    "code_challenge_method: {} is refused; only S256 is accepted",
                    quote(other)
                ))));
            }
        }
        if challenge.len() != 43 || !is_pkce_text(challenge) {
            return Err(page(OAuthError::InvalidRequest(
                "code_challenge: not an S256 challenge (43 base64url characters)".into(),
            )));
        }
        let approved = match person {
            Some(user) => self
                .store
                .has_live_grant(user, &client.client_id)
                .await
                .map_err(|e| page(e.into()))?,
            None => false,
        };
        let back = |error: OAuthError| {
            if approved {
                AuthorizeFailure::Redirect {
                    url: error_redirect(&redirect_uri, &error, params.state.as_deref(), public),
                    error,
                }
            } else {
                AuthorizeFailure::Page(error)
            }
        };
        if params.response_type.as_deref() != Some("code") {
            return Err(back(OAuthError::UnsupportedResponseType(
                "response_type: only code is supported".into(),
            )));
        }
        let scopes = parse_scope(params.scope.as_deref()).map_err(back)?;
        let expected = Self::resource_of(public);
        let resource = match params.resource.as_deref() {
            None | Some("") => expected,
            Some(r) if r == expected => expected,
            Some(r) => {
                return Err(back(OAuthError::InvalidTarget(format!(
                    "resource: {} is not served here; the one resource is {expected}",
                    quote(r)
                ))));
            }
        };
        let mut redirect_hosts: Vec<String> =
            client.redirect_uris.iter().map(|u| host_of(u)).collect();
        redirect_hosts.sort();
        redirect_hosts.dedup();
        let loopback_only = client.redirect_uris.iter().all(|u| {
            Url::parse(u)
                .ok()
                .is_some_and(|u| u.scheme() == "http" && u.host_str().is_some_and(is_loopback_host))
        });
        Ok(Authorization {
            client,
            redirect_uri,
            redirect_uri_given: params.redirect_uri.is_some(),
            state: params.state.clone(),
            code_challenge: challenge.to_owned(),
            scopes,
            resource,
            redirect_hosts,
            loopback_only,
        })
    }

    /// The person approved: records the grant, issues a code, and answers where to send the
    /// browser (the redirect URI with `code`, `state` and `iss`).
    pub async fn approve(
        &self,
        user: UserId,
        request: &Authorization,
        public: &str,
    ) -> Result<String, OAuthError> {
        let scopes = scope_text(&request.scopes);
        let grant = self
            .store
            .upsert_grant(user, &request.client.client_id, &scopes, &request.resource)
            .await?;
        let code = random_token(CODE_PREFIX);
        let expires = Utc::now() + chrono::Duration::from_std(CODE_TTL).unwrap_or_default();
        // The code keeps the redirect URI the request named, or "" when it named none: the
        // exchange must then repeat it, or may omit it.
        let asked = if request.redirect_uri_given {
            request.redirect_uri.as_str()
        } else {
            ""
        };
        self.store
            .put_code(
                &digest(&code),
                grant,
                &request.client.client_id,
                user,
                asked,
                &request.code_challenge,
                &scopes,
                &request.resource,
                expires,
            )
            .await?;
        self.audit(
            user,
            "agent_authorized",
            &format!(
                "{} ({}) may {}",
                request.client.client_name, request.client.client_id, scopes
            ),
        )
        .await;
        let mut url = Url::parse(&request.redirect_uri)
            .map_err(|_| OAuthError::Server("a registered redirect URI does not parse".into()))?;
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("code", &code);
            if let Some(state) = &request.state {
                pairs.append_pair("state", state);
            }
            pairs.append_pair("iss", public);
        }
        Ok(url.to_string())
    }

    /// The person denied: where to send the browser (`error=access_denied`).
    pub fn deny(&self, request: &Authorization, public: &str) -> String {
        error_redirect(
            &request.redirect_uri,
            &OAuthError::AccessDenied,
            request.state.as_deref(),
            public,
        )
    }

    // ---- tokens

    /// Answers `POST /oauth/token`.
    pub async fn token(
        &self,
        params: &TokenParams,
        public: &str,
    ) -> Result<TokenResponse, OAuthError> {
        match params.grant_type.as_deref() {
            Some("authorization_code") => self.exchange_code(params, public).await,
            Some("refresh_token") => self.refresh(params, public).await,
            Some(other) => Err(OAuthError::UnsupportedGrantType(format!(
                "grant_type: {} is not supported; use authorization_code or refresh_token",
                quote(other)
            ))),
            None => Err(OAuthError::InvalidRequest("grant_type: missing".into())),
        }
    }

    async fn exchange_code(
        &self,
        params: &TokenParams,
        public: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let required = |v: &Option<String>, name: &str| {
            v.as_deref()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| OAuthError::InvalidRequest(format!("{name}: missing")))
        };
        let code = required(&params.code, "code")?;
        let client_id = required(&params.client_id, "client_id")?;
        let verifier = required(&params.code_verifier, "code_verifier")?;
        let client = self.known_client(&client_id).await?;
        let code_digest = digest(&code);
        let Some(record) = self.store.code(&code_digest).await? else {
            return Err(OAuthError::InvalidGrant("code: unknown or expired".into()));
        };
        if record.used_at.is_some() {
            self.revoke_for_reuse(
                record.grant_id,
                record.user_id,
                "authorization code used twice",
            )
            .await?;
            return Err(OAuthError::InvalidGrant(
                "code: used already; every token it issued is revoked".into(),
            ));
        }
        if record.expires_at <= Utc::now() {
            return Err(OAuthError::InvalidGrant(
                "code: expired (codes live 2 minutes)".into(),
            ));
        }
        if record.client_id != client_id {
            return Err(OAuthError::InvalidGrant(
                "code: issued to another client".into(),
            ));
        }
        match (
            record.redirect_uri.as_str(),
            params.redirect_uri.as_deref().filter(|r| !r.is_empty()),
        ) {
            ("", None) => {}
            // The request named none, so it went to the one registered URI.
            ("", Some(given)) if client.redirect_uris.iter().any(|r| r == given) => {}
            (asked, Some(given)) if !asked.is_empty() && asked == given => {}
            (asked, None) if !asked.is_empty() => {
                return Err(OAuthError::InvalidGrant(
                    "redirect_uri: missing; the authorization request named one, so the exchange must repeat it"
                        .into(),
                ));
            }
            _ => {
                return Err(OAuthError::InvalidGrant(
                    "redirect_uri: not the one the code was issued for".into(),
                ));
            }
        }
        if !is_pkce_text(&verifier) || !constant_eq(&s256(&verifier), &record.code_challenge) {
            return Err(OAuthError::InvalidGrant(
                "code_verifier: does not match the code_challenge".into(),
            ));
        }
        if let Some(resource) = params.resource.as_deref().filter(|r| !r.is_empty())
            && resource != record.resource
        {
            return Err(OAuthError::InvalidTarget(format!(
                "resource: the code was issued for {}",
                record.resource
            )));
        }
        if !self.store.consume_code(&code_digest).await? {
            // Another request redeemed it in between: that is a second use too.
            self.revoke_for_reuse(
                record.grant_id,
                record.user_id,
                "authorization code used twice",
            )
            .await?;
            return Err(OAuthError::InvalidGrant(
                "code: used already; every token it issued is revoked".into(),
            ));
        }
        match self.store.grant_state(record.grant_id).await? {
            Some((_, _, false)) => {}
            _ => {
                return Err(OAuthError::InvalidGrant(
                    "code: its grant was revoked".into(),
                ));
            }
        }
        self.store.touch_client(&client_id).await?;
        let _ = public;
        self.issue(
            record.grant_id,
            &client_id,
            record.user_id,
            &record.scopes,
            &record.resource,
        )
        .await
    }

    /// The client a token request names, from storage only (the token endpoint never fetches
    /// a metadata document: every client that holds a code or token was stored when the
    /// person authorized it). Unknown: `invalid_client` (RFC 6749 §5.2), not a grant error.
    async fn known_client(&self, client_id: &str) -> Result<ClientRecord, OAuthError> {
        self.store.client(client_id).await?.ok_or_else(|| {
            OAuthError::InvalidClient(format!(
                "client_id: no client {} is registered",
                quote(client_id)
            ))
        })
    }

    async fn refresh(
        &self,
        params: &TokenParams,
        public: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let token = params
            .refresh_token
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OAuthError::InvalidRequest("refresh_token: missing".into()))?;
        let client_id = params
            .client_id
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OAuthError::InvalidRequest("client_id: missing".into()))?;
        self.known_client(client_id).await?;
        let old = digest(token);
        let Some(record) = self
            .store
            .token(&old)
            .await?
            .filter(|t| t.kind == "refresh")
        else {
            return Err(OAuthError::InvalidGrant("refresh_token: unknown".into()));
        };
        if record.client_id != client_id {
            return Err(OAuthError::InvalidGrant(
                "refresh_token: issued to another client".into(),
            ));
        }
        if record.revoked_at.is_some() || record.grant_revoked {
            return Err(OAuthError::InvalidGrant("refresh_token: revoked".into()));
        }
        if record.used_at.is_some() {
            self.revoke_for_reuse(record.grant_id, record.user_id, "refresh token used twice")
                .await?;
            return Err(OAuthError::InvalidGrant(
                "refresh_token: used already; the grant is revoked, authorize again".into(),
            ));
        }
        if record.expires_at <= Utc::now() {
            return Err(OAuthError::InvalidGrant("refresh_token: expired".into()));
        }
        let granted = parse_scope(Some(&record.scopes))?;
        let scopes = match params.scope.as_deref().filter(|s| !s.trim().is_empty()) {
            None => granted,
            Some(asked) => {
                let asked = parse_scope(Some(asked))?;
                if let Some(extra) = asked.iter().find(|s| !granted.contains(s)) {
                    return Err(OAuthError::InvalidScope(format!(
                        "scope: {extra} was not granted"
                    )));
                }
                asked
            }
        };
        if let Some(resource) = params.resource.as_deref().filter(|r| !r.is_empty())
            && resource != record.audience
        {
            return Err(OAuthError::InvalidTarget(format!(
                "resource: the grant is for {}",
                record.audience
            )));
        }
        let _ = public;
        let refresh = random_token(REFRESH_TOKEN_PREFIX);
        if !self.store.consume_refresh(&old, &digest(&refresh)).await? {
            self.revoke_for_reuse(record.grant_id, record.user_id, "refresh token used twice")
                .await?;
            return Err(OAuthError::InvalidGrant(
                "refresh_token: used already; the grant is revoked, authorize again".into(),
            ));
        }
        if self.due(&self.refresh_audited, record.grant_id, REFRESH_AUDIT_EVERY) {
            self.audit(record.user_id, "agent_refreshed", &record.client_id)
                .await;
        }
        self.issue_with(
            record.grant_id,
            client_id,
            record.user_id,
            &scope_text(&scopes),
            &record.audience,
            refresh,
        )
        .await
    }

    async fn issue(
        &self,
        grant: Uuid,
        client_id: &str,
        user: UserId,
        scopes: &str,
        audience: &str,
    ) -> Result<TokenResponse, OAuthError> {
        self.issue_with(
            grant,
            client_id,
            user,
            scopes,
            audience,
            random_token(REFRESH_TOKEN_PREFIX),
        )
        .await
    }

    async fn issue_with(
        &self,
        grant: Uuid,
        client_id: &str,
        user: UserId,
        scopes: &str,
        audience: &str,
        refresh: String,
    ) -> Result<TokenResponse, OAuthError> {
        let access = random_token(ACCESS_TOKEN_PREFIX);
        let now = Utc::now();
        let ttl = Duration::from_secs(self.settings.access_ttl_secs.max(1));
        let access_digest = digest(&access);
        let refresh_digest = digest(&refresh);
        for (digest, kind, life) in [
            (&access_digest, "access", ttl),
            (&refresh_digest, "refresh", REFRESH_TTL),
        ] {
            self.store
                .put_token(&NewToken {
                    digest,
                    kind,
                    grant_id: grant,
                    client_id,
                    user_id: user,
                    scopes,
                    audience,
                    expires_at: now + chrono::Duration::from_std(life).unwrap_or_default(),
                })
                .await?;
        }
        Ok(TokenResponse {
            access_token: access,
            token_type: "Bearer",
            expires_in: ttl.as_secs(),
            refresh_token: refresh,
            scope: scopes.to_owned(),
        })
    }

    async fn revoke_for_reuse(
        &self,
        grant: Uuid,
        user: UserId,
        why: &str,
    ) -> Result<(), OAuthError> {
        self.store.revoke_grant(grant, None).await?;
        tracing::warn!(%grant, why, "oauth: grant revoked");
        self.audit(user, "agent_revoked", why).await;
        Ok(())
    }

    /// RFC 7009: revokes the grant a token belongs to (so its refresh and access tokens die
    /// together). Unknown tokens and other clients' tokens are answered the same, silently.
    pub async fn revoke(&self, token: &str, client_id: Option<&str>) -> Result<(), OAuthError> {
        let Some(record) = self.store.token(&digest(token.trim())).await? else {
            return Ok(());
        };
        if client_id.is_some_and(|c| c != record.client_id) {
            return Ok(());
        }
        if self.store.revoke_grant(record.grant_id, None).await.is_ok() {
            self.audit(
                record.user_id,
                "agent_revoked",
                &format!("{} revoked its token", record.client_id),
            )
            .await;
        }
        Ok(())
    }

    /// The agent a bearer token stands for on the resource `resource`, or why not. `None`:
    /// not an agent token at all.
    pub async fn authenticate(
        &self,
        token: &str,
        resource: &str,
    ) -> Result<Option<Result<Agent, TokenRefusal>>, OAuthError> {
        if !token.starts_with(ACCESS_TOKEN_PREFIX) {
            return Ok(None);
        }
        if token.len() != 68 {
            return Ok(Some(Err(TokenRefusal::Unknown)));
        }
        let Some(record) = self
            .store
            .token(&digest(token))
            .await?
            .filter(|t| t.kind == "access")
        else {
            return Ok(Some(Err(TokenRefusal::Unknown)));
        };
        if record.revoked_at.is_some() || record.grant_revoked {
            return Ok(Some(Err(TokenRefusal::Revoked)));
        }
        if record.expires_at <= Utc::now() {
            return Ok(Some(Err(TokenRefusal::Expired)));
        }
        if record.audience != resource {
            return Ok(Some(Err(TokenRefusal::WrongAudience)));
        }
        if self.due(&self.touched, record.grant_id, TOUCH_EVERY) {
            self.store.touch_grant(record.grant_id).await?;
        }
        Ok(Some(Ok(Agent {
            principal: Principal {
                user_id: record.user_id,
                scopes: parse_scope(Some(&record.scopes)).unwrap_or_default(),
            },
            grant_id: record.grant_id,
            client_id: record.client_id,
        })))
    }

    // ---- the person's agents

    /// The agents `user` authorized (live grants).
    pub async fn agents(&self, user: UserId) -> Result<Vec<AgentGrant>, OAuthError> {
        Ok(self
            .store
            .grants_of(user)
            .await?
            .into_iter()
            .map(AgentGrant::from)
            .collect())
    }

    /// Revokes `user`'s grant `grant_id` and every token of it; false: no such live grant.
    pub async fn revoke_agent(&self, user: UserId, grant_id: Uuid) -> Result<bool, OAuthError> {
        let revoked = self.store.revoke_grant(grant_id, Some(user)).await?;
        if revoked {
            self.audit(
                user,
                "agent_revoked",
                &format!("grant {grant_id} revoked by its person"),
            )
            .await;
        }
        Ok(revoked)
    }

    /// Whether `key` is due (not seen within `every`), and marks it seen.
    fn due(&self, seen: &Mutex<HashMap<Uuid, Instant>>, key: Uuid, every: Duration) -> bool {
        let Ok(mut seen) = seen.lock() else {
            return true;
        };
        let now = Instant::now();
        if seen.len() > 10_000 {
            seen.retain(|_, at| now.duration_since(*at) < every);
        }
        match seen.get(&key) {
            Some(at) if now.duration_since(*at) < every => false,
            _ => {
                seen.insert(key, now);
                true
            }
        }
    }

    async fn audit(&self, user: UserId, kind: &str, detail: &str) {
        if let Err(e) = self.identity.audit(user, kind, detail).await {
            tracing::warn!(error = %e, kind, "oauth: the audit row could not be written");
        }
    }
}

fn error_redirect(
    redirect_uri: &str,
    error: &OAuthError,
    state: Option<&str>,
    public: &str,
) -> String {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return redirect_uri.to_owned();
    };
    {
        let mut pairs = url.query_pairs_mut();
        pairs.append_pair("error", error.code());
        pairs.append_pair("error_description", &error.to_string());
        if let Some(state) = state {
            pairs.append_pair("state", state);
        }
        pairs.append_pair("iss", public);
    }
    url.to_string()
}

fn check_list(value: Option<&Value>, name: &str, allowed: &[&str]) -> Result<(), OAuthError> {
    let Some(value) = value else { return Ok(()) };
    let items = value
        .as_array()
        .ok_or_else(|| OAuthError::InvalidClientMetadata(format!("{name}: must be an array")))?;
    for item in items {
        let text = item.as_str().unwrap_or_default();
        if !allowed.contains(&text) {
            return Err(OAuthError::InvalidClientMetadata(format!(
                "{name}: {} is not supported; accepted: {}",
                quote(text),
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

fn client_name(value: Option<&Value>) -> Result<String, OAuthError> {
    match value {
        None | Some(Value::Null) => Ok("Unnamed client".into()),
        Some(Value::String(name)) => {
            let clean: String = etappe_domain::text::strip_controls(name)
                .trim()
                .chars()
                .take(100)
                .collect();
            Ok(if clean.is_empty() {
                "Unnamed client".into()
            } else {
                clean
            })
        }
        Some(_) => Err(OAuthError::InvalidClientMetadata(
            "client_name: must be a string".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
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
