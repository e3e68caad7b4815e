//! Magic login links: a 256-bit token mailed to an address, stored as its digest. Spent by
//! one conditional UPDATE (`used_at IS NULL AND expires_at > now`), so of two replicas
//! redeeming the same link at once exactly one wins.

use chrono::{Duration, Utc};
use sqlx::Row;

use super::{Identity, IdentityDb, IdentityError, random_secret, sqlite_time, token_digest};

/// How long a spent or expired link row is kept (to tell "used" from "unknown" on a late
/// click) before it is swept.
const KEEP_SPENT: Duration = Duration::days(1);

/// What redeeming a link found (or, from [`Identity::peek_magic_link`], would find).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redeemed {
    /// The link was live and is now spent (peeked: is live): the address it was sent to.
    Email(String),
    /// It was used before.
    Used,
    /// It expired unused.
    Expired,
    /// No such link (or one swept long ago).
    Unknown,
}

impl Identity {
    /// Records a new link for `email` valid for `ttl`; answers the clear token, for the mail.
    pub async fn create_magic_link(
        &self,
        email: &str,
        ttl: Duration,
    ) -> Result<String, IdentityError> {
        let token = random_secret();
        let now = Utc::now();
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query("DELETE FROM magic_links WHERE expires_at < ?1")
                    .bind(sqlite_time(now - KEEP_SPENT))
                    .execute(pool)
                    .await?;
                sqlx::query(
                    "INSERT INTO magic_links (token_sha256, email, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
                )
                .bind(token_digest(&token))
                .bind(email)
                .bind(sqlite_time(now))
                .bind(sqlite_time(now + ttl))
                .execute(pool)
                .await?;
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query("DELETE FROM magic_links WHERE expires_at < $1")
                    .bind(now - KEEP_SPENT)
                    .execute(pool)
                    .await?;
                sqlx::query(
                    "INSERT INTO magic_links (token_sha256, email, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(token_digest(&token))
                .bind(email)
                .bind(now)
                .bind(now + ttl)
                .execute(pool)
                .await?;
            }
        }
        Ok(token)
    }

    /// What redeeming `token` would find, spending nothing: the address a live link logs
    /// into (the page a link opens names it), or why it would be refused.
    pub async fn peek_magic_link(&self, token: &str) -> Result<Redeemed, IdentityError> {
        let token = token.trim();
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Redeemed::Unknown);
        }
        let digest = token_digest(token);
        let now = Utc::now();
        let row = match &self.db {
            IdentityDb::Sqlite(pool) => sqlx::query(
                "SELECT email, used_at IS NOT NULL AS used, expires_at > ?1 AS live \
                 FROM magic_links WHERE token_sha256 = ?2",
            )
            .bind(sqlite_time(now))
            .bind(&digest)
            .fetch_optional(pool)
            .await?
            .map(|r| {
                Ok::<_, sqlx::Error>((
                    r.try_get::<String, _>("email")?,
                    r.try_get::<bool, _>("used")?,
                    r.try_get::<bool, _>("live")?,
                ))
            })
            .transpose()?,
            IdentityDb::Postgres(pool) => sqlx::query(
                "SELECT email, used_at IS NOT NULL AS used, expires_at > $1 AS live \
                 FROM magic_links WHERE token_sha256 = $2",
            )
            .bind(now)
            .bind(&digest)
            .fetch_optional(pool)
            .await?
            .map(|r| {
                Ok::<_, sqlx::Error>((
                    r.try_get::<String, _>("email")?,
                    r.try_get::<bool, _>("used")?,
                    r.try_get::<bool, _>("live")?,
                ))
            })
            .transpose()?,
        };
        Ok(match row {
            Some((_, true, _)) => Redeemed::Used,
            Some((_, false, false)) => Redeemed::Expired,
            Some((email, false, true)) => Redeemed::Email(email),
            None => Redeemed::Unknown,
        })
    }

    /// Spends the link `token` if it is live; else says why not.
    pub async fn redeem_magic_link(&self, token: &str) -> Result<Redeemed, IdentityError> {
        let token = token.trim();
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Redeemed::Unknown);
        }
        let digest = token_digest(token);
        let now = Utc::now();
        let (spent, row) = match &self.db {
            IdentityDb::Sqlite(pool) => {
                let spent: Option<String> = sqlx::query_scalar(
                    "UPDATE magic_links SET used_at = ?1 WHERE token_sha256 = ?2 AND used_at IS NULL \
                     AND expires_at > ?1 RETURNING email",
                )
                .bind(sqlite_time(now))
                .bind(&digest)
                .fetch_optional(pool)
                .await?;
                let row = if spent.is_none() {
                    sqlx::query("SELECT used_at IS NOT NULL AS used FROM magic_links WHERE token_sha256 = ?1")
                        .bind(&digest)
                        .fetch_optional(pool)
                        .await?
                        .map(|r| r.try_get::<bool, _>("used"))
                        .transpose()?
                } else {
                    None
                };
                (spent, row)
            }
            IdentityDb::Postgres(pool) => {
                let spent: Option<String> = sqlx::query_scalar(
                    "UPDATE magic_links SET used_at = $1 WHERE token_sha256 = $2 AND used_at IS NULL \
                     AND expires_at > $1 RETURNING email",
                )
                .bind(now)
                .bind(&digest)
                .fetch_optional(pool)
                .await?;
                let row = if spent.is_none() {
                    sqlx::query("SELECT used_at IS NOT NULL AS used FROM magic_links WHERE token_sha256 = $1")
                        .bind(&digest)
                        .fetch_optional(pool)
                        .await?
                        .map(|r| r.try_get::<bool, _>("used"))
                        .transpose()?
                } else {
                    None
                };
                (spent, row)
            }
        };
        Ok(match (spent, row) {
            (Some(email), _) => Redeemed::Email(email),
            (None, Some(true)) => Redeemed::Used,
            (None, Some(false)) => Redeemed::Expired,
            (None, None) => Redeemed::Unknown,
        })
    }
}
