//! The people's transport: the login pages, `/auth/*` (magic link, logout) and the account
//! routes `/users/me*`. A sibling of `http` and `mcp`: it takes the [`App`] and imports
//! neither (errors become problem+json through the neutral `problem` module).
//!
//! Login: `POST /auth/login {email}` always answers 202 with the same body; the link mailed
//! opens `GET /auth/magic?token=…`, a page that names the address the link logs into (and
//! the account the browser leaves, if it is signed in to another) and whose button POSTs
//! the token back (mail scanners open links, they do not submit forms); that POST spends
//! it, opens a session, sets the cookie and redirects (303) to `next` (a path on this
//! server) or `/`. A used or expired link answers 410 (`login_link_spent`), an unknown one
//! 400 (`login_link_invalid`), on the page already and on the POST.
//!
//! Under an https public URL every answer, whichever transport gives it, carries
//! `Strict-Transport-Security` (set by [`share_page`], the one layer of this transport the
//! composition root puts over all of them).

mod account;
mod assets;
mod extract;
pub mod openapi;
mod pages;
mod schemas;

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{MethodRouter, delete, get, post};
use serde_json::json;

use self::extract::{Fields, FormCaller, Peer};
use crate::problem::Problem;
use etappe_app::accounts::safe_next;
use etappe_app::{App, AppError};

/// The people's router.
pub fn router(state: App) -> Router {
    let routes: Vec<(&str, MethodRouter<App>, &'static str)> = vec![
        ("/", get(home), "GET"),
        ("/assets/{name}", get(assets::serve), "GET"),
        ("/sw.js", get(assets::worker), "GET"),
        ("/manifest.webmanifest", get(assets::manifest), "GET"),
        ("/login", get(login_page), "GET"),
        ("/auth/login", post(login), "POST"),
        ("/auth/magic", get(magic_page).post(magic), "GET, POST"),
        ("/auth/logout", post(logout), "POST"),
        (
            "/users/me",
            get(account::me).delete(account::delete),
            "GET, DELETE",
        ),
        ("/users/me/sessions", get(account::sessions), "GET"),
        (
            "/users/me/sessions/{id}",
            delete(account::revoke_session),
            "DELETE",
        ),
        (
            "/users/me/tokens",
            get(account::tokens).post(account::create_token),
            "GET, POST",
        ),
        (
            "/users/me/tokens/{id}",
            delete(account::revoke_token),
            "DELETE",
        ),
        ("/users/me/export", get(account::export), "GET"),
        ("/users/me/audit", get(account::audit), "GET"),
    ];
    let mut router = Router::new();
    for (path, method_router, allowed) in routes {
        router = router.route(
            path,
            method_router.fallback(move |method: axum::http::Method| async move {
                Problem::from(AppError::MethodNotAllowed {
                    method: method.to_string(),
                    allowed: allowed.to_owned(),
                })
                .into_response()
            }),
        );
    }
    router.with_state(state)
}

/// An error as a page (for a browser's form) or as problem+json.
fn refusal(error: &AppError, html: bool) -> Response {
    if !html {
        return Problem::from(error).into_response();
    }
    let problem = Problem::from(error);
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::BAD_REQUEST);
    if status.is_server_error() {
        return Problem::from(error).into_response();
    }
    pages::refused(status, problem.title, &problem.detail)
}

fn set_cookie(response: &mut Response, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// The `Set-Cookie` value of a session (or, with `None`, of its removal).
fn session_cookie(app: &App, value: Option<&str>) -> String {
    let web = &app.accounts().web;
    let secure = if web.secure { "; Secure" } else { "" };
    match value {
        Some(value) => format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            web.cookie_name(),
            app.accounts().session_max_age()
        ),
        None => format!(
            "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}",
            web.cookie_name()
        ),
    }
}

/// `GET /`: the rider's page for a browser with a session; without one, the page that
/// leads to the login form (no script).
async fn home(State(app): State<App>, headers: HeaderMap) -> Response {
    let session = crate::auth::session_of(app.accounts(), &headers)
        .await
        .ok()
        .flatten();
    if session.is_none() {
        return pages::home(None, None);
    }
    assets::shell(app.accounts().tile_url(), false)
}

/// The layer the composition root puts over every transport: content negotiation of a
/// share link (the REST transport owns `/s/{code}`, this one the page: a browser asking
/// `GET /s/{code}` for `text/html` gets the read-only page, which reads the same path as
/// JSON; JSON clients and `.gpx`/`.fit` files pass through unchanged), and, under an https
/// public URL, `Strict-Transport-Security` on every answer.
pub async fn share_page(
    State(app): State<App>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut response = negotiate_share(&app, request, next).await;
    transport_security(&app, &mut response);
    response
}

/// HSTS for a year when the public URL is https: a browser that reached Etappe over TLS
/// once never sends it (its cookie, a login link) over plain http again. Under an http
/// public URL (a local run) it is never sent: a browser would then refuse the address.
fn transport_security(app: &App, response: &mut Response) {
    if app.accounts().web.secure {
        response.headers_mut().insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
}

async fn negotiate_share(
    app: &App,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let is_share_page = request.method() == axum::http::Method::GET
        && request
            .uri()
            .path()
            .strip_prefix("/s/")
            .is_some_and(|code| !code.is_empty() && !code.contains(['/', '.']));
    if !is_share_page {
        return next.run(request).await;
    }
    if assets::wants_html(request.headers()) {
        // The page tells a revoked or unknown link apart itself (it reads the JSON); the
        // status says it too, so a crawler or a link checker sees the link is gone.
        let code = request.uri().path().trim_start_matches("/s/").to_owned();
        // The page is a read of the link like its JSON: the same anonymous limit counts it.
        let visitor = request
            .extensions()
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
        if let Err(error) = etappe_app::links::admit_visitor(app, visitor, &code).await {
            let problem = Problem::from(&error);
            return match problem.retry_after {
                Some(seconds) => pages::try_later(problem.title, &problem.detail, seconds),
                None => refusal(&error, true),
            };
        }
        let mut page = assets::shell(app.accounts().tile_url(), true);
        if let Err(etappe_app::AppError::NotFound) = app.trips().shared_view(&code).await {
            *page.status_mut() = axum::http::StatusCode::NOT_FOUND;
        }
        return page;
    }
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

/// `GET /login`.
async fn login_page(Query(query): Query<HashMap<String, String>>) -> Response {
    pages::login(safe_next(query.get("next").map(String::as_str)).as_deref())
}

/// `POST /auth/login {email, next?}`: 202 alike for every address.
async fn login(State(app): State<App>, Peer(peer): Peer, fields: Fields) -> Response {
    let Some(email) = fields.text("email") else {
        let error = AppError::Input(etappe_domain::trip::InputError::Invalid(vec![
            etappe_domain::trip::FieldError::new(
                "email",
                "required: the e-mail address to send the login link to",
            ),
        ]));
        return refusal(&error, fields.form);
    };
    if let Err(error) = app
        .accounts()
        .request_login(email, fields.text("next"), peer)
        .await
    {
        return refusal(&error, fields.form);
    }
    if fields.form {
        return pages::sent();
    }
    (
        StatusCode::ACCEPTED,
        axum::Json(json!({"status": "accepted", "detail": pages::SENT})),
    )
        .into_response()
}

/// `GET /auth/magic?token=…&next=…`: the "Continue" page; spends nothing. It names the
/// account the link logs into, and, when the browser is signed in to another one, that
/// continuing leaves it: a link someone else hands over opens *their* account, where what
/// one plans would be theirs to read. A link the POST would refuse is refused here already.
async fn magic_page(
    State(app): State<App>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(token) = query.get("token").filter(|t| !t.trim().is_empty()) else {
        return refusal(&AppError::LoginLinkInvalid, true);
    };
    let email = match app.accounts().link_preview(token).await {
        Ok(email) => email,
        Err(error) => return refusal(&error, true),
    };
    let current = match crate::auth::session_of(app.accounts(), &headers).await {
        Ok(Some((session, _))) => match app.accounts().email_of(session.user_id).await {
            Ok(current) => current,
            Err(error) => return refusal(&error, true),
        },
        _ => None,
    };
    pages::continue_login(
        token,
        safe_next(query.get("next").map(String::as_str)).as_deref(),
        &email,
        current.as_deref(),
    )
}

/// `POST /auth/magic` (token, next): spends the link, opens a session, sets the cookie.
async fn magic(State(app): State<App>, headers: HeaderMap, fields: Fields) -> Response {
    // Login CSRF: another site must not log a browser into an account of its choosing.
    if !crate::auth::from_own_origin(&headers, &app.accounts().web) {
        let error = AppError::CsrfRefused(
            "a login link is followed from this site's own page (Origin did not match)".into(),
        );
        return refusal(&error, fields.form);
    }
    let token = fields.text("token").unwrap_or_default();
    let agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let session = match app.accounts().redeem(token, agent).await {
        Ok(session) => session,
        Err(error) => return refusal(&error, fields.form),
    };
    // A login replaces the browser's previous session, if it had one.
    if let Ok(Some((previous, _))) = crate::auth::session_of(app.accounts(), &headers).await {
        let _ = app.accounts().logout(&previous).await;
    }
    let next = safe_next(fields.text("next")).unwrap_or_else(|| "/".into());
    let mut response = Redirect::to(&next).into_response();
    set_cookie(&mut response, &session_cookie(&app, Some(&session.cookie)));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `POST /auth/logout`: ends the session (CSRF-checked: header or form field) and clears
/// the cookie. Without a live session it only clears the cookie.
async fn logout(
    State(app): State<App>,
    FormCaller(caller): FormCaller,
    headers: HeaderMap,
    fields: Fields,
) -> Response {
    if let Some(session) = caller.as_ref().and_then(|c| c.session.as_ref()) {
        if let Err(error) = crate::auth::check_cookie_write(
            &headers,
            &app.accounts().web,
            session,
            fields.text("csrf"),
        ) {
            return refusal(&error, fields.form);
        }
        if let Err(error) = app.accounts().logout(session).await {
            return refusal(&error, fields.form);
        }
    }
    let mut response = if fields.form {
        Redirect::to("/login").into_response()
    } else {
        StatusCode::NO_CONTENT.into_response()
    };
    set_cookie(&mut response, &session_cookie(&app, None));
    response
}
