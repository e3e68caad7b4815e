//! Clients: dynamic registration (RFC 7591) and Client ID Metadata Documents (fetched,
//! checked, cached within bounds), and looking a client up by its id.

use std::time::Duration;

use chrono::Utc;
use etappe_infra::fetch::FetchError;
use serde_json::Value;
use url::Url;

use crate::identity::oauth::ClientRecord;

use super::redirects::{application_type, cache_lifetime, check_redirect_uri};
use super::{AuthorizationService, CIMD_LIMITS, OAuthError, quote};

impl AuthorizationService {
    /// Registers a public client (RFC 7591) from its metadata; answers the registration.
    pub async fn register(&self, metadata: &Value) -> Result<Value, OAuthError> {
        let Value::Object(fields) = metadata else {
            return Err(OAuthError::InvalidClientMetadata(
                "the body must be a JSON object of client metadata".into(),
            ));
        };
        let uris = fields
            .get("redirect_uris")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| {
                OAuthError::InvalidRedirectUri(
                    "redirect_uris: a non-empty array of URIs is required".into(),
                )
            })?;
        if uris.len() > 20 {
            return Err(OAuthError::InvalidRedirectUri(
                "redirect_uris: at most 20".into(),
            ));
        }
        let mut redirect_uris = Vec::new();
        for uri in uris {
            let uri = uri.as_str().ok_or_else(|| {
                OAuthError::InvalidRedirectUri("redirect_uris: every entry must be a string".into())
            })?;
            redirect_uris.push(uri.to_owned());
        }
        let listed: Vec<&str> = redirect_uris.iter().map(String::as_str).collect();
        let kind = application_type(fields.get("application_type"), &listed)?;
        for uri in &listed {
            check_redirect_uri(uri, kind)?;
        }
        match fields.get("token_endpoint_auth_method").map(|v| v.as_str()) {
            None | Some(Some("none")) => {}
            Some(other) => {
                return Err(OAuthError::InvalidClientMetadata(format!(
                    "token_endpoint_auth_method: only public clients are registered (\"none\"), not {}",
                    quote(other.unwrap_or("a non-string"))
                )));
            }
        }
        check_list(
            fields.get("grant_types"),
            "grant_types",
            &["authorization_code", "refresh_token"],
        )?;
        check_list(fields.get("response_types"), "response_types", &["code"])?;
        let client_name = client_name(fields.get("client_name"))?;
        let client_id = format!("dcr_{}", hex::encode(rand::random::<[u8; 16]>()));
        self.store
            .put_client(&ClientRecord {
                client_id: client_id.clone(),
                kind: "dcr".into(),
                client_name: client_name.clone(),
                redirect_uris: redirect_uris.clone(),
                metadata: metadata.to_string(),
                fetched_at: None,
                expires_at: None,
            })
            .await?;
        Ok(serde_json::json!({
            "client_id": client_id,
            "client_id_issued_at": Utc::now().timestamp(),
            "client_name": client_name,
            "redirect_uris": redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": kind.as_str(),
        }))
    }

    /// Whether `client_id` names a metadata document (an https URL, or http on a host the
    /// operator lists for local fixtures).
    fn is_document_id(&self, client_id: &str) -> bool {
        client_id.starts_with("https://")
            || (client_id.starts_with("http://")
                && Url::parse(client_id)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                    .is_some_and(|h| self.http_hosts.iter().any(|a| a.eq_ignore_ascii_case(&h))))
    }

    /// The client `client_id` names: a registered one, or a metadata document (from the
    /// cache, else fetched).
    pub async fn client(&self, client_id: &str) -> Result<ClientRecord, OAuthError> {
        if client_id.is_empty() || client_id.len() > 2000 {
            return Err(OAuthError::InvalidClient(
                "client_id: missing or too long".into(),
            ));
        }
        if !self.is_document_id(client_id) {
            return self
                .store
                .client(client_id)
                .await?
                .filter(|c| c.kind == "dcr")
                .ok_or_else(|| {
                    OAuthError::InvalidClient(format!(
                        "client_id: no client {} is registered",
                        quote(client_id)
                    ))
                });
        }
        let cached = self.store.client(client_id).await?;
        let now = Utc::now();
        if let Some(c) = &cached
            && c.kind == "cimd"
            && c.expires_at.is_some_and(|e| e > now)
        {
            return Ok(c.clone());
        }
        match self.fetch_document(client_id).await {
            Ok(client) => {
                self.store.put_client(&client).await?;
                Ok(client)
            }
            Err(e) => Err(e),
        }
    }

    /// Fetches and checks a client metadata document.
    pub async fn fetch_document(&self, client_id: &str) -> Result<ClientRecord, OAuthError> {
        let refused = |why: String| {
            OAuthError::InvalidClient(format!(
                "client_id: the client metadata document {} {why}",
                quote(client_id)
            ))
        };
        let url = Url::parse(client_id).map_err(|_| refused("is not a URL".into()))?;
        if url.path().len() <= 1 {
            return Err(refused("names no path".into()));
        }
        if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
            return Err(refused("carries credentials or a fragment".into()));
        }
        if client_id.contains("/./")
            || client_id.contains("/../")
            || client_id.ends_with("/.")
            || client_id.ends_with("/..")
        {
            return Err(refused("has dot segments".into()));
        }
        let host = url.host_str().unwrap_or_default().to_owned();
        self.limit(
            "oauth-cimd",
            self.settings.cimd_fetches_per_hour,
            "metadata documents an hour from one host",
            &host,
            Duration::from_secs(3600),
        )
        .await?;
        let Some(fetcher) = &self.fetcher else {
            return Err(refused(
                "cannot be fetched: this server has no fetcher".into(),
            ));
        };
        let document = fetcher.get_document(client_id).await.map_err(|e| match e {
            FetchError::Status(s) if (300..400).contains(&s) => {
                refused(format!("answered a redirect ({s}), which is not followed"))
            }
            FetchError::Status(s) => refused(format!("answered {s}, not 200")),
            FetchError::TooLarge => {
                refused(format!("is larger than {} bytes", CIMD_LIMITS.max_bytes))
            }
            FetchError::Refused(why) => refused(format!("cannot be fetched: {why}")),
            FetchError::Transient(why) | FetchError::InvalidProxy(why) => {
                refused(format!("could not be fetched: {why}"))
            }
        })?;
        let value: Value =
            serde_json::from_slice(&document.body).map_err(|_| refused("is not JSON".into()))?;
        let Value::Object(fields) = &value else {
            return Err(refused("is not a JSON object".into()));
        };
        if fields.get("client_id").and_then(Value::as_str) != Some(client_id) {
            return Err(refused(
                "names another client_id (it must name its own URL)".into(),
            ));
        }
        if fields.contains_key("client_secret") || fields.contains_key("client_secret_expires_at") {
            return Err(refused("carries a secret".into()));
        }
        match fields
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
        {
            None | Some("none") => {}
            Some(other) => {
                return Err(refused(format!(
                    "asks for {}, and only public clients (none) are served",
                    quote(other)
                )));
            }
        }
        let uris = fields
            .get("redirect_uris")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| refused("has no redirect_uris".into()))?;
        let mut redirect_uris = Vec::new();
        for uri in uris {
            let uri = uri
                .as_str()
                .ok_or_else(|| refused("has a redirect URI that is not a string".into()))?;
            redirect_uris.push(uri.to_owned());
        }
        // A document declares its kind as a registration does (`application_type`).
        let listed: Vec<&str> = redirect_uris.iter().map(String::as_str).collect();
        let kind = application_type(fields.get("application_type"), &listed)
            .map_err(|e| refused(e.to_string()))?;
        for uri in &listed {
            check_redirect_uri(uri, kind).map_err(|e| refused(e.to_string()))?;
        }
        let client_name =
            client_name(fields.get("client_name")).map_err(|e| refused(e.to_string()))?;
        let now = Utc::now();
        let lifetime = cache_lifetime(document.cache_control.as_deref());
        Ok(ClientRecord {
            client_id: client_id.to_owned(),
            kind: "cimd".into(),
            client_name,
            redirect_uris,
            metadata: value.to_string(),
            fetched_at: Some(now),
            expires_at: chrono::Duration::from_std(lifetime).ok().map(|d| now + d),
        })
    }

    // ---- authorization
}

fn check_list(value: Option<&Value>, name: &str, allowed: &[&str]) -> Result<(), OAuthError> {
    let Some(value) = value else { return Ok(()) };
    let items = value
        .as_array()
        .ok_or_else(|| OAuthError::InvalidClientMetadata(format!("{name}: must be an array")))?;
    for item in items {
        let text = item.as_str().unwrap_or_default();
        if !allowed.contains(&text) {
            return Err(OAuthError::InvalidClientMetadata(format!(
                "{name}: {} is not supported; accepted: {}",
                quote(text),
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

fn client_name(value: Option<&Value>) -> Result<String, OAuthError> {
    match value {
        None | Some(Value::Null) => Ok("Unnamed client".into()),
        Some(Value::String(name)) => {
            let clean: String = etappe_domain::text::strip_controls(name)
                .trim()
                .chars()
                .take(100)
                .collect();
            Ok(if clean.is_empty() {
                "Unnamed client".into()
            } else {
                clean
            })
        }
        Some(_) => Err(OAuthError::InvalidClientMetadata(
            "client_name: must be a string".into(),
        )),
    }
}
