//! The few HTML pages of logging in: small, without scripts, each sent with headers that
//! keep it out of frames and caches and its URL (which may hold a login token) out of
//! `Referer` headers.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

pub(super) use crate::html::escape;

/// A page: `title` and `body` (already HTML) with the defensive headers.
pub(super) fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Etappe</title>\
         <style>body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}}\
         input,button{{font:inherit;padding:.4rem .6rem}}</style></head>\
         <body><h1>{title}</h1>\n{body}\n</body></html>\n",
        title = escape(title),
    );
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    response
}

/// The form field carrying where to go after signing in (none without one).
fn hidden_next(next: Option<&str>) -> String {
    next.map(|n| {
        format!(
            "<input type=\"hidden\" name=\"next\" value=\"{}\">",
            escape(n)
        )
    })
    .unwrap_or_default()
}

/// The login form.
pub(super) fn login(next: Option<&str>) -> Response {
    let next = hidden_next(next);
    page(
        StatusCode::OK,
        "Log in",
        &format!(
            "<p>Enter your e-mail address: we send you a link that logs you in.</p>\
             <form method=\"post\" action=\"/auth/login\">{next}\
             <input type=\"email\" name=\"email\" required autocomplete=\"email\" aria-label=\"E-mail address\">\
             <button type=\"submit\">Send the link</button></form>"
        ),
    )
}

/// What a login request answers, whatever the address.
pub(super) const SENT: &str =
    "If this address can log in, a link is on its way to it. It works once, for 15 minutes.";

/// After a login request from the form.
pub(super) fn sent() -> Response {
    page(
        StatusCode::ACCEPTED,
        "Check your mail",
        &format!("<p>{}</p>", escape(SENT)),
    )
}

/// The page a login link opens: a button, so that mail scanners which open links do not
/// spend them (only the POST does). It says which account the link opens (`email`), and,
/// when the browser is signed in to another account (`current`), that continuing leaves it.
pub(super) fn continue_login(
    token: &str,
    next: Option<&str>,
    email: &str,
    current: Option<&str>,
) -> Response {
    let next = hidden_next(next);
    let (said, button) = match current {
        Some(current) if !current.eq_ignore_ascii_case(email) => (
            format!(
                "<p>You are signed in as <strong>{current}</strong>; continuing logs you out and \
                 into <strong>{email}</strong>.</p>\
                 <p>If <strong>{email}</strong> is not your address, do not continue: whoever \
                 sent you this link could read everything you plan there.</p>",
                current = escape(current),
                email = escape(email),
            ),
            format!(
                "Log out of {} and continue as {}",
                escape(current),
                escape(email)
            ),
        ),
        Some(_) => (
            format!(
                "<p>You are signed in as <strong>{}</strong> already; this link opens the same account.</p>",
                escape(email)
            ),
            format!("Continue as {}", escape(email)),
        ),
        None => (
            format!(
                "<p>This link logs you in as <strong>{email}</strong>.</p>\
                 <p>If this is not your address, do not continue: whoever sent you this link \
                 could read everything you plan there.</p>",
                email = escape(email),
            ),
            format!("Continue as {}", escape(email)),
        ),
    };
    page(
        StatusCode::OK,
        "Log in to Etappe",
        &format!(
            "{said}<form method=\"post\" action=\"/auth/magic\">\
             <input type=\"hidden\" name=\"token\" value=\"{}\">{next}\
             <button type=\"submit\">{button}</button></form>",
            escape(token)
        ),
    )
}

/// A refusal as a page, with a way back to the login form.
pub(super) fn refused(status: StatusCode, title: &str, detail: &str) -> Response {
    page(
        status,
        title,
        &format!(
            "<p>{}</p><p><a href=\"/login\">Ask for a new login link</a></p>",
            escape(detail)
        ),
    )
}

/// A read refused because its budget is spent: 429 with `Retry-After`, and no login link (the
/// reader of a public link has no account to log in to).
pub(super) fn try_later(title: &str, detail: &str, retry_after_secs: u64) -> Response {
    let mut response = page(
        StatusCode::TOO_MANY_REQUESTS,
        title,
        &format!("<p>{}</p>", escape(detail)),
    );
    if let Ok(value) = axum::http::HeaderValue::from_str(&retry_after_secs.to_string()) {
        response
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, value);
    }
    response
}

/// The home page: who is logged in, and the logout button.
pub(super) fn home(email: Option<&str>, csrf: Option<&str>) -> Response {
    match (email, csrf) {
        (Some(email), Some(csrf)) => page(
            StatusCode::OK,
            "Etappe",
            &format!(
                "<p>Logged in as {}.</p>\
                 <form method=\"post\" action=\"/auth/logout\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                 <button type=\"submit\">Log out</button></form>",
                escape(email),
                escape(csrf)
            ),
        ),
        _ => page(StatusCode::OK, "Etappe", LANDING),
    }
}

/// What `/` says to a browser without a session: what Etappe does, the way in, and how an
/// agent connects. No script, like every page of logging in.
const LANDING: &str = "<svg viewBox=\"0 0 320 120\" width=\"100%\" role=\"img\" \
aria-label=\"A route cut into three days, each day ending at a numbered place to sleep\">\
<rect width=\"320\" height=\"120\" rx=\"8\" fill=\"#f6f8fa\"/>\
<path d=\"M20 90 C60 20 90 100 120 60\" fill=\"none\" stroke=\"#0072B2\" stroke-width=\"5\"/>\
<path d=\"M120 60 C150 20 180 30 210 70\" fill=\"none\" stroke=\"#D55E00\" stroke-width=\"5\"/>\
<path d=\"M210 70 C240 100 270 40 300 30\" fill=\"none\" stroke=\"#009E73\" stroke-width=\"5\"/>\
<circle cx=\"20\" cy=\"90\" r=\"9\" fill=\"#116329\"/><text x=\"20\" y=\"94\" font-size=\"11\" \
text-anchor=\"middle\" fill=\"#fff\">S</text>\
<circle cx=\"120\" cy=\"60\" r=\"9\" fill=\"#fff\" stroke=\"#1f2328\" stroke-width=\"2\"/>\
<text x=\"120\" y=\"64\" font-size=\"11\" text-anchor=\"middle\">1</text>\
<circle cx=\"210\" cy=\"70\" r=\"9\" fill=\"#fff\" stroke=\"#1f2328\" stroke-width=\"2\"/>\
<text x=\"210\" y=\"74\" font-size=\"11\" text-anchor=\"middle\">2</text>\
<circle cx=\"300\" cy=\"30\" r=\"9\" fill=\"#1f2328\"/><text x=\"300\" y=\"34\" font-size=\"11\" \
text-anchor=\"middle\" fill=\"#fff\">F</text>\
<text x=\"70\" y=\"112\" font-size=\"11\" fill=\"#1f2328\">Day 1 · 74 km</text>\
<text x=\"150\" y=\"22\" font-size=\"11\" fill=\"#1f2328\">Day 2 · 68 km</text>\
<text x=\"235\" y=\"112\" font-size=\"11\" fill=\"#1f2328\">Day 3 · 71 km</text></svg>\
<p><strong>Plan a multi-day bicycle trip from a route.</strong> \
Give Etappe a GPX file, a Komoot, Strava or RideWithGPS link, or just the places you ride \
from and to: it cuts the route into days you can ride, and tells you what each day holds.</p>\
<ul>\
<li>Days cut to your daily maximum, your pace, your climbing and your dates, each ending \
where you can sleep if you ask for it.</li>\
<li>Along each day: water, food, bike shops, stations, rough or busy roads, fords and \
ferries, from OpenStreetMap; the weather for dated days.</li>\
<li>Edit the days: split, merge, rest days, detours, the place you sleep. Every change is a \
version you can go back to.</li>\
<li>Take it with you: GPX and FIT files for the whole trip and each day (Garmin, Wahoo), a \
public link, and the trip readable offline on your phone.</li>\
</ul>\
<p><a href=\"/login\"><strong>Log in</strong></a> with your e-mail address (no password: we \
mail you a link).</p>\
<h2>Plan with an AI agent</h2>\
<p>Etappe speaks the Model Context Protocol. Add the server <code>/mcp</code> of this site \
(its full address, for example <code>https://your-etappe/mcp</code>) to your agent or chat \
app as a remote MCP server: it asks you to log in and to approve the agent, then it can \
create, read and edit your trips. You see and revoke agents on your account page.</p>\
<p>Programs can use the REST API: its description is at \
<a href=\"/openapi.json\">/openapi.json</a>.</p>";

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
