//! Which redirect URIs a client may register and an authorization may name: https,
//! loopback http (any port, RFC 8252 §7.3), or a native client's private-use scheme; never
//! credentials, wildcards, fragments or text the parser would mend. Also PKCE's S256 and
//! the cache lifetime of a client's metadata document.

use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

use super::{CIMD_MAX_CACHE, CIMD_MIN_CACHE, OAuthError, quote};

pub(super) fn is_loopback_host(host: &str) -> bool {
    matches!(
        host.trim_matches(['[', ']']).to_ascii_lowercase().as_str(),
        "127.0.0.1" | "::1" | "localhost"
    )
}

/// Whether `asked` matches the registered `registered` exactly, or differs only in the port
/// of a loopback http URI (RFC 8252 §7.3).
pub fn redirect_matches(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let (Ok(r), Ok(a)) = (Url::parse(registered), Url::parse(asked)) else {
        return false;
    };
    r.scheme() == "http"
        && a.scheme() == "http"
        && r.host_str().is_some_and(is_loopback_host)
        && r.host_str() == a.host_str()
        && r.path() == a.path()
        && r.query() == a.query()
        && a.fragment().is_none()
        && r.username().is_empty()
        && a.username().is_empty()
}

/// What a client says it is (OpenID Connect Dynamic Client Registration's
/// `application_type`): a web application redirects over https (or loopback http); only a
/// native one may also use a private-use scheme (`cursor://…`, RFC 8252 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplicationType {
    Web,
    Native,
}

impl ApplicationType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Web => "web",
            Self::Native => "native",
        }
    }
}

/// Whether `uri`'s scheme is http or https (which redirect to a web origin).
pub(super) fn is_web_scheme(uri: &str) -> bool {
    Url::parse(uri)
        .ok()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// The application type of registration metadata or of a metadata document: `native` or
/// `web` as it says; when it says nothing, `native` if it registers a private-use scheme
/// (what desktop hosts that omit the field, such as Cursor, register: a web application
/// cannot receive one) and `web` otherwise. Anything else is `invalid_client_metadata`.
pub fn application_type(
    value: Option<&Value>,
    redirect_uris: &[&str],
) -> Result<ApplicationType, OAuthError> {
    match value {
        Some(Value::String(t)) if t == "native" => Ok(ApplicationType::Native),
        Some(Value::String(t)) if t == "web" => Ok(ApplicationType::Web),
        None | Some(Value::Null) => Ok(if redirect_uris.iter().any(|u| !is_web_scheme(u)) {
            ApplicationType::Native
        } else {
            ApplicationType::Web
        }),
        Some(other) => Err(OAuthError::InvalidClientMetadata(format!(
            "application_type: {} is not one of native, web",
            quote(&other.to_string())
        ))),
    }
}

/// Checks one redirect URI a client registers: https; http on loopback only (any port);
/// or, for a native client only, a private-use scheme (`cursor://…`); never a fragment,
/// credentials (`https://user@host`), a wildcard host (`https://*.example`), a web URI
/// whose text is not what a browser reads (`http:/host` with one slash, backslashes), nor
/// a scheme that runs or reads something (`javascript:`, `data:`, `file:`).
pub fn check_redirect_uri(uri: &str, kind: ApplicationType) -> Result<(), OAuthError> {
    let bad =
        |why: &str| OAuthError::InvalidRedirectUri(format!("redirect_uris: {} {why}", quote(uri)));
    if uri.len() > 2000 {
        return Err(bad("is too long"));
    }
    let url = Url::parse(uri).map_err(|_| bad("is not an absolute URI"))?;
    if url.fragment().is_some() {
        return Err(bad("has a fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("carries credentials (user@)"));
    }
    if url.host_str().is_some_and(|h| h.contains('*')) || uri.contains('\\') {
        return Err(bad("has a wildcard or a backslash"));
    }
    match url.scheme() {
        "http" | "https" => {
            // The parser mends `http:/host` and `http:host` into `http://host/`: the text
            // registered would then not be where the browser goes.
            let text = uri.to_ascii_lowercase();
            if !(text.starts_with("http://") || text.starts_with("https://")) {
                return Err(bad("is not written scheme://host/…"));
            }
        }
        _ => {}
    }
    match url.scheme() {
        "https" if url.host_str().is_none_or(str::is_empty) => return Err(bad("names no host")),
        "http" if !url.host_str().is_some_and(is_loopback_host) => {
            return Err(bad("uses http on a host that is not loopback (use https)"));
        }
        "http" | "https" => {}
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ftp" | "ws" | "wss" => {
            return Err(bad("uses a scheme that is not a redirect"));
        }
        _ if kind == ApplicationType::Web => {
            return Err(bad(
                "uses a private-use scheme, which only a native application may register (application_type: native)",
            ));
        }
        _ => {}
    }
    Ok(())
}

pub(super) fn host_of(uri: &str) -> String {
    Url::parse(uri)
        .ok()
        .map(|u| match u.host_str() {
            Some(h) => h.to_owned(),
            None => format!("{}:", u.scheme()),
        })
        .unwrap_or_default()
}

/// The cache lifetime a `Cache-Control` header allows, within the bounds.
pub fn cache_lifetime(cache_control: Option<&str>) -> Duration {
    let max_age = cache_control.and_then(|value| {
        value.split(',').find_map(|d| {
            let d = d.trim().to_ascii_lowercase();
            if d == "no-store" || d == "no-cache" {
                return Some(0);
            }
            d.strip_prefix("max-age=")
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
    });
    Duration::from_secs(max_age.unwrap_or(0)).clamp(CIMD_MIN_CACHE, CIMD_MAX_CACHE)
}

/// `base64url(sha256(verifier))`, as S256 compares.
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

pub(super) fn is_pkce_text(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

pub(super) fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
