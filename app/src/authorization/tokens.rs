//! The token endpoint and the resource's check: code exchange, refresh with rotation and
//! reuse detection, revocation, and authenticating an access token on `/mcp`.

use std::time::Duration;

use chrono::Utc;
use etappe_domain::ids::UserId;
use uuid::Uuid;

use crate::identity::Principal;
use crate::identity::oauth::{ClientRecord, CodeRecord, NewToken};

use super::redirects::{constant_eq, is_pkce_text, s256};
use super::{
    ACCESS_TOKEN_PREFIX, Agent, AuthorizationService, OAuthError, REFRESH_AUDIT_EVERY,
    REFRESH_TOKEN_PREFIX, REFRESH_TTL, TOUCH_EVERY, TokenParams, TokenRefusal, TokenResponse,
    digest, parse_scope, quote, random_token, scope_text,
};

impl AuthorizationService {
    /// Answers `POST /oauth/token`.
    pub async fn token(
        &self,
        params: &TokenParams,
        public: &str,
    ) -> Result<TokenResponse, OAuthError> {
        match params.grant_type.as_deref() {
            Some("authorization_code") => self.exchange_code(params, public).await,
            Some("refresh_token") => self.refresh(params, public).await,
            Some(other) => Err(OAuthError::UnsupportedGrantType(format!(
                "grant_type: {} is not supported; use authorization_code or refresh_token",
                quote(other)
            ))),
            None => Err(OAuthError::InvalidRequest("grant_type: missing".into())),
        }
    }

    async fn exchange_code(
        &self,
        params: &TokenParams,
        public: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let required = |v: &Option<String>, name: &str| {
            v.as_deref()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| OAuthError::InvalidRequest(format!("{name}: missing")))
        };
        let code = required(&params.code, "code")?;
        let client_id = required(&params.client_id, "client_id")?;
        let verifier = required(&params.code_verifier, "code_verifier")?;
        let client = self.known_client(&client_id).await?;
        let code_digest = digest(&code);
        let Some(record) = self.store.code(&code_digest).await? else {
            return Err(OAuthError::InvalidGrant("code: unknown or expired".into()));
        };
        if record.used_at.is_some() {
            return Err(self.code_used_twice(&record).await);
        }
        if record.expires_at <= Utc::now() {
            return Err(OAuthError::InvalidGrant(
                "code: expired (codes live 2 minutes)".into(),
            ));
        }
        if record.client_id != client_id {
            return Err(OAuthError::InvalidGrant(
                "code: issued to another client".into(),
            ));
        }
        match (
            record.redirect_uri.as_str(),
            params.redirect_uri.as_deref().filter(|r| !r.is_empty()),
        ) {
            ("", None) => {}
            // The request named none, so it went to the one registered URI.
            ("", Some(given)) if client.redirect_uris.iter().any(|r| r == given) => {}
            (asked, Some(given)) if !asked.is_empty() && asked == given => {}
            (asked, None) if !asked.is_empty() => {
                return Err(OAuthError::InvalidGrant(
                    "redirect_uri: missing; the authorization request named one, so the exchange must repeat it"
                        .into(),
                ));
            }
            _ => {
                return Err(OAuthError::InvalidGrant(
                    "redirect_uri: not the one the code was issued for".into(),
                ));
            }
        }
        if !is_pkce_text(&verifier) || !constant_eq(&s256(&verifier), &record.code_challenge) {
            return Err(OAuthError::InvalidGrant(
                "code_verifier: does not match the code_challenge".into(),
            ));
        }
        if let Some(resource) = params.resource.as_deref().filter(|r| !r.is_empty())
            && resource != record.resource
        {
            return Err(OAuthError::InvalidTarget(format!(
                "resource: the code was issued for {}",
                record.resource
            )));
        }
        if !self.store.consume_code(&code_digest).await? {
            // Another request redeemed it in between: that is a second use too.
            return Err(self.code_used_twice(&record).await);
        }
        match self.store.grant_state(record.grant_id).await? {
            Some((_, _, false)) => {}
            _ => {
                return Err(OAuthError::InvalidGrant(
                    "code: its grant was revoked".into(),
                ));
            }
        }
        self.store.touch_client(&client_id).await?;
        let _ = public;
        self.issue(
            record.grant_id,
            &client_id,
            record.user_id,
            &record.scopes,
            &record.resource,
            random_token(REFRESH_TOKEN_PREFIX),
        )
        .await
    }

    /// The client a token request names, from storage only (the token endpoint never fetches
    /// a metadata document: every client that holds a code or token was stored when the
    /// person authorized it). Unknown: `invalid_client` (RFC 6749 §5.2), not a grant error.
    async fn known_client(&self, client_id: &str) -> Result<ClientRecord, OAuthError> {
        self.store.client(client_id).await?.ok_or_else(|| {
            OAuthError::InvalidClient(format!(
                "client_id: no client {} is registered",
                quote(client_id)
            ))
        })
    }

    async fn refresh(
        &self,
        params: &TokenParams,
        public: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let token = params
            .refresh_token
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OAuthError::InvalidRequest("refresh_token: missing".into()))?;
        let client_id = params
            .client_id
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OAuthError::InvalidRequest("client_id: missing".into()))?;
        self.known_client(client_id).await?;
        let old = digest(token);
        let Some(record) = self
            .store
            .token(&old)
            .await?
            .filter(|t| t.kind == "refresh")
        else {
            return Err(OAuthError::InvalidGrant("refresh_token: unknown".into()));
        };
        if record.client_id != client_id {
            return Err(OAuthError::InvalidGrant(
                "refresh_token: issued to another client".into(),
            ));
        }
        if record.revoked_at.is_some() || record.grant_revoked {
            return Err(OAuthError::InvalidGrant("refresh_token: revoked".into()));
        }
        if record.used_at.is_some() {
            self.revoke_for_reuse(record.grant_id, record.user_id, "refresh token used twice")
                .await?;
            return Err(OAuthError::InvalidGrant(
                "refresh_token: used already; the grant is revoked, authorize again".into(),
            ));
        }
        if record.expires_at <= Utc::now() {
            return Err(OAuthError::InvalidGrant("refresh_token: expired".into()));
        }
        let granted = parse_scope(Some(&record.scopes))?;
        let scopes = match params.scope.as_deref().filter(|s| !s.trim().is_empty()) {
            None => granted,
            Some(asked) => {
                let asked = parse_scope(Some(asked))?;
                if let Some(extra) = asked.iter().find(|s| !granted.contains(s)) {
                    return Err(OAuthError::InvalidScope(format!(
                        "scope: {extra} was not granted"
                    )));
                }
                asked
            }
        };
        if let Some(resource) = params.resource.as_deref().filter(|r| !r.is_empty())
            && resource != record.audience
        {
            return Err(OAuthError::InvalidTarget(format!(
                "resource: the grant is for {}",
                record.audience
            )));
        }
        let _ = public;
        let refresh = random_token(REFRESH_TOKEN_PREFIX);
        if !self.store.consume_refresh(&old, &digest(&refresh)).await? {
            self.revoke_for_reuse(record.grant_id, record.user_id, "refresh token used twice")
                .await?;
            return Err(OAuthError::InvalidGrant(
                "refresh_token: used already; the grant is revoked, authorize again".into(),
            ));
        }
        if self.due(&self.refresh_audited, record.grant_id, REFRESH_AUDIT_EVERY) {
            self.audit(record.user_id, "agent_refreshed", &record.client_id)
                .await;
        }
        self.issue(
            record.grant_id,
            client_id,
            record.user_id,
            &scope_text(&scopes),
            &record.audience,
            refresh,
        )
        .await
    }

    /// Issues an access token and `refresh` (stored by digest) for the grant.
    async fn issue(
        &self,
        grant: Uuid,
        client_id: &str,
        user: UserId,
        scopes: &str,
        audience: &str,
        refresh: String,
    ) -> Result<TokenResponse, OAuthError> {
        let access = random_token(ACCESS_TOKEN_PREFIX);
        let now = Utc::now();
        let ttl = Duration::from_secs(self.settings.access_ttl_secs.max(1));
        let access_digest = digest(&access);
        let refresh_digest = digest(&refresh);
        for (digest, kind, life) in [
            (&access_digest, "access", ttl),
            (&refresh_digest, "refresh", REFRESH_TTL),
        ] {
            self.store
                .put_token(&NewToken {
                    digest,
                    kind,
                    grant_id: grant,
                    client_id,
                    user_id: user,
                    scopes,
                    audience,
                    expires_at: now + chrono::Duration::from_std(life).unwrap_or_default(),
                })
                .await?;
        }
        Ok(TokenResponse {
            access_token: access,
            token_type: "Bearer",
            expires_in: ttl.as_secs(),
            refresh_token: refresh,
            scope: scopes.to_owned(),
        })
    }

    /// The answer to a code redeemed a second time: its grant is revoked first, so every
    /// token the code issued dies with it (a failure to revoke is the answer then).
    async fn code_used_twice(&self, record: &CodeRecord) -> OAuthError {
        let why = "authorization code used twice";
        match self
            .revoke_for_reuse(record.grant_id, record.user_id, why)
            .await
        {
            Ok(()) => OAuthError::InvalidGrant(
                "code: used already; every token it issued is revoked".into(),
            ),
            Err(error) => error,
        }
    }

    async fn revoke_for_reuse(
        &self,
        grant: Uuid,
        user: UserId,
        why: &str,
    ) -> Result<(), OAuthError> {
        self.store.revoke_grant(grant, None).await?;
        tracing::warn!(%grant, why, "oauth: grant revoked");
        self.audit(user, "agent_revoked", why).await;
        Ok(())
    }

    /// RFC 7009: revokes the grant a token belongs to (so its refresh and access tokens die
    /// together). Unknown tokens and other clients' tokens are answered the same, silently.
    pub async fn revoke(&self, token: &str, client_id: Option<&str>) -> Result<(), OAuthError> {
        let Some(record) = self.store.token(&digest(token.trim())).await? else {
            return Ok(());
        };
        if client_id.is_some_and(|c| c != record.client_id) {
            return Ok(());
        }
        if self.store.revoke_grant(record.grant_id, None).await.is_ok() {
            self.audit(
                record.user_id,
                "agent_revoked",
                &format!("{} revoked its token", record.client_id),
            )
            .await;
        }
        Ok(())
    }

    /// The agent a bearer token stands for on the resource `resource`, or why not. `None`:
    /// not an agent token at all.
    pub async fn authenticate(
        &self,
        token: &str,
        resource: &str,
    ) -> Result<Option<Result<Agent, TokenRefusal>>, OAuthError> {
        if !token.starts_with(ACCESS_TOKEN_PREFIX) {
            return Ok(None);
        }
        if token.len() != 68 {
            return Ok(Some(Err(TokenRefusal::Unknown)));
        }
        let Some(record) = self
            .store
            .token(&digest(token))
            .await?
            .filter(|t| t.kind == "access")
        else {
            return Ok(Some(Err(TokenRefusal::Unknown)));
        };
        if record.revoked_at.is_some() || record.grant_revoked {
            return Ok(Some(Err(TokenRefusal::Revoked)));
        }
        if record.expires_at <= Utc::now() {
            return Ok(Some(Err(TokenRefusal::Expired)));
        }
        if record.audience != resource {
            return Ok(Some(Err(TokenRefusal::WrongAudience)));
        }
        if self.due(&self.touched, record.grant_id, TOUCH_EVERY) {
            self.store.touch_grant(record.grant_id).await?;
        }
        Ok(Some(Ok(Agent {
            principal: Principal {
                user_id: record.user_id,
                scopes: parse_scope(Some(&record.scopes)).unwrap_or_default(),
            },
            grant_id: record.grant_id,
            client_id: record.client_id,
        })))
    }

    // ---- the person's agents
}
