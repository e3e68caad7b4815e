//! Storage of the OAuth authorization server: clients, grants, codes and tokens
//! (`migrations/*/20261201000007_oauth.sql`). Only storage: what a code or token may do is
//! decided in `app::authorization`.
//!
//! Every query is written once, for both backends ([`crate::identity::sql`]).

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;
use uuid::Uuid;

use crate::identity::{IdentityDb, IdentityError};

fn invalid(e: impl std::fmt::Display) -> IdentityError {
    IdentityError::Invalid(e.to_string())
}

/// The OAuth tables of the identity database.
#[derive(Clone, Debug)]
pub struct OAuthStore {
    db: IdentityDb,
}

/// A registered client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientRecord {
    pub client_id: String,
    /// `cimd` or `dcr`.
    pub kind: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    /// The document or registration request as received (JSON).
    pub metadata: String,
    pub fetched_at: Option<DateTime<Utc>>,
    /// CIMD: until when the cached document may be used.
    pub expires_at: Option<DateTime<Utc>>,
}

/// A grant: what a person allowed a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantRecord {
    pub grant_id: Uuid,
    pub user_id: UserId,
    pub client_id: String,
    pub client_name: String,
    pub scopes: String,
    pub resource: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// An authorization code as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRecord {
    pub grant_id: Uuid,
    pub client_id: String,
    pub user_id: UserId,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scopes: String,
    pub resource: String,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

/// A token as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    pub kind: String,
    pub grant_id: Uuid,
    pub client_id: String,
    pub user_id: UserId,
    pub scopes: String,
    pub audience: String,
    pub expires_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub used_at: Option<DateTime<Utc>>,
    /// Whether the grant it belongs to is revoked.
    pub grant_revoked: bool,
}

/// A token to insert.
#[derive(Clone, Debug)]
pub struct NewToken<'a> {
    pub digest: &'a str,
    pub kind: &'a str,
    pub grant_id: Uuid,
    pub client_id: &'a str,
    pub user_id: UserId,
    pub scopes: &'a str,
    pub audience: &'a str,
    pub expires_at: DateTime<Utc>,
}

impl OAuthStore {
    /// The OAuth tables of `db`.
    pub fn new(db: IdentityDb) -> Self {
        Self { db }
    }

    // ---- clients

    /// Inserts or replaces a client (a CIMD document fetched again replaces its copy).
    pub async fn put_client(&self, client: &ClientRecord) -> Result<(), IdentityError> {
        let uris = serde_json::to_string(&client.redirect_uris).map_err(invalid)?;
        self.db.execute(
            "INSERT INTO oauth_clients (client_id, kind, client_name, redirect_uris, metadata, fetched_at, expires_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (client_id) DO UPDATE SET kind = excluded.kind, client_name = excluded.client_name, \
             redirect_uris = excluded.redirect_uris, metadata = excluded.metadata, \
             fetched_at = excluded.fetched_at, expires_at = excluded.expires_at",
            &[
                (&client.client_id).into(),
                (&client.kind).into(),
                (&client.client_name).into(),
                uris.into(),
                (&client.metadata).into(),
                client.fetched_at.into(),
                client.expires_at.into(),
                Utc::now().into(),
            ],
        )
        .await?;
        Ok(())
    }

    /// A client by id.
    pub async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>, IdentityError> {
        let Some(row) = self
            .db.fetch_optional(
                "SELECT client_id, kind, client_name, redirect_uris, metadata, fetched_at, expires_at \
                 FROM oauth_clients WHERE client_id = $1",
                &[client_id.into()],
            )
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(ClientRecord {
            client_id: row.text("client_id")?,
            kind: row.text("kind")?,
            client_name: row.text("client_name")?,
            redirect_uris: serde_json::from_str(&row.text("redirect_uris")?).map_err(invalid)?,
            metadata: row.text("metadata")?,
            fetched_at: row.opt_time("fetched_at")?,
            expires_at: row.opt_time("expires_at")?,
        }))
    }

    /// Notes that a client was just used (a code redeemed): unused DCR clients can expire.
    pub async fn touch_client(&self, client_id: &str) -> Result<(), IdentityError> {
        self.db
            .execute(
                "UPDATE oauth_clients SET last_used_at = $1 WHERE client_id = $2",
                &[Utc::now().into(), client_id.into()],
            )
            .await?;
        Ok(())
    }

    // ---- grants

    /// The live grant of `user` to `client`, created if there is none; its scopes and
    /// resource become the ones just approved.
    pub async fn upsert_grant(
        &self,
        user: UserId,
        client_id: &str,
        scopes: &str,
        resource: &str,
    ) -> Result<Uuid, IdentityError> {
        let existing = self
            .db.fetch_optional(
                "SELECT grant_id FROM oauth_grants WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL",
                &[user.0.into(), client_id.into()],
            )
            .await?;
        if let Some(row) = existing {
            let id = row.uuid("grant_id")?;
            self.db
                .execute(
                    "UPDATE oauth_grants SET scopes = $1, resource = $2 WHERE grant_id = $3",
                    &[scopes.into(), resource.into(), id.into()],
                )
                .await?;
            return Ok(id);
        }
        let id = Uuid::now_v7();
        self.db.execute(
            "INSERT INTO oauth_grants (grant_id, user_id, client_id, scopes, resource, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                id.into(),
                user.0.into(),
                client_id.into(),
                scopes.into(),
                resource.into(),
                Utc::now().into(),
            ],
        )
        .await?;
        Ok(id)
    }

    /// Whether `user` holds a live grant to `client_id`: a client the person approved
    /// before, whose redirect URI the authorization endpoint may send errors to.
    pub async fn has_live_grant(
        &self,
        user: UserId,
        client_id: &str,
    ) -> Result<bool, IdentityError> {
        Ok(self
            .db.fetch_optional(
                "SELECT grant_id FROM oauth_grants WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL",
                &[user.0.into(), client_id.into()],
            )
            .await?
            .is_some())
    }

    /// The live grants of `user`, newest first, with their clients' names.
    pub async fn grants_of(&self, user: UserId) -> Result<Vec<GrantRecord>, IdentityError> {
        let rows = self
            .db.fetch_all(
                "SELECT g.grant_id, g.user_id, g.client_id, c.client_name, g.scopes, g.resource, g.created_at, \
                 g.last_used_at, g.revoked_at FROM oauth_grants g JOIN oauth_clients c ON c.client_id = g.client_id \
                 WHERE g.user_id = $1 AND g.revoked_at IS NULL ORDER BY g.created_at DESC",
                &[user.0.into()],
            )
            .await?;
        rows.iter()
            .map(|row| {
                Ok(GrantRecord {
                    grant_id: row.uuid("grant_id")?,
                    user_id: UserId(row.uuid("user_id")?),
                    client_id: row.text("client_id")?,
                    client_name: row.text("client_name")?,
                    scopes: row.text("scopes")?,
                    resource: row.text("resource")?,
                    created_at: row.time("created_at")?,
                    last_used_at: row.opt_time("last_used_at")?,
                    revoked_at: row.opt_time("revoked_at")?,
                })
            })
            .collect()
    }

    /// Revokes a grant and every token of it. `user`: only when it is that user's (answers
    /// whether a live grant was revoked).
    pub async fn revoke_grant(
        &self,
        grant_id: Uuid,
        user: Option<UserId>,
    ) -> Result<bool, IdentityError> {
        let now = Utc::now();
        let revoked = match user {
            Some(user) => {
                self.db.execute(
                    "UPDATE oauth_grants SET revoked_at = $1 WHERE grant_id = $2 AND user_id = $3 AND revoked_at IS NULL",
                    &[now.into(), grant_id.into(), user.0.into()],
                )
                .await?
            }
            None => {
                self.db.execute(
                    "UPDATE oauth_grants SET revoked_at = $1 WHERE grant_id = $2 AND revoked_at IS NULL",
                    &[now.into(), grant_id.into()],
                )
                .await?
            }
        };
        // Tokens go too, even when the grant was revoked already (a late token stays dead).
        if revoked > 0 || user.is_none() {
            self.db.execute(
                "UPDATE oauth_tokens SET revoked_at = $1 WHERE grant_id = $2 AND revoked_at IS NULL",
                &[now.into(), grant_id.into()],
            )
            .await?;
        }
        Ok(revoked > 0)
    }

    /// Notes a grant's use.
    pub async fn touch_grant(&self, grant_id: Uuid) -> Result<(), IdentityError> {
        self.db
            .execute(
                "UPDATE oauth_grants SET last_used_at = $1 WHERE grant_id = $2",
                &[Utc::now().into(), grant_id.into()],
            )
            .await?;
        Ok(())
    }

    /// The user and client of a grant, and whether it is revoked.
    pub async fn grant_state(
        &self,
        grant_id: Uuid,
    ) -> Result<Option<(UserId, String, bool)>, IdentityError> {
        let row = self
            .db
            .fetch_optional(
                "SELECT user_id, client_id, revoked_at FROM oauth_grants WHERE grant_id = $1",
                &[grant_id.into()],
            )
            .await?;
        row.map(|r| {
            Ok((
                UserId(r.uuid("user_id")?),
                r.text("client_id")?,
                r.opt_time("revoked_at")?.is_some(),
            ))
        })
        .transpose()
    }

    // ---- codes

    /// Stores a new code under its digest (`used_at` is ignored: a new code is unused).
    pub async fn put_code(&self, digest: &str, code: &CodeRecord) -> Result<(), IdentityError> {
        self.db.execute(
            "INSERT INTO oauth_codes (code_sha256, grant_id, client_id, user_id, redirect_uri, code_challenge, scopes, resource, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                digest.into(),
                code.grant_id.into(),
                code.client_id.as_str().into(),
                code.user_id.0.into(),
                code.redirect_uri.as_str().into(),
                code.code_challenge.as_str().into(),
                code.scopes.as_str().into(),
                code.resource.as_str().into(),
                Utc::now().into(),
                code.expires_at.into(),
            ],
        )
        .await?;
        Ok(())
    }

    /// A code by digest, used or not.
    pub async fn code(&self, digest: &str) -> Result<Option<CodeRecord>, IdentityError> {
        let row = self
            .db.fetch_optional(
                "SELECT grant_id, client_id, user_id, redirect_uri, code_challenge, scopes, resource, expires_at, used_at \
                 FROM oauth_codes WHERE code_sha256 = $1",
                &[digest.into()],
            )
            .await?;
        row.map(|r| {
            Ok(CodeRecord {
                grant_id: r.uuid("grant_id")?,
                client_id: r.text("client_id")?,
                user_id: UserId(r.uuid("user_id")?),
                redirect_uri: r.text("redirect_uri")?,
                code_challenge: r.text("code_challenge")?,
                scopes: r.text("scopes")?,
                resource: r.text("resource")?,
                expires_at: r.time("expires_at")?,
                used_at: r.opt_time("used_at")?,
            })
        })
        .transpose()
    }

    /// Marks a code used; answers false when it was used already (the conditional UPDATE is
    /// what makes a code single-use across replicas).
    pub async fn consume_code(&self, digest: &str) -> Result<bool, IdentityError> {
        Ok(self
            .db
            .execute(
                "UPDATE oauth_codes SET used_at = $1 WHERE code_sha256 = $2 AND used_at IS NULL",
                &[Utc::now().into(), digest.into()],
            )
            .await?
            > 0)
    }

    // ---- tokens

    /// Stores a token (its digest).
    pub async fn put_token(&self, token: &NewToken<'_>) -> Result<(), IdentityError> {
        self.db.execute(
            "INSERT INTO oauth_tokens (token_sha256, kind, grant_id, client_id, user_id, scopes, audience, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                token.digest.into(),
                token.kind.into(),
                token.grant_id.into(),
                token.client_id.into(),
                token.user_id.0.into(),
                token.scopes.into(),
                token.audience.into(),
                Utc::now().into(),
                token.expires_at.into(),
            ],
        )
        .await?;
        Ok(())
    }

    /// A token by digest, with whether its grant is revoked.
    pub async fn token(&self, digest: &str) -> Result<Option<TokenRecord>, IdentityError> {
        let row = self
            .db.fetch_optional(
                "SELECT t.kind, t.grant_id, t.client_id, t.user_id, t.scopes, t.audience, t.expires_at, t.revoked_at, \
                 t.used_at, g.revoked_at AS grant_revoked_at FROM oauth_tokens t \
                 JOIN oauth_grants g ON g.grant_id = t.grant_id WHERE t.token_sha256 = $1",
                &[digest.into()],
            )
            .await?;
        row.map(|r| {
            Ok(TokenRecord {
                kind: r.text("kind")?,
                grant_id: r.uuid("grant_id")?,
                client_id: r.text("client_id")?,
                user_id: UserId(r.uuid("user_id")?),
                scopes: r.text("scopes")?,
                audience: r.text("audience")?,
                expires_at: r.time("expires_at")?,
                revoked_at: r.opt_time("revoked_at")?,
                used_at: r.opt_time("used_at")?,
                grant_revoked: r.opt_time("grant_revoked_at")?.is_some(),
            })
        })
        .transpose()
    }

    /// Marks a refresh token used and names its successor; false when it was used already.
    pub async fn consume_refresh(
        &self,
        digest: &str,
        successor: &str,
    ) -> Result<bool, IdentityError> {
        Ok(self
            .db.execute(
                "UPDATE oauth_tokens SET used_at = $1, replaced_by = $2 WHERE token_sha256 = $3 AND kind = 'refresh' AND used_at IS NULL AND revoked_at IS NULL",
                &[Utc::now().into(), successor.into(), digest.into()],
            )
            .await?
            > 0)
    }

    /// Revokes every live token of a grant of one kind (the access tokens a refresh replaces).
    pub async fn revoke_tokens_of(&self, grant_id: Uuid, kind: &str) -> Result<(), IdentityError> {
        self.db.execute(
            "UPDATE oauth_tokens SET revoked_at = $1 WHERE grant_id = $2 AND kind = $3 AND revoked_at IS NULL",
            &[Utc::now().into(), grant_id.into(), kind.into()],
        )
        .await?;
        Ok(())
    }
}
