//! Browser sessions: the cookie value is `ets_` and 256 random bits; the row keeps its digest,
//! the session's synchronizer CSRF token, when it was last seen and when it expires. Looked up
//! on every request (no cache), so a revocation holds at once on every replica.

use chrono::{DateTime, Duration, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use sqlx::Row;
use uuid::Uuid;

use super::{
    Identity, IdentityDb, IdentityError, parse_sqlite_time, parse_sqlite_uuid, random_secret,
    sqlite_time, token_digest,
};

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
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query(
                    "INSERT INTO sessions (session_id, user_id, token_sha256, csrf_token, created_at, last_seen_at, expires_at, user_agent) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)",
                )
                .bind(session_id.to_string())
                .bind(user.to_string())
                .bind(token_digest(&cookie))
                .bind(&csrf_token)
                .bind(sqlite_time(now))
                .bind(sqlite_time(now + ttl))
                .bind(&agent)
                .execute(pool)
                .await?;
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query(
                    "INSERT INTO sessions (session_id, user_id, token_sha256, csrf_token, created_at, last_seen_at, expires_at, user_agent) \
                     VALUES ($1, $2, $3, $4, $5, $5, $6, $7)",
                )
                .bind(session_id)
                .bind(user.0)
                .bind(token_digest(&cookie))
                .bind(&csrf_token)
                .bind(now)
                .bind(now + ttl)
                .bind(&agent)
                .execute(pool)
                .await?;
            }
        }
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
        let digest = token_digest(cookie);
        let now = Utc::now();
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                let row = sqlx::query(
                    "SELECT session_id, user_id, csrf_token, last_seen_at, expires_at FROM sessions \
                     WHERE token_sha256 = ?1 AND revoked_at IS NULL AND expires_at > ?2",
                )
                .bind(&digest)
                .bind(sqlite_time(now))
                .fetch_optional(pool)
                .await?;
                row.map(|r| {
                    Ok(SessionInfo {
                        session_id: parse_sqlite_uuid(&r.try_get::<String, _>("session_id")?)?,
                        user_id: UserId(parse_sqlite_uuid(&r.try_get::<String, _>("user_id")?)?),
                        csrf_token: r.try_get("csrf_token")?,
                        last_seen_at: parse_sqlite_time(&r.try_get::<String, _>("last_seen_at")?)?,
                        expires_at: parse_sqlite_time(&r.try_get::<String, _>("expires_at")?)?,
                    })
                })
                .transpose()
            }
            IdentityDb::Postgres(pool) => {
                let row = sqlx::query(
                    "SELECT session_id, user_id, csrf_token, last_seen_at, expires_at FROM sessions \
                     WHERE token_sha256 = $1 AND revoked_at IS NULL AND expires_at > $2",
                )
                .bind(&digest)
                .bind(now)
                .fetch_optional(pool)
                .await?;
                row.map(|r| {
                    Ok(SessionInfo {
                        session_id: r.try_get("session_id")?,
                        user_id: UserId(r.try_get("user_id")?),
                        csrf_token: r.try_get("csrf_token")?,
                        last_seen_at: r.try_get("last_seen_at")?,
                        expires_at: r.try_get("expires_at")?,
                    })
                })
                .transpose()
            }
        }
    }

    /// Slides a session: seen now, expiring `ttl` from now (never revives a revoked one).
    pub async fn touch_session(
        &self,
        session_id: Uuid,
        ttl: Duration,
    ) -> Result<(), IdentityError> {
        let now = Utc::now();
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query(
                    "UPDATE sessions SET last_seen_at = ?1, expires_at = ?2 WHERE session_id = ?3 AND revoked_at IS NULL",
                )
                .bind(sqlite_time(now))
                .bind(sqlite_time(now + ttl))
                .bind(session_id.to_string())
                .execute(pool)
                .await?;
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query(
                    "UPDATE sessions SET last_seen_at = $1, expires_at = $2 WHERE session_id = $3 AND revoked_at IS NULL",
                )
                .bind(now)
                .bind(now + ttl)
                .bind(session_id)
                .execute(pool)
                .await?;
            }
        }
        Ok(())
    }

    /// `user`'s live sessions, newest first.
    pub async fn sessions_of(&self, user: UserId) -> Result<Vec<SessionRow>, IdentityError> {
        let now = Utc::now();
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                let rows = sqlx::query(
                    "SELECT session_id, created_at, last_seen_at, expires_at, user_agent FROM sessions \
                     WHERE user_id = ?1 AND revoked_at IS NULL AND expires_at > ?2 ORDER BY created_at DESC, session_id DESC",
                )
                .bind(user.to_string())
                .bind(sqlite_time(now))
                .fetch_all(pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok(SessionRow {
                            id: parse_sqlite_uuid(&r.try_get::<String, _>("session_id")?)?,
                            created_at: parse_sqlite_time(&r.try_get::<String, _>("created_at")?)?,
                            last_seen_at: parse_sqlite_time(
                                &r.try_get::<String, _>("last_seen_at")?,
                            )?,
                            expires_at: parse_sqlite_time(&r.try_get::<String, _>("expires_at")?)?,
                            user_agent: r.try_get("user_agent")?,
                        })
                    })
                    .collect()
            }
            IdentityDb::Postgres(pool) => {
                let rows = sqlx::query(
                    "SELECT session_id, created_at, last_seen_at, expires_at, user_agent FROM sessions \
                     WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, session_id DESC",
                )
                .bind(user.0)
                .bind(now)
                .fetch_all(pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok(SessionRow {
                            id: r.try_get("session_id")?,
                            created_at: r.try_get("created_at")?,
                            last_seen_at: r.try_get("last_seen_at")?,
                            expires_at: r.try_get("expires_at")?,
                            user_agent: r.try_get("user_agent")?,
                        })
                    })
                    .collect()
            }
        }
    }

    /// Revokes `user`'s session `session_id`; answers whether a live one was revoked
    /// (another person's session is "no such session").
    pub async fn revoke_session(
        &self,
        user: UserId,
        session_id: Uuid,
    ) -> Result<bool, IdentityError> {
        let done = match &self.db {
            IdentityDb::Sqlite(pool) => sqlx::query(
                "UPDATE sessions SET revoked_at = ?1 WHERE session_id = ?2 AND user_id = ?3 AND revoked_at IS NULL",
            )
            .bind(sqlite_time(Utc::now()))
            .bind(session_id.to_string())
            .bind(user.to_string())
            .execute(pool)
            .await?
            .rows_affected(),
            IdentityDb::Postgres(pool) => sqlx::query(
                "UPDATE sessions SET revoked_at = now() WHERE session_id = $1 AND user_id = $2 AND revoked_at IS NULL",
            )
            .bind(session_id)
            .bind(user.0)
            .execute(pool)
            .await?
            .rows_affected(),
        };
        Ok(done > 0)
    }

    /// Whether any session was ever opened (for the first-start login link).
    pub async fn session_count(&self) -> Result<i64, IdentityError> {
        Ok(match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query_scalar("SELECT count(*) FROM sessions")
                    .fetch_one(pool)
                    .await?
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query_scalar("SELECT count(*) FROM sessions")
                    .fetch_one(pool)
                    .await?
            }
        })
    }
}
