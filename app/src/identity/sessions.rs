//! Browser sessions: the cookie value is `ets_` and 256 random bits; the row keeps its digest,
//! the session's synchronizer CSRF token, when it was last seen and when it expires. Looked up
//! on every request (no cache), so a revocation holds at once on every replica.

use chrono::{DateTime, Duration, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use uuid::Uuid;

use super::{Identity, IdentityError, random_secret, token_digest};

/// A session just opened: the clear cookie value is given once, to be set on the browser.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub session_id: Uuid,
    pub user_id: UserId,
    pub cookie: String,
    pub csrf_token: String,
}

/// A live session, as a request presenting its cookie finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    pub session_id: Uuid,
    pub user_id: UserId,
    pub csrf_token: String,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// A session as its owner sees it listed.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The browser's `User-Agent`, cut short: to tell one's sessions apart.
    pub user_agent: String,
}

/// Whether a cookie value has the shape of a session's (so junk costs no query).
fn looks_like_session(cookie: &str) -> bool {
    cookie.len() == 68 && cookie.starts_with("ets_")
}

impl Identity {
    /// Opens a session for `user`, expiring after `ttl` unless it is used.
    pub async fn create_session(
        &self,
        user: UserId,
        ttl: Duration,
        user_agent: &str,
    ) -> Result<NewSession, IdentityError> {
        let cookie = format!("ets_{}", random_secret());
        let csrf_token = random_secret();
        let session_id = Uuid::now_v7();
        let now = Utc::now();
        let agent: String = user_agent.chars().take(120).collect();
        self.db
            .execute(
                "INSERT INTO sessions (session_id, user_id, token_sha256, csrf_token, created_at, last_seen_at, expires_at, user_agent) \
                 VALUES ($1, $2, $3, $4, $5, $5, $6, $7)",
                &[
                    session_id.into(),
                    user.into(),
                    token_digest(&cookie).into(),
                    (&csrf_token).into(),
                    now.into(),
                    (now + ttl).into(),
                    agent.into(),
                ],
            )
            .await?;
        Ok(NewSession {
            session_id,
            user_id: user,
            cookie,
            csrf_token,
        })
    }

    /// The live session (not revoked, not expired) this cookie value opens, if any.
    pub async fn session(&self, cookie: &str) -> Result<Option<SessionInfo>, IdentityError> {
        if !looks_like_session(cookie) {
            return Ok(None);
        }
        self.db
            .fetch_optional(
                "SELECT session_id, user_id, csrf_token, last_seen_at, expires_at FROM sessions \
                 WHERE token_sha256 = $1 AND revoked_at IS NULL AND expires_at > $2",
                &[token_digest(cookie).into(), Utc::now().into()],
            )
            .await?
            .map(|r| {
                Ok(SessionInfo {
                    session_id: r.uuid("session_id")?,
                    user_id: UserId(r.uuid("user_id")?),
                    csrf_token: r.text("csrf_token")?,
                    last_seen_at: r.time("last_seen_at")?,
                    expires_at: r.time("expires_at")?,
                })
            })
            .transpose()
    }

    /// Slides a session: seen now, expiring `ttl` from now (never revives a revoked one).
    pub async fn touch_session(
        &self,
        session_id: Uuid,
        ttl: Duration,
    ) -> Result<(), IdentityError> {
        let now = Utc::now();
        self.db
            .execute(
                "UPDATE sessions SET last_seen_at = $1, expires_at = $2 WHERE session_id = $3 AND revoked_at IS NULL",
                &[now.into(), (now + ttl).into(), session_id.into()],
            )
            .await?;
        Ok(())
    }

    /// `user`'s live sessions, newest first.
    pub async fn sessions_of(&self, user: UserId) -> Result<Vec<SessionRow>, IdentityError> {
        self.db
            .fetch_all(
                "SELECT session_id, created_at, last_seen_at, expires_at, user_agent FROM sessions \
                 WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 \
                 ORDER BY created_at DESC, session_id DESC",
                &[user.into(), Utc::now().into()],
            )
            .await?
            .iter()
            .map(|r| {
                Ok(SessionRow {
                    id: r.uuid("session_id")?,
                    created_at: r.time("created_at")?,
                    last_seen_at: r.time("last_seen_at")?,
                    expires_at: r.time("expires_at")?,
                    user_agent: r.text("user_agent")?,
                })
            })
            .collect()
    }

    /// Revokes `user`'s session `session_id`; answers whether a live one was revoked
    /// (another person's session is "no such session").
    pub async fn revoke_session(
        &self,
        user: UserId,
        session_id: Uuid,
    ) -> Result<bool, IdentityError> {
        let done = self
            .db
            .execute(
                "UPDATE sessions SET revoked_at = $1 WHERE session_id = $2 AND user_id = $3 AND revoked_at IS NULL",
                &[Utc::now().into(), session_id.into(), user.into()],
            )
            .await?;
        Ok(done > 0)
    }

    /// Whether any session was ever opened (for the first-start login link).
    pub async fn session_count(&self) -> Result<i64, IdentityError> {
        match self
            .db
            .fetch_optional("SELECT count(*) AS n FROM sessions", &[])
            .await?
        {
            Some(row) => row.count("n"),
            None => Ok(0),
        }
    }
}
