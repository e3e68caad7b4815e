//! Who is calling: users and their personal access tokens.
//!
//! A token is `etp_` followed by 64 hex digits (256 random bits). Only its SHA-256 digest is
//! stored: the tokens are random, so a fast digest cannot be reversed by guessing, and a
//! leaked database does not leak working tokens.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::Utc;
use etappe_domain::ids::UserId;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{PgPool, Row, SqlitePool};
use uuid::Uuid;

/// What a token allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Scope {
    #[serde(rename = "trips:read")]
    TripsRead,
    #[serde(rename = "trips:write")]
    TripsWrite,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 2] = [Scope::TripsRead, Scope::TripsWrite];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TripsRead => "trips:read",
            Self::TripsWrite => "trips:write",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s.trim())
            .ok_or_else(|| format!("unknown scope {s:?}; accepted: trips:read, trips:write"))
    }
}

/// An authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub user_id: UserId,
    pub scopes: Vec<Scope>,
}

impl Principal {
    /// Whether the caller holds `scope`.
    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// Failures of the identity store.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("{0}")]
    Invalid(String),
}

/// Where the identity tables live: the database the event store uses.
#[derive(Clone, Debug)]
pub enum IdentityDb {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// How long an authenticated token is trusted without asking the database again: a
/// revocation takes effect at once in the process that made it, and within this delay in
/// every other replica.
const TOKEN_CACHE_TTL: Duration = Duration::from_secs(30);

/// Users and tokens, with a short-lived cache of authenticated tokens (every request
/// authenticates; the cache saves that round trip on the hot path).
#[derive(Debug)]
pub struct Identity {
    db: IdentityDb,
    cache: Mutex<HashMap<String, (Principal, Instant)>>,
}

/// The SHA-256 digest of a token, as stored.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn new_token() -> String {
    format!("etp_{}", hex::encode(rand::random::<[u8; 32]>()))
}

fn scopes_text(scopes: &[Scope]) -> String {
    let mut names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(" ")
}

fn parse_scopes(text: &str) -> Vec<Scope> {
    text.split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

impl Identity {
    /// Identity over `db`.
    pub fn new(db: IdentityDb) -> Self {
        Self {
            db,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The database the identity tables live in.
    pub fn db(&self) -> &IdentityDb {
        &self.db
    }

    /// The user with this e-mail address, created if it does not exist.
    pub async fn ensure_user(&self, email: &str) -> Result<UserId, IdentityError> {
        let email = email.trim().to_ascii_lowercase();
        if email.is_empty() || !email.contains('@') || email.len() > 180 {
            return Err(IdentityError::Invalid(format!(
                "not an e-mail address: {email:?}"
            )));
        }
        let new_id = UserId::new();
        let id = match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query(
                    "INSERT INTO users (user_id, email, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (email) DO NOTHING",
                )
                .bind(new_id.to_string())
                .bind(&email)
                .bind(Utc::now().to_rfc3339())
                .execute(pool)
                .await?;
                let id: String = sqlx::query_scalar("SELECT user_id FROM users WHERE email = ?1")
                    .bind(&email)
                    .fetch_one(pool)
                    .await?;
                Uuid::parse_str(&id).map_err(|e| IdentityError::Invalid(e.to_string()))?
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query("INSERT INTO users (user_id, email) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING")
                    .bind(new_id.0)
                    .bind(&email)
                    .execute(pool)
                    .await?;
                sqlx::query_scalar("SELECT user_id FROM users WHERE email = $1")
                    .bind(&email)
                    .fetch_one(pool)
                    .await?
            }
        };
        Ok(UserId(id))
    }

    /// Mints a token for `user` with `scopes`; answers the clear token, which is shown once.
    pub async fn create_token(
        &self,
        user: UserId,
        scopes: &[Scope],
        label: &str,
    ) -> Result<String, IdentityError> {
        if scopes.is_empty() {
            return Err(IdentityError::Invalid(
                "a token needs at least one scope".into(),
            ));
        }
        let token = new_token();
        let digest = token_digest(&token);
        let token_id = Uuid::now_v7();
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query(
                    "INSERT INTO access_tokens (token_id, user_id, token_sha256, scopes, label, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .bind(token_id.to_string())
                .bind(user.to_string())
                .bind(&digest)
                .bind(scopes_text(scopes))
                .bind(label)
                .bind(Utc::now().to_rfc3339())
                .execute(pool)
                .await?;
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query(
                    "INSERT INTO access_tokens (token_id, user_id, token_sha256, scopes, label) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(token_id)
                .bind(user.0)
                .bind(&digest)
                .bind(scopes_text(scopes))
                .bind(label)
                .execute(pool)
                .await?;
            }
        }
        Ok(token)
    }

    /// The caller a bearer token stands for, if it is a live token.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Principal>, IdentityError> {
        if !token.starts_with("etp_") || token.len() != 68 {
            return Ok(None);
        }
        let digest = token_digest(token);
        if let Some(principal) = self.cached(&digest) {
            return Ok(Some(principal));
        }
        let row = match &self.db {
            IdentityDb::Sqlite(pool) => sqlx::query(
                "SELECT user_id, scopes FROM access_tokens WHERE token_sha256 = ?1 AND revoked_at IS NULL",
            )
            .bind(&digest)
            .fetch_optional(pool)
            .await?
            .map(|r| -> Result<(Uuid, String), IdentityError> {
                let id: String = r.try_get("user_id")?;
                Ok((Uuid::parse_str(&id).map_err(|e| IdentityError::Invalid(e.to_string()))?, r.try_get("scopes")?))
            })
            .transpose()?,
            IdentityDb::Postgres(pool) => sqlx::query(
                "SELECT user_id, scopes FROM access_tokens WHERE token_sha256 = $1 AND revoked_at IS NULL",
            )
            .bind(&digest)
            .fetch_optional(pool)
            .await?
            .map(|r| -> Result<(Uuid, String), IdentityError> { Ok((r.try_get("user_id")?, r.try_get("scopes")?)) })
            .transpose()?,
        };
        let principal = row.map(|(user, scopes)| Principal {
            user_id: UserId(user),
            scopes: parse_scopes(&scopes),
        });
        if let Some(p) = &principal {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() > 10_000 {
                cache.clear();
            }
            cache.insert(digest, (p.clone(), Instant::now()));
        }
        Ok(principal)
    }

    /// Revokes a token, given in full: it stops authenticating (see [`TOKEN_CACHE_TTL`]).
    /// Answers whether a live token was revoked (false: unknown or already revoked).
    pub async fn revoke_token(&self, token: &str) -> Result<bool, IdentityError> {
        let digest = token_digest(token.trim());
        let revoked = match &self.db {
            IdentityDb::Sqlite(pool) => sqlx::query(
                "UPDATE access_tokens SET revoked_at = ?1 WHERE token_sha256 = ?2 AND revoked_at IS NULL",
            )
            .bind(Utc::now().to_rfc3339())
            .bind(&digest)
            .execute(pool)
            .await?
            .rows_affected(),
            IdentityDb::Postgres(pool) => sqlx::query(
                "UPDATE access_tokens SET revoked_at = now() WHERE token_sha256 = $1 AND revoked_at IS NULL",
            )
            .bind(&digest)
            .execute(pool)
            .await?
            .rows_affected(),
        };
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&digest);
        Ok(revoked > 0)
    }

    fn cached(&self, digest: &str) -> Option<Principal> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(digest)
            .filter(|(_, at)| at.elapsed() < TOKEN_CACHE_TTL)
            .map(|(p, _)| p.clone())
    }

    /// How many users exist (zero on a first start).
    pub async fn user_count(&self) -> Result<i64, IdentityError> {
        Ok(match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query_scalar("SELECT count(*) FROM users")
                    .fetch_one(pool)
                    .await?
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query_scalar("SELECT count(*) FROM users")
                    .fetch_one(pool)
                    .await?
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_stored_as_digests() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 68);
        assert_eq!(token_digest(&a).len(), 64);
        assert_ne!(token_digest(&a), token_digest(&b));
    }

    #[test]
    fn scopes_parse_by_name_and_refuse_others() {
        assert_eq!("trips:read".parse::<Scope>(), Ok(Scope::TripsRead));
        assert!("trips:admin".parse::<Scope>().is_err());
        assert_eq!(
            parse_scopes(&scopes_text(&[Scope::TripsWrite, Scope::TripsRead])),
            vec![Scope::TripsRead, Scope::TripsWrite]
        );
    }
}
