//! People's accounts: the rules of logging in by magic link, of sessions, of personal access
//! tokens as a person manages them, and of exporting and deleting an account. The rows live in
//! `identity`; the transport (`web`) only translates.
//!
//! - A login request answers the same whatever the address (no enumeration); the mail goes
//!   out on a spawned task, so its timing tells nothing either. Per client address, over the
//!   limit is a 429 (it reveals nothing about any account); per e-mail address, over the limit
//!   is answered like any other request and nothing is sent (a 429 there would tell that the
//!   address was asked for recently).
//! - A link is single use and short-lived; the account is created when the link is used,
//!   never when it is asked for.
//! - Sessions slide: each use moves the expiry, written at most every [`TOUCH_EVERY`] so a busy
//!   page does not turn every read into a write.
//! - Deletion removes the person's trips (streams, read models, share links, files),
//!   identity rows and the login mail the mailer keeps for them, and leaves an audit row
//!   with no personal data as the tombstone.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::trip::{FieldError, InputError};
use etappe_events::Store;
use etappe_mail::{Mail, Mailer};
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::AppError;
use crate::budgets::{Budget, Budgets, key_of};
use crate::identity::magic_links::Redeemed;
use crate::identity::users::normalize_email;
use crate::identity::{
    AuditEntry, Identity, NewSession, Principal, Scope, SessionInfo, SessionRow, TokenRow, UserRow,
};
use crate::settings::PeopleSettings;

/// How often a used session's expiry is written at most.
pub const TOUCH_EVERY: Duration = Duration::from_secs(5 * 60);
/// The window the login budgets count in.
pub const LOGIN_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Where the server is reached from a browser: links are built on it, cookie-authenticated
/// writes must come from it, and under https the cookie is `Secure` and `__Host-`.
#[derive(Clone, Debug)]
pub struct WebOrigin {
    /// The base URL without a trailing slash (`https://etappe.example`).
    pub base: String,
    /// Origins accepted on cookie-authenticated writes: the base's, its loopback twins
    /// (`localhost` for `127.0.0.1` on the same port) and the listed browser origins.
    pub accepted: Vec<String>,
    /// Whether the base is https.
    pub secure: bool,
}

impl WebOrigin {
    /// The origin of `base` (and, on loopback, its twins), plus `listed`.
    pub fn of(base: &url::Url, listed: &[String]) -> Self {
        let origin = base.origin().ascii_serialization();
        let mut accepted = vec![origin];
        let loopback = matches!(
            base.host_str(),
            Some("127.0.0.1" | "localhost" | "[::1]" | "::1")
        );
        if loopback {
            let port = base.port().map(|p| format!(":{p}")).unwrap_or_default();
            for host in ["127.0.0.1", "localhost", "[::1]"] {
                accepted.push(format!("{}://{host}{port}", base.scheme()));
            }
        }
        accepted.extend(listed.iter().map(|o| o.trim_end_matches('/').to_owned()));
        accepted.dedup();
        Self {
            base: base.as_str().trim_end_matches('/').to_owned(),
            accepted,
            secure: base.scheme() == "https",
        }
    }

    /// The session cookie's name: `__Host-` under https (which requires `Secure`, `Path=/`
    /// and no `Domain`, so no sibling host can set or shadow it).
    pub fn cookie_name(&self) -> &'static str {
        if self.secure {
            "__Host-etappe_session"
        } else {
            "etappe_session"
        }
    }

    /// Whether `origin` (an `Origin` header's value) is one of ours.
    pub fn accepts(&self, origin: &str) -> bool {
        let origin = origin.trim().trim_end_matches('/');
        self.accepted.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// A person's account, as `GET /users/me` shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    pub id: UserId,
    pub email: String,
    pub created_at: chrono::DateTime<Utc>,
    pub sessions: Vec<SessionRow>,
    pub tokens: Vec<TokenRow>,
    /// The agents (OAuth clients) the person has authorized.
    pub agents: Vec<Value>,
    /// The session's synchronizer token, for the page's writes (absent with a bearer token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csrf_token: Option<String>,
    /// The session this request came with, if it came with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_session: Option<Uuid>,
}

/// A token just created: the clear value is shown this once.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    pub id: Uuid,
    pub token: String,
    pub label: String,
    pub scopes: Vec<Scope>,
}

/// The one source of the agents an account lists; the OAuth side registers its reader here.
pub type AgentsOf = Arc<
    dyn Fn(UserId) -> futures::future::BoxFuture<'static, Result<Vec<Value>, AppError>>
        + Send
        + Sync,
>;

/// The accounts service.
pub struct Accounts {
    identity: Arc<Identity>,
    store: Arc<dyn Store>,
    mailer: Arc<dyn Mailer>,
    budgets: Arc<Budgets>,
    settings: PeopleSettings,
    /// Where browsers reach the server.
    pub web: WebOrigin,
    agents: Option<AgentsOf>,
}

impl Accounts {
    /// The map tiles' URL template of the rider's page (empty: none).
    pub fn tile_url(&self) -> &str {
        &self.settings.tile_url
    }
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts")
            .field("web", &self.web)
            .field("mailer", &self.mailer)
            .finish_non_exhaustive()
    }
}

fn invalid(field: &str, message: impl Into<String>) -> AppError {
    AppError::Input(InputError::Invalid(vec![FieldError::new(field, message)]))
}

/// Why a link that is not live is refused (the page and the POST say the same).
fn link_refusal(found: &Redeemed) -> AppError {
    match found {
        Redeemed::Used => {
            AppError::LoginLinkSpent("this login link was used already: ask for a new one".into())
        }
        Redeemed::Expired => {
            AppError::LoginLinkSpent("this login link has expired: ask for a new one".into())
        }
        Redeemed::Email(_) | Redeemed::Unknown => AppError::LoginLinkInvalid,
    }
}

/// `next` if it is a path on this server (`/trips/…`), else `None`: an open redirect would
/// let a link in a mail from us lead elsewhere.
pub fn safe_next(next: Option<&str>) -> Option<String> {
    let next = next?.trim();
    let ok = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/\\")
        && next.len() <= 512
        && !next.chars().any(|c| c.is_control() || c == '\\');
    ok.then(|| next.to_owned())
}

/// Where a page that needs a session sends a browser without one: the login form, which
/// carries `next` (a path on this server) through the mail and back.
pub fn login_path(next: &str) -> String {
    match safe_next(Some(next)) {
        Some(next) => format!(
            "/login?next={}",
            url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
        ),
        None => "/login".into(),
    }
}

impl Accounts {
    /// The service over its stores, mailer and budgets.
    pub fn new(
        identity: Arc<Identity>,
        store: Arc<dyn Store>,
        mailer: Arc<dyn Mailer>,
        budgets: Arc<Budgets>,
        settings: PeopleSettings,
        web: WebOrigin,
    ) -> Self {
        Self {
            identity,
            store,
            mailer,
            budgets,
            settings,
            web,
            agents: None,
        }
    }

    /// Names where the agents an account lists come from (the OAuth grants).
    pub fn with_agents(mut self, agents: AgentsOf) -> Self {
        self.agents = Some(agents);
        self
    }

    fn link_ttl(&self) -> chrono::Duration {
        chrono::Duration::seconds(
            i64::try_from(self.settings.login_link_ttl_secs.max(1)).unwrap_or(900),
        )
    }

    fn session_ttl(&self) -> chrono::Duration {
        chrono::Duration::days(
            i64::try_from(self.settings.session_days.clamp(1, 3650)).unwrap_or(30),
        )
    }

    /// The session cookie's lifetime in seconds (its `Max-Age`).
    pub fn session_max_age(&self) -> i64 {
        self.session_ttl().num_seconds()
    }

    /// The login URL a link token opens.
    fn link_url(&self, token: &str, next: Option<&str>) -> String {
        let mut url = format!("{}/auth/magic?token={token}", self.web.base);
        if let Some(next) = next {
            url.push_str("&next=");
            url.extend(url::form_urlencoded::byte_serialize(next.as_bytes()));
        }
        url
    }

    /// `POST /auth/login`: sends a login link to `email` unless a budget is spent. Answers
    /// `Ok` alike for a known and an unknown address, and for a spent per-address budget.
    pub async fn request_login(
        &self,
        email: &str,
        next: Option<&str>,
        peer: IpAddr,
    ) -> Result<(), AppError> {
        let email = normalize_email(email).map_err(|_| {
            invalid(
                "email",
                "must be an e-mail address (name@domain, at most 180 characters, no invisible characters)",
            )
        })?;
        let per_address = Budget {
            name: "login-address",
            limit: self.settings.logins_per_address,
            what: "login requests from one address",
        };
        self.budgets
            .admit_within(&key_of(&[&peer.to_string()]), &[per_address], LOGIN_WINDOW)
            .await
            .map_err(AppError::LoginRateLimited)?;
        let per_email = Budget {
            name: "login-email",
            limit: self.settings.logins_per_email,
            what: "login requests for one e-mail address",
        };
        if self
            .budgets
            .admit_within(&key_of(&[&email]), &[per_email], LOGIN_WINDOW)
            .await
            .is_err()
        {
            // Answered like any other request: a refusal would tell that this address was
            // asked for recently.
            tracing::info!("login request over the per-e-mail budget: no mail sent");
            return Ok(());
        }
        let token = self
            .identity
            .create_magic_link(&email, self.link_ttl())
            .await?;
        let mail = Mail {
            to: email,
            subject: "Your Etappe login link".into(),
            text: format!(
                "Open this link to log in to Etappe (it works once, for {} minutes):\n\n{}\n\n\
                 If you did not ask for it, ignore this message: nothing happens without the link.\n",
                self.settings.login_link_ttl_secs.div_ceil(60),
                self.link_url(&token, safe_next(next).as_deref())
            ),
        };
        let mailer = Arc::clone(&self.mailer);
        tokio::spawn(async move {
            // The error never holds the body, so the link is not logged.
            if let Err(error) = mailer.send(&mail).await {
                tracing::warn!(%error, "the login mail was not sent");
            }
        });
        Ok(())
    }

    /// A fresh login URL for `email` (the first-start link printed for the local user).
    pub async fn login_url_for(&self, email: &str) -> Result<String, AppError> {
        let email = normalize_email(email).map_err(|e| AppError::Internal(e.to_string()))?;
        let token = self
            .identity
            .create_magic_link(&email, self.link_ttl())
            .await?;
        Ok(self.link_url(&token, None))
    }

    /// `GET /auth/magic`: the address the link `token` logs into, spending nothing, so the
    /// page can name it (a link handed over by someone else opens *their* account: the page
    /// says whose). A link that redeeming would refuse is refused the same way here.
    pub async fn link_preview(&self, token: &str) -> Result<String, AppError> {
        match self.identity.peek_magic_link(token).await? {
            Redeemed::Email(email) => Ok(email),
            refused => Err(link_refusal(&refused)),
        }
    }

    /// The address of `user`'s account (`None`: no such account).
    pub async fn email_of(&self, user: UserId) -> Result<Option<String>, AppError> {
        Ok(self.identity.user(user).await?.map(|row| row.email))
    }

    /// `POST /auth/magic`: spends the link, creates the account on first use, opens a new
    /// session (a login always gets a new session id: fixation is impossible).
    pub async fn redeem(&self, token: &str, user_agent: &str) -> Result<NewSession, AppError> {
        let email = match self.identity.redeem_magic_link(token).await? {
            Redeemed::Email(email) => email,
            refused => return Err(link_refusal(&refused)),
        };
        let user = self.identity.ensure_user(&email).await?;
        let session = self
            .identity
            .create_session(user, self.session_ttl(), user_agent)
            .await?;
        self.identity
            .audit(user, "login", &format!("session {}", session.session_id))
            .await?;
        Ok(session)
    }

    /// The live session a cookie value opens, slid forward when it was last written more
    /// than [`TOUCH_EVERY`] ago.
    pub async fn session(&self, cookie: &str) -> Result<Option<SessionInfo>, AppError> {
        let Some(session) = self.identity.session(cookie).await? else {
            return Ok(None);
        };
        let stale = Utc::now()
            .signed_duration_since(session.last_seen_at)
            .to_std()
            .is_ok_and(|age| age >= TOUCH_EVERY);
        if stale {
            self.identity
                .touch_session(session.session_id, self.session_ttl())
                .await?;
        }
        Ok(Some(session))
    }

    /// The principal of a session: a person logged in holds every scope.
    pub fn principal_of(session: &SessionInfo) -> Principal {
        Principal {
            user_id: session.user_id,
            scopes: Scope::ALL.to_vec(),
        }
    }

    /// `POST /auth/logout`: ends the session.
    pub async fn logout(&self, session: &SessionInfo) -> Result<(), AppError> {
        if self
            .identity
            .revoke_session(session.user_id, session.session_id)
            .await?
        {
            self.identity
                .audit(
                    session.user_id,
                    "logout",
                    &format!("session {}", session.session_id),
                )
                .await?;
        }
        Ok(())
    }

    /// The caller's own account (gone: not signed in any more).
    async fn account_of(&self, principal: &Principal) -> Result<UserRow, AppError> {
        self.identity
            .user(principal.user_id)
            .await?
            .ok_or(AppError::Unauthenticated)
    }

    /// `GET /users/me`.
    pub async fn me(
        &self,
        principal: &Principal,
        session: Option<&SessionInfo>,
    ) -> Result<Me, AppError> {
        let user = principal.user_id;
        let row = self.account_of(principal).await?;
        let agents = match &self.agents {
            Some(agents) => agents(user).await?,
            // No OAuth grants in this build: an account has no agents to list.
            None => Vec::new(),
        };
        Ok(Me {
            id: user,
            email: row.email,
            created_at: row.created_at,
            sessions: self.identity.sessions_of(user).await?,
            tokens: self.identity.tokens_of(user).await?,
            agents,
            csrf_token: session.map(|s| s.csrf_token.clone()),
            current_session: session.map(|s| s.session_id),
        })
    }

    /// `GET /users/me/sessions`.
    pub async fn sessions(&self, principal: &Principal) -> Result<Vec<SessionRow>, AppError> {
        Ok(self.identity.sessions_of(principal.user_id).await?)
    }

    /// `DELETE /users/me/sessions/{id}`.
    pub async fn revoke_session(&self, principal: &Principal, id: Uuid) -> Result<(), AppError> {
        if !self.identity.revoke_session(principal.user_id, id).await? {
            return Err(AppError::NoSuchCredential);
        }
        self.identity
            .audit(
                principal.user_id,
                "session_revoked",
                &format!("session {id}"),
            )
            .await?;
        Ok(())
    }

    /// `POST /users/me/tokens`: a personal access token, shown once. Needs a session (a
    /// token cannot mint tokens: a read-only one would otherwise mint a writer).
    pub async fn create_token(
        &self,
        session: Option<&SessionInfo>,
        label: &str,
        scopes: &[Scope],
    ) -> Result<CreatedToken, AppError> {
        let session = session.ok_or(AppError::SessionRequired)?;
        let label = label.trim();
        if label.chars().count() > 80 || label.chars().any(char::is_control) {
            return Err(invalid(
                "label",
                "at most 80 characters, no control characters",
            ));
        }
        if scopes.is_empty() {
            return Err(invalid(
                "scopes",
                "name at least one of trips:read, trips:write",
            ));
        }
        let (id, token) = self
            .identity
            .create_token_with_id(session.user_id, scopes, label)
            .await?;
        self.identity
            .audit(session.user_id, "token_created", &format!("token {id}"))
            .await?;
        let mut scopes = scopes.to_vec();
        scopes.sort_unstable();
        scopes.dedup();
        Ok(CreatedToken {
            id,
            token,
            label: label.to_owned(),
            scopes,
        })
    }

    /// `DELETE /users/me/tokens/{id}`.
    pub async fn revoke_token(&self, principal: &Principal, id: Uuid) -> Result<(), AppError> {
        if !self
            .identity
            .revoke_token_by_id(principal.user_id, id)
            .await?
        {
            return Err(AppError::NoSuchCredential);
        }
        self.identity
            .audit(principal.user_id, "token_revoked", &format!("token {id}"))
            .await?;
        Ok(())
    }

    /// `GET /users/me/audit`: newest first.
    pub async fn audit(
        &self,
        principal: &Principal,
        limit: u32,
        offset: u32,
    ) -> Result<(Vec<AuditEntry>, u64), AppError> {
        Ok(self
            .identity
            .audit_of(principal.user_id, limit.clamp(1, 200), offset)
            .await?)
    }

    /// `GET /users/me/export`: the account and every trip it ever had, each with its whole
    /// event history (deleted trips included: their events are the person's data too).
    pub async fn export(&self, principal: &Principal) -> Result<Value, AppError> {
        let user = principal.user_id;
        let row = self.account_of(principal).await?;
        let mut trips = Vec::new();
        for trip_id in self.store.owned_trips(user).await? {
            let events = self.store.read_stream(&trip_id.stream_id()).await?;
            let view = self.store.trip_view(trip_id).await?;
            trips.push(json!({
                "tripId": trip_id,
                "deleted": view.is_none(),
                "title": view.as_ref().and_then(|v| v.trip.settings.title.as_deref().map(etappe_domain::text::strip_controls)),
                "events": events.iter().map(|e| json!({
                    "streamVersion": e.version,
                    "eventId": e.event_id,
                    "eventType": e.event_type,
                    "schemaVersion": e.schema_version,
                    "recordedAt": e.recorded_at,
                    "data": e.data,
                    "metadata": e.metadata,
                })).collect::<Vec<_>>(),
            }));
        }
        self.identity
            .audit(user, "export", &format!("{} trips", trips.len()))
            .await?;
        Ok(json!({
            "format": "etappe-account-export/1",
            "exportedAt": Utc::now(),
            "account": {"id": user, "email": row.email, "createdAt": row.created_at},
            "sessions": self.identity.sessions_of(user).await?,
            "tokens": self.identity.tokens_of(user).await?,
            "audit": self.identity.audit_of(user, 1000, 0).await?.0,
            "trips": trips,
        }))
    }

    /// `DELETE /users/me`: needs a session and the account's address as confirmation.
    /// Removes every trip (events, read models, share links, files), then the user row,
    /// which takes its sessions and tokens with it in one statement, then the mail the file
    /// mailbox keeps for the address; leaves one PII-free audit row (`account_deleted`, the
    /// number of trips) as the tombstone.
    pub async fn delete(
        &self,
        session: Option<&SessionInfo>,
        confirm: Option<&str>,
    ) -> Result<usize, AppError> {
        let session = session.ok_or(AppError::SessionRequired)?;
        let user = session.user_id;
        let row = self
            .identity
            .user(user)
            .await?
            .ok_or(AppError::Unauthenticated)?;
        let confirmed = confirm
            .and_then(|c| normalize_email(c).ok())
            .is_some_and(|c| c == row.email);
        if !confirmed {
            return Err(invalid(
                "confirm",
                "send the account's e-mail address as confirm to delete the account and all its trips",
            ));
        }
        let trips: Vec<TripId> = self.store.owned_trips(user).await?;
        self.store.purge_trips(&trips).await?;
        self.identity.delete_user(user).await?;
        // The login mails kept for the address go with the account: each holds a link that
        // would open an account under that address again.
        if let Err(error) = self.mailer.forget(&row.email).await {
            tracing::warn!(%error, "the deleted account's mail could not be deleted");
        }
        self.identity
            .audit(user, "account_deleted", &format!("{} trips", trips.len()))
            .await?;
        Ok(trips.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_a_path_on_this_server_or_nothing() {
        assert_eq!(
            safe_next(Some("/trips/1?x=2")).as_deref(),
            Some("/trips/1?x=2")
        );
        for bad in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil",
            "trips",
            "/a\nb",
        ] {
            assert_eq!(safe_next(Some(bad)), None, "{bad:?}");
        }
        assert_eq!(safe_next(None), None);
    }

    #[test]
    fn a_page_sends_a_browser_without_session_to_the_login_form_and_back() {
        assert_eq!(
            login_path("/oauth/authorize?client_id=a&state=b"),
            "/login?next=%2Foauth%2Fauthorize%3Fclient_id%3Da%26state%3Db"
        );
        assert_eq!(login_path("https://evil.example/"), "/login");
    }

    #[test]
    fn the_origin_derives_from_the_public_url() {
        let https = WebOrigin::of(
            &url::Url::parse("https://etappe.example/").expect("url"),
            &[],
        );
        assert!(https.secure);
        assert_eq!(https.cookie_name(), "__Host-etappe_session");
        assert!(https.accepts("https://etappe.example"));
        assert!(!https.accepts("http://etappe.example"));
        assert!(!https.accepts("https://evil.example"));
        let local = WebOrigin::of(&url::Url::parse("http://127.0.0.1:8080").expect("url"), &[]);
        assert!(!local.secure);
        assert_eq!(local.cookie_name(), "etappe_session");
        assert!(local.accepts("http://localhost:8080"));
        assert!(!local.accepts("http://localhost:8081"));
        assert_eq!(local.base, "http://127.0.0.1:8080");
    }
}
