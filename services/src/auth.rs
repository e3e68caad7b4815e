//! Who is calling: the one reading of a credential, shared by REST, the event stream, the
//! account routes and MCP, so they cannot disagree on what a credential looks like.
//!
//! - A bearer token (`Authorization: Bearer etp_…`; the scheme is case-insensitive, RFC 9110
//!   §11.1; the token is trimmed; an empty one is none) is a personal access token.
//! - Otherwise, the session cookie (`etappe_session`, `__Host-etappe_session` under https)
//!   is a person logged in by magic link, with every scope. `/mcp` does not call this reader:
//!   it takes bearer tokens only (a browser's cookie must not let a page drive an agent
//!   surface).
//! - A cookie rides along on every request the browser makes, wherever it is sent from, so a
//!   write it authenticates must prove that our own page sent it: the `Origin` (or, absent,
//!   `Sec-Fetch-Site: same-origin`, or the `Referer`'s origin) must be ours, and the request
//!   must carry the session's synchronizer token (`X-CSRF-Token`, or a `csrf` form field on
//!   HTML forms). `SameSite=Lax` alone would let any same-site sibling host post; the origin
//!   check alone trusts browsers that omit `Origin` to send `Sec-Fetch-Site`; the token closes
//!   both. Bearer requests need neither: a browser never adds a bearer token by itself.

use axum::http::{HeaderMap, Method, header};

use etappe_app::accounts::{Accounts, WebOrigin};
use etappe_app::identity::{Identity, IdentityError, Principal, SessionInfo};
use etappe_app::{App, AppError};

/// The `Host` a request came to, if it is text.
pub fn host(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::HOST).and_then(|h| h.to_str().ok())
}

/// The bearer token of `Authorization`, if the header carries one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim().trim_matches('"'))
        .filter(|v| !v.is_empty())
}

/// A caller whose credential holds.
#[derive(Clone, Debug)]
pub struct Authenticated {
    pub principal: Principal,
    /// A short digest of the credential: the key its budgets and confirmations are kept
    /// under (each agent gets its own token, so each its own budget).
    pub credential: String,
    /// The session, when the caller came with the session cookie.
    pub session: Option<SessionInfo>,
}

/// The caller bearer `token` stands for, or `None` when it is no live credential.
pub async fn authenticate(
    identity: &Identity,
    token: &str,
) -> Result<Option<Authenticated>, IdentityError> {
    Ok(identity
        .authenticate(token)
        .await?
        .map(|principal| Authenticated {
            principal,
            credential: etappe_app::budgets::credential_key(token),
            session: None,
        }))
}

/// Where a request says it comes from (`Origin`, else `Sec-Fetch-Site`, else `Referer`),
/// and whether that is this server.
pub fn from_own_origin(headers: &HeaderMap, web: &WebOrigin) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    // A page sent with `Referrer-Policy: no-referrer` (the login pages: their URL holds the
    // token) makes Chromium send `Origin: null` on its own form posts; Sec-Fetch-Site,
    // which no page can forge, then tells whether the post came from this origin.
    if let Some(origin) = text("origin").filter(|o| *o != "null") {
        return web.accepts(origin);
    }
    if let Some(site) = text("sec-fetch-site") {
        return site.eq_ignore_ascii_case("same-origin");
    }
    text("referer")
        .and_then(|r| url::Url::parse(r).ok())
        .is_some_and(|r| web.accepts(&r.origin().ascii_serialization()))
}

/// Whether two secrets are equal, in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The CSRF rule for a write the session cookie authenticates (see the module header):
/// `form_token` is the `csrf` field of an HTML form, when the handler read one.
pub fn check_cookie_write(
    headers: &HeaderMap,
    web: &WebOrigin,
    session: &SessionInfo,
    form_token: Option<&str>,
) -> Result<(), AppError> {
    if !from_own_origin(headers, web) {
        return Err(AppError::CsrfRefused(format!(
            "a write authenticated by the session cookie must come from this site's own pages (Origin {})",
            web.accepted.first().map_or("", String::as_str)
        )));
    }
    let sent = headers
        .get("x-csrf-token")
        .and_then(|v| v.to_str().ok())
        .or(form_token)
        .map(str::trim)
        .unwrap_or_default();
    if !same_secret(sent, &session.csrf_token) {
        return Err(AppError::CsrfRefused(
            "a write authenticated by the session cookie needs the session's token in X-CSRF-Token (read csrfToken from GET /users/me)"
                .into(),
        ));
    }
    Ok(())
}

/// The live session of the request's cookie, if it has one.
pub async fn session_of(
    accounts: &Accounts,
    headers: &HeaderMap,
) -> Result<Option<(SessionInfo, String)>, AppError> {
    let Some(value) = cookie(headers, accounts.web.cookie_name()) else {
        return Ok(None);
    };
    Ok(accounts
        .session(value)
        .await?
        .map(|s| (s, etappe_app::budgets::credential_key(value))))
}

/// The one admission of a request on REST, the page and the account routes: who calls
/// (a bearer token, or a session cookie with `csrf_checked` writes), then the credential's
/// read or change budget by the method. An anonymous request is refused.
pub async fn admit_request(
    app: &App,
    method: &Method,
    headers: &HeaderMap,
    csrf_checked: bool,
) -> Result<Authenticated, AppError> {
    let caller = authenticate_request(app, method, headers, csrf_checked)
        .await?
        .ok_or(AppError::Unauthenticated)?;
    let kind = if method.is_safe() {
        etappe_app::budgets::CallKind::Read
    } else {
        etappe_app::budgets::CallKind::Change
    };
    app.budgets()
        .admit_call(&caller.principal.user_id, &caller.credential, kind)
        .await
        .map_err(AppError::RateLimited)?;
    Ok(caller)
}

/// The caller of a REST or account request: a bearer token, else the session cookie. A
/// cookie write (any method but GET, HEAD, OPTIONS) must pass [`check_cookie_write`] with
/// the `X-CSRF-Token` header; handlers of HTML forms check the form field themselves and
/// pass `csrf_checked`.
pub async fn authenticate_request(
    app: &App,
    method: &Method,
    headers: &HeaderMap,
    csrf_checked: bool,
) -> Result<Option<Authenticated>, AppError> {
    if let Some(token) = bearer_token(headers) {
        return Ok(authenticate(app.identity(), token).await?);
    }
    let Some((session, credential)) = session_of(app.accounts(), headers).await? else {
        return Ok(None);
    };
    if !method.is_safe() && !csrf_checked {
        check_cookie_write(headers, &app.accounts().web, &session, None)?;
    }
    Ok(Some(Authenticated {
        principal: Accounts::principal_of(&session),
        credential,
        session: Some(session),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, value.parse().expect("a header value"));
        }
        headers
    }

    #[test]
    fn the_scheme_is_read_without_regard_to_case_and_the_token_trimmed() {
        for value in [
            "Bearer etp_x",
            "bearer etp_x",
            "BEARER  etp_x ",
            "  Bearer etp_x",
        ] {
            assert_eq!(
                bearer_token(&headers(&[("authorization", value)])),
                Some("etp_x"),
                "{value:?}"
            );
        }
    }

    #[test]
    fn other_schemes_and_empty_tokens_are_no_bearer_token() {
        for value in [
            "Basic dXNlcg==",
            "Bearer",
            "Bearer   ",
            "Bearertoken",
            "etp_x",
        ] {
            assert_eq!(
                bearer_token(&headers(&[("authorization", value)])),
                None,
                "{value:?}"
            );
        }
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }

    #[test]
    fn cookies_are_read_by_exact_name() {
        let h = headers(&[
            ("cookie", "a=1; etappe_session=ets_x; b=2"),
            ("cookie", "c=3"),
        ]);
        assert_eq!(cookie(&h, "etappe_session"), Some("ets_x"));
        assert_eq!(cookie(&h, "c"), Some("3"));
        assert_eq!(cookie(&h, "session"), None);
    }

    fn session() -> SessionInfo {
        SessionInfo {
            session_id: uuid::Uuid::now_v7(),
            user_id: etappe_domain::ids::UserId::new(),
            csrf_token: "s3cret".into(),
            last_seen_at: chrono::Utc::now(),
            expires_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_cookie_write_needs_our_origin_and_the_session_token() {
        let web = WebOrigin::of(
            &url::Url::parse("https://etappe.example").expect("url"),
            &[],
        );
        let s = session();
        let ok = headers(&[
            ("origin", "https://etappe.example"),
            ("x-csrf-token", "s3cret"),
        ]);
        assert!(check_cookie_write(&ok, &web, &s, None).is_ok());
        for refused in [
            headers(&[("x-csrf-token", "s3cret")]),
            headers(&[
                ("origin", "https://evil.example"),
                ("x-csrf-token", "s3cret"),
            ]),
            headers(&[("origin", "https://etappe.example")]),
            headers(&[
                ("origin", "https://etappe.example"),
                ("x-csrf-token", "s3creT"),
            ]),
            headers(&[("sec-fetch-site", "same-site"), ("x-csrf-token", "s3cret")]),
        ] {
            assert!(
                check_cookie_write(&refused, &web, &s, None).is_err(),
                "{refused:?}"
            );
        }
        // Without Origin: Sec-Fetch-Site or the Referer stand in; a form sends the field.
        let fetch = headers(&[("sec-fetch-site", "same-origin")]);
        assert!(check_cookie_write(&fetch, &web, &s, Some("s3cret")).is_ok());
        let referred = headers(&[("referer", "https://etappe.example/account")]);
        assert!(check_cookie_write(&referred, &web, &s, Some("s3cret")).is_ok());
        // `Origin: null` (a no-referrer page's form post) defers to Sec-Fetch-Site.
        let null_here = headers(&[("origin", "null"), ("sec-fetch-site", "same-origin")]);
        assert!(from_own_origin(&null_here, &web));
        let null_there = headers(&[("origin", "null"), ("sec-fetch-site", "cross-site")]);
        assert!(!from_own_origin(&null_there, &web));
        assert!(!from_own_origin(&headers(&[("origin", "null")]), &web));
    }
}
