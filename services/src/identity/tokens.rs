//! Personal access tokens: `etp_` followed by 64 hex digits (256 random bits), for scripts
//! and MCP clients configured by hand. Only the digest is stored (see the module above).

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use sqlx::Row;
use uuid::Uuid;

use super::{
    Identity, IdentityDb, IdentityError, Principal, Scope, parse_sqlite_time, parse_sqlite_uuid,
    random_secret, sqlite_time, token_digest,
};

/// A token as its owner sees it listed (never the token itself).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TokenRow {
    pub id: Uuid,
    pub label: String,
    pub scopes: Vec<Scope>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

fn new_token() -> String {
    format!("etp_{}", random_secret())
}

pub(super) fn scopes_text(scopes: &[Scope]) -> String {
    let mut names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(" ")
}

pub(super) fn parse_scopes(text: &str) -> Vec<Scope> {
    text.split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

impl Identity {
    /// Mints a token for `user` with `scopes`; answers the clear token, which is shown once.
    pub async fn create_token(
        &self,
        user: UserId,
        scopes: &[Scope],
        label: &str,
    ) -> Result<String, IdentityError> {
        self.create_token_with_id(user, scopes, label)
            .await
            .map(|(_, token)| token)
    }

    /// [`Self::create_token`], answering the token's id too (for the audit trail).
    pub async fn create_token_with_id(
        &self,
        user: UserId,
        scopes: &[Scope],
        label: &str,
    ) -> Result<(Uuid, String), IdentityError> {
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
                .bind(sqlite_time(Utc::now()))
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
        Ok((token_id, token))
    }

    /// The caller a bearer token stands for, if it is a live token.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Principal>, IdentityError> {
        if !token.starts_with("etp_") || token.len() != 68 {
            return Ok(None);
        }
        let digest = token_digest(token);
        let row = match &self.db {
            IdentityDb::Sqlite(pool) => sqlx::query(
                "SELECT user_id, scopes FROM access_tokens WHERE token_sha256 = ?1 AND revoked_at IS NULL",
            )
            .bind(&digest)
            .fetch_optional(pool)
            .await?
            .map(|r| -> Result<(Uuid, String), IdentityError> {
                let id: String = r.try_get("user_id")?;
                Ok((parse_sqlite_uuid(&id)?, r.try_get("scopes")?))
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
        Ok(principal)
    }

    /// Revokes a token, given in full: it stops authenticating at once, on every replica
    /// (tokens are looked up on every request, like sessions and agents' tokens).
    /// Answers whether a live token was revoked (false: unknown or already revoked).
    pub async fn revoke_token(&self, token: &str) -> Result<bool, IdentityError> {
        let digest = token_digest(token.trim());
        let revoked = match &self.db {
            IdentityDb::Sqlite(pool) => sqlx::query(
                "UPDATE access_tokens SET revoked_at = ?1 WHERE token_sha256 = ?2 AND revoked_at IS NULL",
            )
            .bind(sqlite_time(Utc::now()))
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
        Ok(revoked > 0)
    }

    /// Revokes `user`'s token `token_id`. Answers whether a live token of theirs was revoked
    /// (another person's id is "no such token", like an unknown one).
    pub async fn revoke_token_by_id(
        &self,
        user: UserId,
        token_id: Uuid,
    ) -> Result<bool, IdentityError> {
        let digest: Option<String> = match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query_scalar(
                    "UPDATE access_tokens SET revoked_at = ?1 WHERE token_id = ?2 AND user_id = ?3 \
                 AND revoked_at IS NULL RETURNING token_sha256",
                )
                .bind(sqlite_time(Utc::now()))
                .bind(token_id.to_string())
                .bind(user.to_string())
                .fetch_optional(pool)
                .await?
            }
            IdentityDb::Postgres(pool) => sqlx::query_scalar(
                "UPDATE access_tokens SET revoked_at = now() WHERE token_id = $1 AND user_id = $2 \
                 AND revoked_at IS NULL RETURNING token_sha256",
            )
            .bind(token_id)
            .bind(user.0)
            .fetch_optional(pool)
            .await?,
        };
        Ok(digest.is_some())
    }

    /// `user`'s tokens, newest first, revoked ones included (they are history).
    pub async fn tokens_of(&self, user: UserId) -> Result<Vec<TokenRow>, IdentityError> {
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                let rows = sqlx::query(
                    "SELECT token_id, label, scopes, created_at, revoked_at FROM access_tokens \
                     WHERE user_id = ?1 ORDER BY created_at DESC, token_id DESC",
                )
                .bind(user.to_string())
                .fetch_all(pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        let revoked: Option<String> = r.try_get("revoked_at")?;
                        Ok(TokenRow {
                            id: parse_sqlite_uuid(&r.try_get::<String, _>("token_id")?)?,
                            label: r.try_get("label")?,
                            scopes: parse_scopes(&r.try_get::<String, _>("scopes")?),
                            created_at: parse_sqlite_time(&r.try_get::<String, _>("created_at")?)?,
                            revoked_at: revoked.as_deref().map(parse_sqlite_time).transpose()?,
                        })
                    })
                    .collect()
            }
            IdentityDb::Postgres(pool) => {
                let rows = sqlx::query(
                    "SELECT token_id, label, scopes, created_at, revoked_at FROM access_tokens \
                     WHERE user_id = $1 ORDER BY created_at DESC, token_id DESC",
                )
                .bind(user.0)
                .fetch_all(pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok(TokenRow {
                            id: r.try_get("token_id")?,
                            label: r.try_get("label")?,
                            scopes: parse_scopes(&r.try_get::<String, _>("scopes")?),
                            created_at: r.try_get("created_at")?,
                            revoked_at: r.try_get("revoked_at")?,
                        })
                    })
                    .collect()
            }
        }
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
