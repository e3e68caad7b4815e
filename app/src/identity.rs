//! The storage of identity: users, their personal access tokens, browser sessions, magic
//! login links and the audit trail a person can read. Rules (how long a session lives, who
//! may log in how often, what an account deletion removes) live in `app::accounts`; this
//! module only keeps the rows, on SQLite or PostgreSQL alike, each query written once
//! ([`sql`]). The OAuth authorization server's clients, grants, codes and tokens are in
//! [`oauth`].
//!
//! Every secret here (a token, a session cookie, a login link) is 256 random bits and only
//! its SHA-256 digest is stored: the secrets are random, so a fast digest cannot be reversed
//! by guessing, and a leaked database does not leak a working credential.

pub mod audit;
pub mod magic_links;
pub mod oauth;
pub mod sessions;
pub mod sql;
pub mod tokens;
pub mod users;

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{PgPool, SqlitePool};

pub use self::audit::AuditEntry;
pub use self::sessions::{NewSession, SessionInfo, SessionRow};
pub use self::tokens::TokenRow;
pub use self::users::UserRow;

/// What a credential allows.
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

/// Users, tokens, sessions, login links and audit rows. Nothing is cached: every credential
/// is looked up on every request (one indexed query), so a revocation or an account deletion
/// holds at once on every replica.
#[derive(Debug)]
pub struct Identity {
    db: IdentityDb,
}

impl Identity {
    /// The database the identity tables live in.
    pub fn db(&self) -> &IdentityDb {
        &self.db
    }

    /// Identity over `db`.
    pub fn new(db: IdentityDb) -> Self {
        Self { db }
    }
}

/// The SHA-256 digest of a secret, as stored.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A fresh 256-bit secret as 64 hex digits.
pub(crate) fn random_secret() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

/// A time as SQLite stores it: RFC 3339 UTC with microseconds, a fixed width, so that text
/// comparison is time order.
pub(crate) fn sqlite_time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A time read back from SQLite.
pub(crate) fn parse_sqlite_time(text: &str) -> Result<DateTime<Utc>, IdentityError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| IdentityError::Invalid(format!("a stored time cannot be read: {e}")))
}
