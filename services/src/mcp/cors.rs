//! CORS for `/mcp`, so a browser-based MCP client on an allowed origin can call Etappe. A
//! preflight (`OPTIONS` with `Access-Control-Request-Method`) carries no credential by the
//! Fetch standard, so it is answered here, before authentication: 204 with the methods and
//! headers the transport reads for an allowed origin, 403 without any CORS header for any
//! other. Every answer to an allowed origin names it in `Access-Control-Allow-Origin` and
//! exposes the headers a client must read (`Mcp-Session-Id`, `MCP-Protocol-Version`,
//! `WWW-Authenticate` for the OAuth discovery). The list is the one the transport's own
//! Origin check (DNS-rebinding protection) uses, so the two cannot disagree.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The methods `/mcp` serves.
const METHODS: &str = "GET, POST, DELETE, OPTIONS";
/// The request headers a client sends to `/mcp`.
const REQUEST_HEADERS: &str =
    "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id";
/// The answer headers a client reads.
const EXPOSED: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";
/// How long a browser may reuse a preflight, seconds.
const MAX_AGE: &str = "600";

/// The browser origins admitted: `scheme://host[:port]`, or `scheme://host:*` for any port.
#[derive(Debug, Clone)]
pub struct Origins(Vec<String>);

impl Origins {
    pub fn new(patterns: Vec<String>) -> Self {
        Self(patterns)
    }

    /// Whether `origin` (an `Origin` header's value) is admitted.
    pub fn admits(&self, origin: &str) -> bool {
        let Some(origin) = parse(origin) else {
            return false;
        };
        self.0.iter().any(|pattern| {
            let (base, any_port) = match pattern.strip_suffix(":*") {
                Some(base) => (base, true),
                None => (pattern.as_str(), false),
            };
            parse(base).is_some_and(|allowed| {
                allowed.scheme == origin.scheme
                    && allowed.host == origin.host
                    && (any_port || allowed.port == origin.port)
            })
        })
    }
}

struct Parsed {
    scheme: String,
    host: String,
    port: Option<u16>,
}

/// An origin's scheme, host and port (the scheme's default when none is written).
fn parse(origin: &str) -> Option<Parsed> {
    let url = url::Url::parse(origin.trim()).ok()?;
    if url.path() != "/" || url.query().is_some() || !url.username().is_empty() {
        return None;
    }
    Some(Parsed {
        scheme: url.scheme().to_ascii_lowercase(),
        host: url.host_str()?.to_ascii_lowercase(),
        port: url.port_or_known_default(),
    })
}

fn origin_of(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::ORIGIN).and_then(|v| v.to_str().ok())
}

/// The middleware (outermost on `/mcp`).
pub async fn cors(State(origins): State<Arc<Origins>>, request: Request, next: Next) -> Response {
    let origin = origin_of(request.headers())
        .filter(|o| origins.admits(o))
        .and_then(|o| HeaderValue::from_str(o).ok());
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        let Some(origin) = origin else {
            return (
                StatusCode::FORBIDDEN,
                "this origin may not call /mcp from a browser (ETAPPE_MCP_ALLOWED_ORIGINS)",
            )
                .into_response();
        };
        let mut answer = StatusCode::NO_CONTENT.into_response();
        let h = answer.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(METHODS),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(REQUEST_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static(MAX_AGE),
        );
        h.insert(header::VARY, HeaderValue::from_static("origin"));
        return answer;
    }
    let mut answer = next.run(request).await;
    if let Some(origin) = origin {
        let h = answer.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED),
        );
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_by_scheme_host_and_port() {
        let origins = Origins::new(vec![
            "http://127.0.0.1:*".into(),
            "https://app.example.org".into(),
            "http://tool.example:8080".into(),
        ]);
        assert!(origins.admits("http://127.0.0.1:6274"));
        assert!(origins.admits("https://app.example.org"));
        assert!(origins.admits("https://app.example.org:443"));
        assert!(origins.admits("http://tool.example:8080"));
        assert!(!origins.admits("http://tool.example:8081"));
        assert!(!origins.admits("http://app.example.org"));
        assert!(!origins.admits("https://evil.example"));
        assert!(!origins.admits("https://app.example.org.evil.example"));
        assert!(!origins.admits("null"));
        assert!(!origins.admits("not an origin"));
    }
}
