//! The audit trail of a person's credentials: logins, logouts, sessions and tokens revoked,
//! exports, the account's deletion. PII-free by construction (callers pass a kind and ids or
//! labels, never an address, token or IP), so it may outlive the account as its tombstone.

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use sqlx::Row;
use uuid::Uuid;

use super::{
    Identity, IdentityDb, IdentityError, parse_sqlite_time, parse_sqlite_uuid, sqlite_time,
};

/// One audit row, as its person reads it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: Uuid,
    pub at: DateTime<Utc>,
    pub kind: String,
    pub detail: String,
}

impl Identity {
    /// Records `kind` (`login`, `logout`, `session_revoked`, …) for `user`.
    pub async fn audit(&self, user: UserId, kind: &str, detail: &str) -> Result<(), IdentityError> {
        let id = Uuid::now_v7();
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query("INSERT INTO auth_audit (id, user_id, at, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5)")
                    .bind(id.to_string())
                    .bind(user.to_string())
                    .bind(sqlite_time(Utc::now()))
                    .bind(kind)
                    .bind(detail)
                    .execute(pool)
                    .await?;
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query("INSERT INTO auth_audit (id, user_id, at, kind, detail) VALUES ($1, $2, $3, $4, $5)")
                    .bind(id)
                    .bind(user.0)
                    .bind(Utc::now())
                    .bind(kind)
                    .bind(detail)
                    .execute(pool)
                    .await?;
            }
        }
        Ok(())
    }

    /// `user`'s audit rows, newest first: `limit` of them after skipping `offset`, and the
    /// total.
    pub async fn audit_of(
        &self,
        user: UserId,
        limit: u32,
        offset: u32,
    ) -> Result<(Vec<AuditEntry>, u64), IdentityError> {
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                let total: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM auth_audit WHERE user_id = ?1")
                        .bind(user.to_string())
                        .fetch_one(pool)
                        .await?;
                let rows = sqlx::query(
                    "SELECT id, at, kind, detail FROM auth_audit WHERE user_id = ?1 ORDER BY at DESC, id DESC LIMIT ?2 OFFSET ?3",
                )
                .bind(user.to_string())
                .bind(i64::from(limit))
                .bind(i64::from(offset))
                .fetch_all(pool)
                .await?;
                let entries = rows
                    .iter()
                    .map(|r| {
                        Ok(AuditEntry {
                            id: parse_sqlite_uuid(&r.try_get::<String, _>("id")?)?,
                            at: parse_sqlite_time(&r.try_get::<String, _>("at")?)?,
                            kind: r.try_get("kind")?,
                            detail: r.try_get("detail")?,
                        })
                    })
                    .collect::<Result<Vec<_>, IdentityError>>()?;
                Ok((entries, u64::try_from(total).unwrap_or(0)))
            }
            IdentityDb::Postgres(pool) => {
                let total: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM auth_audit WHERE user_id = $1")
                        .bind(user.0)
                        .fetch_one(pool)
                        .await?;
                let rows = sqlx::query(
                    "SELECT id, at, kind, detail FROM auth_audit WHERE user_id = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3",
                )
                .bind(user.0)
                .bind(i64::from(limit))
                .bind(i64::from(offset))
                .fetch_all(pool)
                .await?;
                let entries = rows
                    .iter()
                    .map(|r| {
                        Ok(AuditEntry {
                            id: r.try_get("id")?,
                            at: r.try_get("at")?,
                            kind: r.try_get("kind")?,
                            detail: r.try_get("detail")?,
                        })
                    })
                    .collect::<Result<Vec<_>, IdentityError>>()?;
                Ok((entries, u64::try_from(total).unwrap_or(0)))
            }
        }
    }
}
