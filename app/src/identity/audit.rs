//! The audit trail of a person's credentials: logins, logouts, sessions and tokens revoked,
//! exports, the account's deletion. PII-free by construction (callers pass a kind and ids or
//! labels, never an address, token or IP), so it may outlive the account as its tombstone.

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use uuid::Uuid;

use super::{Identity, IdentityError};

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
        self.db
            .execute(
                "INSERT INTO auth_audit (id, user_id, at, kind, detail) VALUES ($1, $2, $3, $4, $5)",
                &[
                    Uuid::now_v7().into(),
                    user.into(),
                    Utc::now().into(),
                    kind.into(),
                    detail.into(),
                ],
            )
            .await?;
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
        let total = match self
            .db
            .fetch_optional(
                "SELECT count(*) AS n FROM auth_audit WHERE user_id = $1",
                &[user.into()],
            )
            .await?
        {
            Some(row) => row.count("n")?,
            None => 0,
        };
        let entries = self
            .db
            .fetch_all(
                "SELECT id, at, kind, detail FROM auth_audit WHERE user_id = $1 \
                 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3",
                &[
                    user.into(),
                    i64::from(limit).into(),
                    i64::from(offset).into(),
                ],
            )
            .await?
            .iter()
            .map(|r| {
                Ok(AuditEntry {
                    id: r.uuid("id")?,
                    at: r.time("at")?,
                    kind: r.text("kind")?,
                    detail: r.text("detail")?,
                })
            })
            .collect::<Result<Vec<_>, IdentityError>>()?;
        Ok((entries, u64::try_from(total).unwrap_or(0)))
    }
}
