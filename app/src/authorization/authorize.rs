//! The authorization endpoint: validating a request (PKCE, redirect, scope, resource),
//! the person's approval that mints a code, and refusals (redirected only to a client the
//! person holds a live grant to).

use chrono::Utc;
use etappe_domain::ids::UserId;
use url::Url;

use super::redirects::{host_of, is_loopback_host, is_pkce_text, redirect_matches};
use super::{
    Authorization, AuthorizationService, AuthorizeFailure, AuthorizeParams, CODE_PREFIX, CODE_TTL,
    OAuthError, digest, parse_scope, quote, random_token, scope_text,
};
use crate::identity::oauth::CodeRecord;

impl AuthorizationService {
    /// Checks an authorization request for no one in particular: every refusal is a page.
    /// `public` is the issuer (the public base URL).
    pub async fn validate(
        &self,
        params: &AuthorizeParams,
        public: &str,
    ) -> Result<Authorization, AuthorizeFailure> {
        self.validate_as(params, public, None).await
    }

    /// Checks an authorization request of `person`. A refusal goes back to the client's
    /// redirect URI only when that is trusted twice over: it is one the client registered
    /// (exact match), and the person already holds a live grant to the client. Registration
    /// is open to anyone, so for any other client a redirect would make this server an open
    /// redirector (RFC 9700 §4.11.2): a registered `https://evil.example/` plus an unknown
    /// scope would send a signed-in person there without a click. Those refusals are pages.
    pub async fn validate_as(
        &self,
        params: &AuthorizeParams,
        public: &str,
        person: Option<UserId>,
    ) -> Result<Authorization, AuthorizeFailure> {
        let page = AuthorizeFailure::Page;
        let client_id = params.client_id.as_deref().unwrap_or_default();
        if client_id.is_empty() {
            return Err(page(OAuthError::InvalidRequest(
                "client_id: missing".into(),
            )));
        }
        let client = self.client(client_id).await.map_err(page)?;
        let redirect_uri = match params.redirect_uri.as_deref() {
            Some(asked) => {
                if !client
                    .redirect_uris
                    .iter()
                    .any(|r| redirect_matches(r, asked))
                {
                    return Err(page(OAuthError::InvalidRequest(format!(
                        "redirect_uri: {} is not one this client registered",
                        quote(asked)
                    ))));
                }
                asked.to_owned()
            }
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            None => {
                return Err(page(OAuthError::InvalidRequest(
                    "redirect_uri: missing, and the client registered more than one".into(),
                )));
            }
        };
        let challenge = params.code_challenge.as_deref().unwrap_or_default();
        if challenge.is_empty() {
            return Err(page(OAuthError::InvalidRequest(
                "code_challenge: missing; PKCE with S256 is required".into(),
            )));
        }
        match params.code_challenge_method.as_deref() {
            Some("S256") => {}
            None => {
                return Err(page(OAuthError::InvalidRequest(
                    "code_challenge_method: missing, which means plain; only S256 is accepted"
                        .into(),
                )));
            }
            Some(other) => {
                return Err(page(OAuthError::InvalidRequest(format!(
                    "code_challenge_method: {} is refused; only S256 is accepted",
                    quote(other)
                ))));
            }
        }
        if challenge.len() != 43 || !is_pkce_text(challenge) {
            return Err(page(OAuthError::InvalidRequest(
                "code_challenge: not an S256 challenge (43 base64url characters)".into(),
            )));
        }
        let approved = match person {
            Some(user) => self
                .store
                .has_live_grant(user, &client.client_id)
                .await
                .map_err(|e| page(e.into()))?,
            None => false,
        };
        let back = |error: OAuthError| {
            if approved {
                AuthorizeFailure::Redirect {
                    url: error_redirect(&redirect_uri, &error, params.state.as_deref(), public),
                    error,
                }
            } else {
                AuthorizeFailure::Page(error)
            }
        };
        if params.response_type.as_deref() != Some("code") {
            return Err(back(OAuthError::UnsupportedResponseType(
                "response_type: only code is supported".into(),
            )));
        }
        let scopes = parse_scope(params.scope.as_deref()).map_err(back)?;
        let expected = Self::resource_of(public);
        let resource = match params.resource.as_deref() {
            None | Some("") => expected,
            Some(r) if r == expected => expected,
            Some(r) => {
                return Err(back(OAuthError::InvalidTarget(format!(
                    "resource: {} is not served here; the one resource is {expected}",
                    quote(r)
                ))));
            }
        };
        let mut redirect_hosts: Vec<String> =
            client.redirect_uris.iter().map(|u| host_of(u)).collect();
        redirect_hosts.sort();
        redirect_hosts.dedup();
        let loopback_only = client.redirect_uris.iter().all(|u| {
            Url::parse(u)
                .ok()
                .is_some_and(|u| u.scheme() == "http" && u.host_str().is_some_and(is_loopback_host))
        });
        Ok(Authorization {
            client,
            redirect_uri,
            redirect_uri_given: params.redirect_uri.is_some(),
            state: params.state.clone(),
            code_challenge: challenge.to_owned(),
            scopes,
            resource,
            redirect_hosts,
            loopback_only,
        })
    }

    /// The person approved: records the grant, issues a code, and answers where to send the
    /// browser (the redirect URI with `code`, `state` and `iss`).
    pub async fn approve(
        &self,
        user: UserId,
        request: &Authorization,
        public: &str,
    ) -> Result<String, OAuthError> {
        let scopes = scope_text(&request.scopes);
        let grant = self
            .store
            .upsert_grant(user, &request.client.client_id, &scopes, &request.resource)
            .await?;
        let code = random_token(CODE_PREFIX);
        let expires = Utc::now() + chrono::Duration::from_std(CODE_TTL).unwrap_or_default();
        // The code keeps the redirect URI the request named, or "" when it named none: the
        // exchange must then repeat it, or may omit it.
        let asked = if request.redirect_uri_given {
            request.redirect_uri.as_str()
        } else {
            ""
        };
        self.store
            .put_code(
                &digest(&code),
                &CodeRecord {
                    grant_id: grant,
                    client_id: request.client.client_id.clone(),
                    user_id: user,
                    redirect_uri: asked.to_owned(),
                    code_challenge: request.code_challenge.clone(),
                    scopes: scopes.clone(),
                    resource: request.resource.clone(),
                    expires_at: expires,
                    used_at: None,
                },
            )
            .await?;
        self.audit(
            user,
            "agent_authorized",
            &format!(
                "{} ({}) may {}",
                request.client.client_name, request.client.client_id, scopes
            ),
        )
        .await;
        let mut url = Url::parse(&request.redirect_uri)
            .map_err(|_| OAuthError::Server("a registered redirect URI does not parse".into()))?;
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("code", &code);
            if let Some(state) = &request.state {
                pairs.append_pair("state", state);
            }
            pairs.append_pair("iss", public);
        }
        Ok(url.to_string())
    }

    /// The person denied: where to send the browser (`error=access_denied`).
    pub fn deny(&self, request: &Authorization, public: &str) -> String {
        error_redirect(
            &request.redirect_uri,
            &OAuthError::AccessDenied,
            request.state.as_deref(),
            public,
        )
    }

    // ---- tokens
}

fn error_redirect(
    redirect_uri: &str,
    error: &OAuthError,
    state: Option<&str>,
    public: &str,
) -> String {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return redirect_uri.to_owned();
    };
    {
        let mut pairs = url.query_pairs_mut();
        pairs.append_pair("error", error.code());
        pairs.append_pair("error_description", &error.to_string());
        if let Some(state) = state {
            pairs.append_pair("state", state);
        }
        pairs.append_pair("iss", public);
    }
    url.to_string()
}
