//! The pages this transport serves (consent, errors, the agents list): escaped text, a
//! little inline style, no script, and headers that keep them out of frames and caches and
//! their forms posting to this server (`form-action 'self'`; the consent form also to its
//! client's redirect origin, where its answer leads).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub(super) use crate::html::escape as esc;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}\
code{background:#f3f3f3;padding:0 .2rem;word-break:break-all}.warn{background:#fff4d6;padding:.5rem 1rem;border-left:4px solid #d9a400}\
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:1rem}";

/// A page that cannot be framed, runs no script, and whose forms post to this server only.
pub(super) fn page(status: StatusCode, title: &str, body: &str) -> Response {
    page_posting_to(status, title, body, "")
}

/// A page as [`page`] whose forms may also lead to `targets` (CSP source expressions,
/// space-separated): the consent form's answer is a redirect to the client, and browsers
/// hold a form's redirects to `form-action` too.
pub(super) fn page_posting_to(
    status: StatusCode,
    title: &str,
    body: &str,
    targets: &str,
) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head><body>{body}</body></html>",
        esc(title)
    );
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response();
    let targets = targets.trim();
    let form_action = if targets.is_empty() {
        "'self'".to_owned()
    } else {
        format!("'self' {targets}")
    };
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    );
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_str(&csp).unwrap_or_else(|_| {
            HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        }),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// The `form-action` source that admits a redirect to `uri`: its origin for http(s) (a
/// host-source; an IPv6 literal, which CSP's grammar cannot name, falls back to its scheme),
/// its scheme for a private-use one (`cursor:`). Empty when `uri` does not parse.
pub(super) fn form_target(uri: &str) -> String {
    let Ok(url) = url::Url::parse(uri) else {
        return String::new();
    };
    let clean = |text: &str| {
        text.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | ':' | '/'))
    };
    match (url.scheme(), url.host()) {
        ("http" | "https", Some(url::Host::Domain(_) | url::Host::Ipv4(_))) => {
            let origin = url.origin().ascii_serialization();
            if clean(&origin) {
                origin
            } else {
                format!("{}:", url.scheme())
            }
        }
        (scheme, _) if clean(scheme) => format!("{scheme}:"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_form_may_lead_to_the_origin_or_the_scheme_of_the_redirect_only() {
        use super::form_target;
        assert_eq!(
            form_target("https://claude.ai/api/mcp/auth_callback?x=1"),
            "https://claude.ai"
        );
        assert_eq!(
            form_target("http://127.0.0.1:7777/callback"),
            "http://127.0.0.1:7777"
        );
        assert_eq!(form_target("http://[::1]:7777/callback"), "http:");
        assert_eq!(
            form_target("cursor://anysphere.cursor-mcp/oauth/callback"),
            "cursor:"
        );
        assert_eq!(form_target("not a uri"), "");
    }
}
