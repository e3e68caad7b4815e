//! `GET /oauth/authorize` and the person's decision (`POST /oauth/authorize`).
//!
//! Without a session the browser goes to the login page and comes back. A request whose
//! client or redirect URI cannot be trusted, or without PKCE S256, is answered with an
//! error page, never a redirect (RFC 6749 §4.1.2.1: a redirect would hand the error, or a
//! code, to whoever forged the request); so is every other refusal unless the person
//! already holds a live grant to the client (anyone may register a client, so a redirect
//! before consent would make this an open redirector, RFC 9700 §4.11.2). Otherwise the
//! consent page shows the client's name (as text), its id, its redirect hosts (with a
//! warning when they are all loopback) and the scopes. The page cannot be framed
//! (`frame-ancestors 'none'`, `X-Frame-Options: DENY`), runs no script, and its form may
//! lead to this server and the client's redirect origin only (`form-action`). The decision
//! is a POST carrying the session's CSRF token, from this origin, answered by a 303 to the
//! client; the whole request is checked again on it, so nothing the page showed has to be
//! trusted on the way back.

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::html::{esc, form_target, page, page_posting_to};
use super::peer;
use super::session::{SignedIn, csrf_holds, login_url, signed_in};
use etappe_app::App;
use etappe_app::authorization::{Authorization, AuthorizeFailure, AuthorizeParams, OAuthError};
use etappe_app::links::issuer;

fn error_page(error: &OAuthError) -> Response {
    let status = match error {
        OAuthError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        OAuthError::Server(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    page(
        status,
        "Authorization refused",
        &format!(
            "<h1>This authorization request cannot be served</h1><p><strong>{}</strong>: {}</p>\
             <p>Nothing was authorized, and you were not sent on anywhere. Tell the application that sent you here.</p>\
             <p><a href=\"/\">Back to Etappe</a></p>",
            esc(error.code()),
            esc(&error.to_string())
        ),
    )
}

/// A redirect: `302 Found` for a GET (the login page, an approved client's error), `303
/// See Other` for the consent form's POST, so the browser does not repeat the POST (and
/// its body) at the client (RFC 9700 §4.12).
pub(super) fn redirect(status: StatusCode, to: &str) -> Response {
    match HeaderValue::from_str(to) {
        Ok(location) => (
            status,
            [(header::LOCATION, location)],
            [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        )
            .into_response(),
        Err(_) => error_page(&OAuthError::Server(
            "the redirect URI cannot be sent".into(),
        )),
    }
}

fn failure(failure: AuthorizeFailure, status: StatusCode) -> Response {
    match failure {
        AuthorizeFailure::Page(error) => error_page(&error),
        AuthorizeFailure::Redirect { url, .. } => redirect(status, &url),
    }
}

fn hidden(name: &str, value: Option<&str>) -> String {
    value.map_or_else(String::new, |v| {
        format!(
            "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
            esc(v)
        )
    })
}

fn consent_page(request: &Authorization, params: &AuthorizeParams, session: &SignedIn) -> Response {
    let scopes: String = request
        .scopes
        .iter()
        .map(|s| {
            let what = match s {
                etappe_app::identity::Scope::TripsRead => "read your trips",
                etappe_app::identity::Scope::TripsWrite => "create, change and delete your trips",
            };
            format!("<li><code>{}</code>: {what}</li>", esc(s.as_str()))
        })
        .collect();
    let hosts = request
        .redirect_hosts
        .iter()
        .map(|h| format!("<code>{}</code>", esc(h)))
        .collect::<Vec<_>>()
        .join(", ");
    let warning = if request.loopback_only {
        "<p class=\"warn\">This client sends its answer to your own computer only (localhost). Any program running on it could claim this name: approve only if you just started this application yourself.</p>"
    } else {
        ""
    };
    let fields = [
        hidden("response_type", params.response_type.as_deref()),
        hidden("client_id", params.client_id.as_deref()),
        // As the request named it (or not): the code exchange must repeat what it named.
        hidden("redirect_uri", params.redirect_uri.as_deref()),
        hidden("state", params.state.as_deref()),
        hidden("code_challenge", params.code_challenge.as_deref()),
        hidden(
            "code_challenge_method",
            params.code_challenge_method.as_deref(),
        ),
        hidden("scope", params.scope.as_deref()),
        hidden("resource", params.resource.as_deref()),
        hidden("csrf", Some(&session.csrf)),
    ]
    .concat();
    page_posting_to(
        StatusCode::OK,
        "Authorize an agent",
        &format!(
            "<h1>Allow <q>{name}</q> to use Etappe as you?</h1>\
             <p>Client: <code>{id}</code><br>It will be sent back to: {hosts}<br>For: <code>{resource}</code></p>{warning}\
             <p>It asks to:</p><ul>{scopes}</ul>\
             <p>You can revoke it at any time from your list of agents.</p>\
             <form method=\"post\" action=\"/oauth/authorize\">{fields}\
             <button type=\"submit\" name=\"decision\" value=\"approve\">Allow</button>\
             <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
            name = esc(&request.client.client_name),
            id = esc(&request.client.client_id),
            resource = esc(&request.resource),
        ),
        &form_target(&request.redirect_uri),
    )
}

/// `GET /oauth/authorize`.
pub(super) async fn authorize(
    State(app): State<App>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    if let Err(e) = app
        .authorization()
        .admit_authorize_request(&peer(request.extensions()))
        .await
    {
        return error_page(&e);
    }
    let Ok(Query(params)) = Query::<AuthorizeParams>::try_from_uri(request.uri()) else {
        return error_page(&OAuthError::InvalidRequest(
            "the query cannot be read (a parameter given twice?)".into(),
        ));
    };
    let public = issuer(&app);
    // A person signs in first: a client's metadata document is fetched for signed-in
    // people only, so anonymous requests cannot make the server fetch anything.
    let Some(session) = signed_in(&app, &headers).await else {
        let next = request
            .uri()
            .path_and_query()
            .map_or("/oauth/authorize", |p| p.as_str());
        return redirect(StatusCode::FOUND, &login_url(next));
    };
    match app
        .authorization()
        .validate_as(&params, &public, Some(session.user_id))
        .await
    {
        Ok(valid) => consent_page(&valid, &params, &session),
        Err(f) => failure(f, StatusCode::FOUND),
    }
}

#[derive(serde::Deserialize)]
struct Decision {
    #[serde(flatten)]
    params: AuthorizeParams,
    csrf: Option<String>,
    decision: Option<String>,
}

/// `POST /oauth/authorize`: the person's decision, from the consent form.
pub(super) async fn decide(
    State(app): State<App>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    let public = issuer(&app);
    let Some(session) = signed_in(&app, &headers).await else {
        return error_page(&OAuthError::AccessDenied);
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), 16 * 1024).await else {
        return error_page(&OAuthError::InvalidRequest("the form is too large".into()));
    };
    let Ok(decision) = serde_urlencoded::from_bytes::<Decision>(&body) else {
        return error_page(&OAuthError::InvalidRequest(
            "the form cannot be read".into(),
        ));
    };
    if !csrf_holds(
        &app,
        &headers,
        &session,
        decision.csrf.as_deref().unwrap_or_default(),
    ) {
        return page(
            StatusCode::FORBIDDEN,
            "Refused",
            "<h1>This decision did not come from Etappe's consent page</h1><p>Nothing was authorized. Start again from the application.</p>",
        );
    }
    let valid = match app
        .authorization()
        .validate_as(&decision.params, &public, Some(session.user_id))
        .await
    {
        Ok(v) => v,
        Err(f) => return failure(f, StatusCode::SEE_OTHER),
    };
    // After the consent screen the answer goes to the client whatever the person chose.
    match decision.decision.as_deref() {
        Some("approve") => match app
            .authorization()
            .approve(session.user_id, &valid, &public)
            .await
        {
            Ok(to) => redirect(StatusCode::SEE_OTHER, &to),
            Err(e) => error_page(&e),
        },
        _ => redirect(
            StatusCode::SEE_OTHER,
            &app.authorization().deny(&valid, &public),
        ),
    }
}
