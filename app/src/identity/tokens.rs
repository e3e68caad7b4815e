//! Personal access tokens: `etp_` followed by 64 hex digits (256 random bits), for scripts
//! and MCP clients configured by hand. Only the digest is stored (see the module above).

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;
use serde::Serialize;
use uuid::Uuid;

use super::{Identity, IdentityError, Principal, Scope, random_secret, token_digest};

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
        self.db
            .execute(
                "INSERT INTO access_tokens (token_id, user_id, token_sha256, scopes, label, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    token_id.into(),
                    user.into(),
                    digest.into(),
                    scopes_text(scopes).into(),
                    label.into(),
                    Utc::now().into(),
                ],
            )
            .await?;
        Ok((token_id, token))
    }

    /// The caller a bearer token stands for, if it is a live token.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Principal>, IdentityError> {
        if !token.starts_with("etp_") || token.len() != 68 {
            return Ok(None);
        }
        let digest = token_digest(token);
        let row = self
            .db
            .fetch_optional(
                "SELECT user_id, scopes FROM access_tokens WHERE token_sha256 = $1 AND revoked_at IS NULL",
                &[digest.into()],
            )
            .await?
            .map(|r| Ok::<_, IdentityError>((r.uuid("user_id")?, r.text("scopes")?)))
            .transpose()?;
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
        let revoked = self
            .db
            .execute(
                "UPDATE access_tokens SET revoked_at = $1 WHERE token_sha256 = $2 AND revoked_at IS NULL",
                &[Utc::now().into(), digest.into()],
            )
            .await?;
        Ok(revoked > 0)
    }

    /// Revokes `user`'s token `token_id`. Answers whether a live token of theirs was revoked
    /// (another person's id is "no such token", like an unknown one).
    pub async fn revoke_token_by_id(
        &self,
        user: UserId,
        token_id: Uuid,
    ) -> Result<bool, IdentityError> {
        let revoked = self
            .db
            .execute(
                "UPDATE access_tokens SET revoked_at = $1 WHERE token_id = $2 AND user_id = $3 \
                 AND revoked_at IS NULL",
                &[Utc::now().into(), token_id.into(), user.into()],
            )
            .await?;
        Ok(revoked > 0)
    }

    /// `user`'s tokens, newest first, revoked ones included (they are history).
    pub async fn tokens_of(&self, user: UserId) -> Result<Vec<TokenRow>, IdentityError> {
        self.db
            .fetch_all(
                "SELECT token_id, label, scopes, created_at, revoked_at FROM access_tokens \
                 WHERE user_id = $1 ORDER BY created_at DESC, token_id DESC",
                &[user.into()],
            )
            .await?
            .iter()
            .map(|r| {
                Ok(TokenRow {
                    id: r.uuid("token_id")?,
                    label: r.text("label")?,
                    scopes: parse_scopes(&r.text("scopes")?),
                    created_at: r.time("created_at")?,
                    revoked_at: r.opt_time("revoked_at")?,
                })
            })
            .collect()
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
