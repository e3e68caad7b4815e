//! People: login by magic link (read from the file mailbox, or from a small SMTP server the
//! test runs), sessions and their cookie, the CSRF rule of cookie writes, and the account
//! routes: tokens, export, deletion, audit; the link's page naming whose account it opens;
//! the file mailbox's modes and its mail going with the account. Both backends.

use std::time::Duration;

use etappe_tests::{Backend, TestApp, UNFETCHED_GPX};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The replicas test counts login budgets in Redis, whose answers are bounded to 500 ms
/// (then a replica counts alone, by design): it runs alone, the others share.
static ALONE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// A client that shows redirects instead of following them (the cookie is on the 303).
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The messages of the file mailbox, oldest first.
fn mailbox(app: &TestApp) -> Vec<String> {
    let dir = app.data_dir().join("mailbox");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("a message"))
        .collect()
}

/// Waits until the mailbox holds `count` messages; answers the newest.
async fn wait_for_mail(app: &TestApp, count: usize) -> String {
    for _ in 0..100 {
        let messages = mailbox(app);
        if messages.len() >= count {
            return messages.last().expect("a message").clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no mail number {count} arrived in {:?}", app.data_dir());
}

/// The header block and the decoded body of an RFC 5322 message (7bit or quoted-printable:
/// what a builder writes for a plain-text message).
fn parse_eml(message: &str) -> (String, String) {
    let (headers, body) = message
        .split_once("\r\n\r\n")
        .or_else(|| message.split_once("\n\n"))
        .expect("headers, a blank line, a body");
    let headers = headers.replace("\r\n", "\n");
    if !headers
        .to_ascii_lowercase()
        .contains("content-transfer-encoding: quoted-printable")
    {
        return (headers, body.to_owned());
    }
    let soft = body.replace("=\r\n", "").replace("=\n", "");
    let mut out = Vec::new();
    let bytes = soft.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("ascii");
            out.push(u8::from_str_radix(hex, 16).expect("an =XX escape"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    (headers, String::from_utf8(out).expect("utf-8 body"))
}

/// The login link in a message.
fn link_in(message: &str) -> String {
    let (_, body) = parse_eml(message);
    body.split_whitespace()
        .find(|w| w.contains("/auth/magic?token="))
        .unwrap_or_else(|| panic!("no login link in {body}"))
        .to_owned()
}

async fn ask_link(app: &TestApp, email: &str) -> (StatusCode, String) {
    let response = client()
        .post(format!("{}/auth/login", app.base))
        .json(&json!({"email": email}))
        .send()
        .await
        .expect("login request");
    let status = response.status();
    (status, response.text().await.expect("body"))
}

/// Follows a login link as a browser does: the page, then its button. Answers the POST's
/// answer (the 303 of a live link). A link the POST refuses is refused by the page already,
/// with the same status.
async fn follow(app: &TestApp, link: &str) -> reqwest::Response {
    let page = client().get(link).send().await.expect("link page");
    assert_eq!(
        page.headers()["referrer-policy"],
        "no-referrer",
        "the page's URL holds the token"
    );
    let shown = page.status();
    let html = page.text().await.expect("page");
    let token = link
        .split("token=")
        .nth(1)
        .expect("token")
        .split('&')
        .next()
        .expect("token");
    if shown == StatusCode::OK {
        assert!(html.contains(&format!("value=\"{token}\"")), "{html}");
        assert!(html.contains("action=\"/auth/magic\""), "{html}");
    } else {
        assert!(shown.is_client_error(), "{shown}: {html}");
        assert!(!html.contains("action=\"/auth/magic\""), "{html}");
    }
    let answer = client()
        .post(format!("{}/auth/magic", app.base))
        .header("origin", &app.base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .expect("continue");
    if shown != StatusCode::OK {
        assert_eq!(
            answer.status(),
            shown,
            "the page refuses what the POST refuses"
        );
    }
    answer
}

/// A logged-in browser: its cookie and its CSRF token.
#[derive(Debug, Clone)]
struct Browser {
    cookie: String,
    csrf: String,
    email: String,
}

fn cookie_of(response: &reqwest::Response) -> String {
    let set = response
        .headers()
        .get("set-cookie")
        .expect("a session cookie")
        .to_str()
        .expect("text")
        .to_owned();
    // 30 days; the server's expiry slides with use and GET /users/me re-sends the cookie.
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=2592000"] {
        assert!(set.contains(attribute), "{set}");
    }
    assert!(!set.contains("Secure"), "no Secure over plain http: {set}");
    set.split(';').next().expect("name=value").to_owned()
}

async fn me(app: &TestApp, cookie: &str) -> (StatusCode, Value) {
    let response = client()
        .get(format!("{}/users/me", app.base))
        .header("cookie", cookie)
        .send()
        .await
        .expect("me");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn log_in(app: &TestApp, email: &str) -> Browser {
    let before = mailbox(app).len();
    let (status, _) = ask_link(app, email).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let link = link_in(&wait_for_mail(app, before + 1).await);
    let answer = follow(app, &link).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert_eq!(answer.headers()["location"], "/");
    let cookie = cookie_of(&answer);
    let (status, body) = me(app, &cookie).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    Browser {
        cookie,
        csrf: body["csrfToken"].as_str().expect("csrfToken").to_owned(),
        email: body["email"].as_str().expect("email").to_owned(),
    }
}

fn email() -> String {
    format!("rider-{}@example.org", uuid::Uuid::now_v7())
}

/// A request with the browser's cookie, from our own page (Origin and the CSRF token).
fn from_page(
    app: &TestApp,
    browser: &Browser,
    method: reqwest::Method,
    path: &str,
) -> reqwest::RequestBuilder {
    client()
        .request(method, format!("{}{path}", app.base))
        .header("cookie", &browser.cookie)
        .header("origin", &app.base)
        .header("x-csrf-token", &browser.csrf)
}

async fn a_magic_link_from_the_mailbox_logs_in_and_creates_the_account(app: TestApp) {
    let _shared = ALONE.read().await;
    let address = email();
    let before = mailbox(&app).len();
    let (status, _) = ask_link(&app, &address).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let message = wait_for_mail(&app, before + 1).await;
    let (headers, _) = parse_eml(&message);
    assert!(headers.contains(&format!("To: {address}")), "{headers}");
    // No account before the link is used.
    assert!(
        app.state
            .identity()
            .user_by_email(&address)
            .await
            .expect("lookup")
            .is_none()
    );
    let link = link_in(&message);
    assert!(link.starts_with(&app.base), "{link}");
    // Opening the page spends nothing (mail scanners open links): it can be opened twice.
    let page = client().get(&link).send().await.expect("page");
    assert_eq!(page.status(), StatusCode::OK);
    let answer = follow(&app, &link).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let cookie = cookie_of(&answer);
    let (status, body) = me(&app, &cookie).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["email"], json!(address));
    assert_eq!(body["sessions"].as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(body["agents"], json!([]));
    assert!(body["createdAt"].is_string());
    let read = client()
        .get(format!("{}/users/me", app.base))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("me");
    assert_eq!(
        cookie_of(&read),
        cookie,
        "the same session, its cookie re-sent to slide"
    );

    // The link works once.
    let again = follow(&app, &link).await;
    assert_eq!(again.status(), StatusCode::GONE);
    assert!(again.text().await.expect("page").contains("used already"));
    // A made-up token is not a link.
    let made_up = client()
        .post(format!("{}/auth/magic", app.base))
        .header("origin", &app.base)
        .header("content-type", "application/json")
        .body(json!({"token": "ab".repeat(32)}).to_string())
        .send()
        .await
        .expect("made up");
    assert_eq!(made_up.status(), StatusCode::BAD_REQUEST);
    let problem: Value = made_up.json().await.expect("problem");
    assert_eq!(problem["code"], json!("login_link_invalid"));
    // Another site cannot post a link for the browser (login CSRF).
    let (_, _) = ask_link(&app, &address).await;
    let link = link_in(&wait_for_mail(&app, before + 2).await);
    let token = link.split("token=").nth(1).expect("token");
    let foreign = client()
        .post(format!("{}/auth/magic", app.base))
        .header("origin", "https://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .expect("foreign");
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    // ... and the refusal did not spend it.
    assert_eq!(follow(&app, &link).await.status(), StatusCode::SEE_OTHER);
}

async fn next_travels_through_the_form_the_mail_and_the_link(app: TestApp) {
    let _shared = ALONE.read().await;
    let next = "/oauth/authorize?client_id=a&state=b";
    // The login form a page sends a browser to carries next.
    let form = client()
        .get(format!(
            "{}/login?next={}",
            app.base, "%2Foauth%2Fauthorize%3Fclient_id%3Da%26state%3Db"
        ))
        .send()
        .await
        .expect("login form");
    let html = form.text().await.expect("page");
    assert!(
        html.contains("name=\"next\" value=\"/oauth/authorize?client_id=a&amp;state=b\""),
        "{html}"
    );
    for (asked, expected) in [
        (next, next),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
    ] {
        let before = mailbox(&app).len();
        let posted = client()
            .post(format!("{}/auth/login", app.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "email={}&next={}",
                "rider%40example.org",
                url::form_urlencoded::byte_serialize(asked.as_bytes()).collect::<String>()
            ))
            .send()
            .await
            .expect("login");
        assert_eq!(posted.status(), StatusCode::ACCEPTED);
        let link = link_in(&wait_for_mail(&app, before + 1).await);
        let page = client()
            .get(&link)
            .send()
            .await
            .expect("page")
            .text()
            .await
            .expect("html");
        let token = link
            .split("token=")
            .nth(1)
            .expect("token")
            .split('&')
            .next()
            .expect("token");
        let carried = page
            .split("name=\"next\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(|v| v.replace("&amp;", "&"));
        let mut body = format!("token={token}");
        if let Some(carried) = &carried {
            body.push_str("&next=");
            body.extend(url::form_urlencoded::byte_serialize(carried.as_bytes()));
        }
        let answer = client()
            .post(format!("{}/auth/magic", app.base))
            .header("origin", &app.base)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("continue");
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        assert_eq!(answer.headers()["location"], expected, "next {asked:?}");
    }
}

async fn known_and_unknown_addresses_get_the_same_answer(app: TestApp) {
    let _shared = ALONE.read().await;
    let known = log_in(&app, &email()).await;
    let (status_known, body_known) = ask_link(&app, &known.email).await;
    let (status_unknown, body_unknown) = ask_link(&app, &email()).await;
    assert_eq!(status_known, StatusCode::ACCEPTED);
    assert_eq!((status_known, &body_known), (status_unknown, &body_unknown));
    // A malformed address is refused by name.
    let (status, body) = ask_link(&app, "not-an-address").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("\"field\":\"email\""), "{body}");
    // A look-alike of a known address, with a character that draws nothing, is no address:
    // the page would show it as the known one.
    let (local, domain) = known.email.split_once('@').expect("an address");
    for hidden in ['\u{200B}', '\u{FE0F}', '\u{2060}', '\u{E0041}'] {
        let look_alike = format!("{local}{hidden}@{domain}");
        let (status, body) = ask_link(&app, &look_alike).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.contains("invisible"), "{body}");
    }
}

async fn logout_kills_the_cookie_and_sessions_are_listed_and_revoked(app: TestApp) {
    let _shared = ALONE.read().await;
    let address = email();
    let first = log_in(&app, &address).await;
    let second = log_in(&app, &address).await;
    assert_ne!(first.cookie, second.cookie);
    let listed: Value = from_page(&app, &first, reqwest::Method::GET, "/users/me/sessions")
        .send()
        .await
        .expect("sessions")
        .json()
        .await
        .expect("json");
    let items = listed["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{listed}");
    let current = listed["current"].as_str().expect("current").to_owned();
    let other = items
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_owned())
        .find(|id| *id != current)
        .expect("the other session");
    // Revoking the other session: its cookie stops working, this one does not.
    let revoked = from_page(
        &app,
        &first,
        reqwest::Method::DELETE,
        &format!("/users/me/sessions/{other}"),
    )
    .send()
    .await
    .expect("revoke");
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    assert_eq!(me(&app, &second.cookie).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(me(&app, &first.cookie).await.0, StatusCode::OK);
    let again = from_page(
        &app,
        &first,
        reqwest::Method::DELETE,
        &format!("/users/me/sessions/{other}"),
    )
    .send()
    .await
    .expect("revoke again");
    assert_eq!(again.status(), StatusCode::NOT_FOUND);

    // Logout without the CSRF token is refused; with it, the cookie is dead.
    let forged = client()
        .post(format!("{}/auth/logout", app.base))
        .header("cookie", &first.cookie)
        .send()
        .await
        .expect("forged logout");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert_eq!(me(&app, &first.cookie).await.0, StatusCode::OK);
    let out = from_page(&app, &first, reqwest::Method::POST, "/auth/logout")
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    let cleared = out.headers()["set-cookie"].to_str().expect("text");
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    assert_eq!(me(&app, &first.cookie).await.0, StatusCode::UNAUTHORIZED);

    // The audit trail tells the person what happened, newest first.
    let third = log_in(&app, &address).await;
    let audit: Value = from_page(&app, &third, reqwest::Method::GET, "/users/me/audit")
        .send()
        .await
        .expect("audit")
        .json()
        .await
        .expect("json");
    let kinds: Vec<&str> = audit["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| e["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(
        kinds,
        ["login", "logout", "session_revoked", "login", "login"],
        "{audit}"
    );
    assert!(
        !audit.to_string().contains(&address),
        "the audit trail holds no address"
    );
}

async fn cookie_writes_need_our_origin_and_the_csrf_token(app: TestApp) {
    let _shared = ALONE.read().await;
    let browser = log_in(&app, &email()).await;
    let create = |headers: HeaderMap| {
        client()
            .post(format!("{}/trips", app.base))
            .header("cookie", &browser.cookie)
            .headers(headers)
            .json(&json!({"sourceUrl": UNFETCHED_GPX}))
            .send()
    };
    let headers = |pairs: &[(&'static str, &str)]| {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).expect("value"));
        }
        map
    };
    for refused in [
        headers(&[]),
        headers(&[("x-csrf-token", &browser.csrf)]),
        headers(&[("origin", &app.base)]),
        headers(&[
            ("origin", "https://evil.example"),
            ("x-csrf-token", &browser.csrf),
        ]),
        headers(&[("origin", &app.base), ("x-csrf-token", "wrong")]),
    ] {
        let answer = create(refused.clone()).await.expect("create");
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{refused:?}");
        let problem: Value = answer.json().await.expect("problem");
        assert_eq!(problem["code"], json!("csrf_refused"));
    }
    let made = create(headers(&[
        ("origin", &app.base),
        ("x-csrf-token", &browser.csrf),
    ]))
    .await
    .expect("create");
    assert_eq!(made.status(), StatusCode::ACCEPTED);
    let id = made.json::<Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    // Reads need no token: a cookie GET reads the trip.
    let read = client()
        .get(format!("{}/trips/{id}", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("read");
    assert_eq!(read.status(), StatusCode::OK);
    // A browser's EventSource sends the cookie: the live stream opens on it.
    let stream = client()
        .get(format!("{}/trips/{id}/events", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("events");
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .expect("text")
            .starts_with("text/event-stream")
    );
    drop(stream);
    let anonymous = client()
        .get(format!("{}/trips/{id}/events", app.base))
        .send()
        .await
        .expect("events");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    // A personal access token needs neither Origin nor CSRF token.
    let token = app.user().await;
    let by_token = app
        .create_trip(&token, &json!({"sourceUrl": UNFETCHED_GPX}))
        .await;
    assert_eq!(by_token.status, StatusCode::ACCEPTED);
    // The cookie is not a credential for /mcp, even from our own page.
    let mcp = client()
        .post(format!("{}/mcp", app.base))
        .header("cookie", &browser.cookie)
        .header("origin", &app.base)
        .header("x-csrf-token", &browser.csrf)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
    let with_token = client()
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(with_token.status(), StatusCode::OK);
}

async fn tokens_are_made_shown_once_listed_and_revoked_by_a_session(app: TestApp) {
    let _shared = ALONE.read().await;
    let browser = log_in(&app, &email()).await;
    let made = from_page(&app, &browser, reqwest::Method::POST, "/users/me/tokens")
        .json(&json!({"label": "script", "scopes": ["trips:read"]}))
        .send()
        .await
        .expect("create token");
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: Value = made.json().await.expect("json");
    let token = made["token"].as_str().expect("token").to_owned();
    assert_eq!(made["scopes"], json!(["trips:read"]));
    // It works, with its scope only.
    let list = client()
        .get(format!("{}/trips", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("list");
    assert_eq!(list.status(), StatusCode::OK);
    let write = app
        .create_trip(&token, &json!({"sourceUrl": UNFETCHED_GPX}))
        .await;
    assert_eq!(write.status, StatusCode::FORBIDDEN);
    // A token cannot mint tokens (a reader would mint a writer).
    let minted = client()
        .post(format!("{}/users/me/tokens", app.base))
        .bearer_auth(&token)
        .json(&json!({"label": "more", "scopes": ["trips:write"]}))
        .send()
        .await
        .expect("mint");
    assert_eq!(minted.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        minted.json::<Value>().await.expect("problem")["code"],
        json!("session_required")
    );
    // Listed without its value; revoked, it stops working.
    let (_, body) = me(&app, &browser.cookie).await;
    let listed = &body["tokens"][0];
    assert_eq!(listed["label"], json!("script"));
    assert!(!body.to_string().contains(&token));
    let id = made["id"].as_str().expect("id");
    let revoked = from_page(
        &app,
        &browser,
        reqwest::Method::DELETE,
        &format!("/users/me/tokens/{id}"),
    )
    .send()
    .await
    .expect("revoke");
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    let after = client()
        .get(format!("{}/trips", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("list");
    assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
    // Bad input is named.
    let bad = from_page(&app, &browser, reqwest::Method::POST, "/users/me/tokens")
        .json(&json!({"label": "x", "scopes": ["trips:admin"]}))
        .send()
        .await
        .expect("bad scopes");
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.text()
            .await
            .expect("body")
            .contains("\"field\":\"scopes\"")
    );
}

/// A token of the logged-in person, made through the account route.
async fn token_of(app: &TestApp, browser: &Browser) -> String {
    let made: Value = from_page(app, browser, reqwest::Method::POST, "/users/me/tokens")
        .json(&json!({"label": "test"}))
        .send()
        .await
        .expect("create token")
        .json()
        .await
        .expect("json");
    made["token"].as_str().expect("token").to_owned()
}

async fn the_export_holds_every_event_of_every_trip(app: TestApp) {
    let _shared = ALONE.read().await;
    let browser = log_in(&app, &email()).await;
    let token = token_of(&app, &browser).await;
    let mut ids = Vec::new();
    for title in ["Loire", "Rhine"] {
        let made = app
            .create_trip(&token, &json!({"sourceUrl": UNFETCHED_GPX, "title": title}))
            .await;
        assert_eq!(made.status, StatusCode::ACCEPTED, "{}", made.body);
        ids.push(made.body["id"].as_str().expect("id").to_owned());
    }
    // An edit, so that a trip has more than its creation.
    let detail = app.detail(&token, &ids[0]).await;
    let version = detail.body["version"].as_u64().expect("version");
    let patched = app
        .patch(
            &token,
            &ids[0],
            Some(&format!("\"{version}\"")),
            &json!({"title": "Loire, renamed"}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    // Someone else's trip is not in it.
    let stranger = app.user().await;
    let foreign = app
        .create_trip(&stranger, &json!({"sourceUrl": UNFETCHED_GPX}))
        .await;
    let foreign_id = foreign.body["id"].as_str().expect("id").to_owned();

    // Workers may still append (the route fetch fails): the export must hold at least the
    // history read before it, and at most the one read after it.
    let before = histories(&app, &token, &ids).await;
    let response = client()
        .get(format!("{}/users/me/export", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("export");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-disposition"]
            .to_str()
            .expect("text")
            .starts_with("attachment"),
    );
    let export: Value = response.json().await.expect("json");
    let after = histories(&app, &token, &ids).await;
    assert_eq!(export["account"]["email"], json!(browser.email));
    let trips = export["trips"].as_array().expect("trips");
    let mut exported: Vec<&str> = trips
        .iter()
        .map(|t| t["tripId"].as_str().expect("id"))
        .collect();
    exported.sort_unstable();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(exported, expected);
    assert!(!export.to_string().contains(&foreign_id));
    for trip in trips {
        let id = trip["tripId"].as_str().expect("id");
        let at = ids.iter().position(|i| i == id).expect("one of ours");
        let from_export: Vec<(u64, String)> = trip["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| {
                (
                    e["streamVersion"].as_u64().expect("version"),
                    e["eventType"].as_str().expect("type").to_owned(),
                )
            })
            .collect();
        assert!(from_export.len() >= 2, "created, and more: {from_export:?}");
        assert!(
            from_export.starts_with(&before[at]),
            "trip {id}: {from_export:?} vs {:?}",
            before[at]
        );
        assert!(
            after[at].starts_with(&from_export),
            "trip {id}: {from_export:?} vs {:?}",
            after[at]
        );
        assert!(trip["events"][0]["data"].is_object());
    }
    // The history itself holds the edit.
    assert!(
        before[0].iter().any(|(_, t)| t == "TripSettingsUpdated"),
        "{:?}",
        before[0]
    );
}

/// Each trip's history as `(streamVersion, type)`, from `GET /trips/{id}/history`.
async fn histories(app: &TestApp, token: &str, ids: &[String]) -> Vec<Vec<(u64, String)>> {
    let mut all = Vec::new();
    for id in ids {
        let history = app
            .call(
                reqwest::Method::GET,
                "/trips/{id}/history",
                &format!("/trips/{id}/history"),
                Some(token),
                &[],
                None,
            )
            .await;
        assert_eq!(history.status, StatusCode::OK);
        let entries = history.body["items"]
            .as_array()
            .or_else(|| history.body.as_array())
            .expect("history entries");
        all.push(
            entries
                .iter()
                .map(|e| {
                    (
                        e["streamVersion"].as_u64().expect("version"),
                        e["type"].as_str().expect("type").to_owned(),
                    )
                })
                .collect(),
        );
    }
    all
}

async fn deletion_leaves_nothing_readable_with_any_former_credential(app: TestApp) {
    let _shared = ALONE.read().await;
    let browser = log_in(&app, &email()).await;
    let token = token_of(&app, &browser).await;
    let made = app
        .create_trip(
            &token,
            &json!({"sourceUrl": UNFETCHED_GPX, "title": "Gone"}),
        )
        .await;
    let id = made.body["id"].as_str().expect("id").to_owned();
    let shared = client()
        .post(format!("{}/trips/{id}/share", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("share");
    assert!(shared.status().is_success());
    let code = shared.json::<Value>().await.expect("json")["shortCode"]
        .as_str()
        .expect("code")
        .to_owned();
    let public = client()
        .get(format!("{}/s/{code}", app.base))
        .send()
        .await
        .expect("public");
    assert_eq!(public.status(), StatusCode::OK);
    let user = app
        .state
        .identity()
        .user_by_email(&browser.email)
        .await
        .expect("lookup")
        .expect("the user");

    // A login link still live when the account goes: it must not outlive the account (its
    // row holds the address, and following it would open the account again).
    let before = mailbox(&app).len();
    assert_eq!(ask_link(&app, &browser.email).await.0, StatusCode::ACCEPTED);
    let live_link = link_in(&wait_for_mail(&app, before + 1).await);
    let live_token = live_link
        .split("token=")
        .nth(1)
        .and_then(|t| t.split('&').next())
        .expect("token")
        .to_owned();
    assert!(matches!(
        app.state.identity().peek_magic_link(&live_token).await,
        Ok(etappe_app::identity::magic_links::Redeemed::Email(_))
    ));

    // A deletion needs the address as confirmation, and a session (not a token).
    let unconfirmed = from_page(&app, &browser, reqwest::Method::DELETE, "/users/me")
        .json(&json!({"confirm": "someone@else.example"}))
        .send()
        .await
        .expect("delete");
    assert_eq!(unconfirmed.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let by_token = client()
        .delete(format!("{}/users/me", app.base))
        .bearer_auth(&token)
        .json(&json!({"confirm": browser.email}))
        .send()
        .await
        .expect("delete by token");
    assert_eq!(by_token.status(), StatusCode::FORBIDDEN);
    let deleted = from_page(&app, &browser, reqwest::Method::DELETE, "/users/me")
        .json(&json!({"confirm": browser.email.to_uppercase()}))
        .send()
        .await
        .expect("delete");
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(
        deleted.json::<Value>().await.expect("json")["tripsDeleted"],
        json!(1)
    );

    assert_eq!(me(&app, &browser.cookie).await.0, StatusCode::UNAUTHORIZED);
    let with_token = client()
        .get(format!("{}/trips/{id}", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("read");
    assert_eq!(with_token.status(), StatusCode::UNAUTHORIZED);
    let public = client()
        .get(format!("{}/s/{code}", app.base))
        .send()
        .await
        .expect("public");
    assert_eq!(public.status(), StatusCode::NOT_FOUND);
    // The trip is gone from the log, not only from the read model.
    let trip: etappe_domain::ids::TripId = id.parse().expect("trip id");
    let events = app
        .state
        .work()
        .store
        .read_stream(&trip.stream_id())
        .await
        .expect("read stream");
    assert!(events.is_empty(), "{events:?}");
    assert!(
        app.state
            .work()
            .store
            .owned_trips(user)
            .await
            .expect("owned")
            .is_empty()
    );
    assert!(
        app.state
            .identity()
            .user(user)
            .await
            .expect("user")
            .is_none()
    );
    // The login links issued to the address went with it, not at the next sweep.
    assert_eq!(
        app.state
            .identity()
            .peek_magic_link(&live_token)
            .await
            .expect("peek"),
        etappe_app::identity::magic_links::Redeemed::Unknown
    );
    // What is left is a tombstone without personal data.
    let (audit, _) = app
        .state
        .identity()
        .audit_of(user, 10, 0)
        .await
        .expect("audit");
    assert_eq!(audit[0].kind, "account_deleted");
    assert!(audit.iter().all(|e| !e.detail.contains(&browser.email)));
}

async fn expired_links_are_refused(app: TestApp) {
    let _shared = ALONE.read().await;
    let (status, _) = ask_link(&app, &email()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let link = link_in(&wait_for_mail(&app, 1).await);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let answer = follow(&app, &link).await;
    assert_eq!(answer.status(), StatusCode::GONE);
    assert!(answer.text().await.expect("page").contains("expired"));
}

async fn spawn_with_short_links(backend: Backend) -> Option<TestApp> {
    TestApp::spawn_with(backend, |config| config.people.login_link_ttl_secs = 1).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_expired_links_are_refused() {
    expired_links_are_refused(
        spawn_with_short_links(Backend::Sqlite)
            .await
            .expect("sqlite"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_expired_links_are_refused() {
    let Some(app) = spawn_with_short_links(Backend::Postgres).await else {
        return;
    };
    expired_links_are_refused(app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_requests_are_limited_per_address_and_per_email() {
    let _shared = ALONE.read().await;
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let address = email();
    // Per e-mail address: 3 in 15 minutes; the 4th is answered alike and sends nothing.
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(ask_link(&app, &address).await);
    }
    assert!(answers.iter().all(|a| a == &answers[0]), "{answers:?}");
    assert_eq!(answers[0].0, StatusCode::ACCEPTED);
    wait_for_mail(&app, 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(mailbox(&app).len(), 3, "the fourth request sent nothing");
    // Per client address: 10 in 15 minutes (four spent above); the 11th is a 429.
    for _ in 0..6 {
        assert_eq!(ask_link(&app, &email()).await.0, StatusCode::ACCEPTED);
    }
    let response = client()
        .post(format!("{}/auth/login", app.base))
        .json(&json!({"email": email()}))
        .send()
        .await
        .expect("login request");
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    assert!((1..=900).contains(&retry), "{retry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_start_prints_a_login_link_for_the_local_user() {
    let _shared = ALONE.read().await;
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let link = app
        .login_url
        .clone()
        .expect("a login link at an embedded start");
    assert!(
        link.starts_with(&format!("{}/auth/magic?token=", app.base)),
        "{link}"
    );
    let answer = follow(&app, &link).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let (status, body) = me(&app, &cookie_of(&answer)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["email"], json!("local@localhost"));
    // The first-start token is one of the account's tokens.
    assert_eq!(body["tokens"].as_array().map(Vec::len), Some(1), "{body}");
}

/// A minimal SMTP server: greets, accepts EHLO/HELO, MAIL, RCPT, DATA and QUIT, and hands
/// over each message's data.
async fn smtp_server() -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let sender = sender.clone();
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut lines = BufReader::new(read);
                let _ = write.write_all(b"220 test SMTP\r\n").await;
                let mut recipient = String::new();
                let mut line = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let command = line.trim_end().to_ascii_uppercase();
                    let reply: &[u8] = if command.starts_with("EHLO") || command.starts_with("HELO")
                    {
                        b"250 test\r\n"
                    } else if command.starts_with("MAIL FROM") {
                        b"250 OK\r\n"
                    } else if command.starts_with("RCPT TO") {
                        recipient = line.trim_end()[8..].trim().to_owned();
                        b"250 OK\r\n"
                    } else if command == "DATA" {
                        let _ = write.write_all(b"354 go on\r\n").await;
                        let mut data = String::new();
                        loop {
                            line.clear();
                            if lines.read_line(&mut line).await.unwrap_or(0) == 0 {
                                return;
                            }
                            if line == ".\r\n" || line == ".\n" {
                                break;
                            }
                            // Dot-stuffing (RFC 5321 §4.5.2).
                            data.push_str(line.strip_prefix('.').unwrap_or(&line));
                        }
                        let _ = sender.send((recipient.clone(), data));
                        b"250 queued\r\n"
                    } else if command == "QUIT" {
                        let _ = write.write_all(b"221 bye\r\n").await;
                        return;
                    } else if command == "RSET" || command == "NOOP" {
                        b"250 OK\r\n"
                    } else {
                        b"502 not implemented\r\n"
                    };
                    if write.write_all(reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("smtp://{addr}"), receiver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_smtp_server_the_link_goes_out_by_smtp() {
    let _shared = ALONE.read().await;
    let (url, mut received) = smtp_server().await;
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.people.smtp_url = Some(url.clone());
        config.people.mail_from = "Etappe <etappe@example.org>".into();
    })
    .await
    .expect("sqlite");
    let address = email();
    assert_eq!(ask_link(&app, &address).await.0, StatusCode::ACCEPTED);
    let (recipient, data) = tokio::time::timeout(Duration::from_secs(20), received.recv())
        .await
        .expect("a message within 20 s")
        .expect("a message");
    assert_eq!(recipient, format!("<{address}>"));
    assert!(
        mailbox(&app).is_empty(),
        "SMTP configured: nothing in the file mailbox"
    );
    let link = link_in(&data);
    let answer = follow(&app, &link).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let (status, body) = me(&app, &cookie_of(&answer)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["email"], json!(address));
}

etappe_tests::on_both_backends!(
    the_link_page_names_the_account_and_the_one_it_leaves,
    the_mailbox_is_the_owners_alone_and_goes_with_the_account,
    a_magic_link_from_the_mailbox_logs_in_and_creates_the_account,
    known_and_unknown_addresses_get_the_same_answer,
    logout_kills_the_cookie_and_sessions_are_listed_and_revoked,
    cookie_writes_need_our_origin_and_the_csrf_token,
    tokens_are_made_shown_once_listed_and_revoked_by_a_session,
    the_export_holds_every_event_of_every_trip,
    deletion_leaves_nothing_readable_with_any_former_credential,
    next_travels_through_the_form_the_mail_and_the_link,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_routes_are_in_the_published_document() {
    let _shared = ALONE.read().await;
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let doc: Value = client()
        .get(format!("{}/openapi.json", app.base))
        .send()
        .await
        .expect("document")
        .json()
        .await
        .expect("json");
    for (path, method) in [
        ("/users/me", "get"),
        ("/users/me", "delete"),
        ("/users/me/sessions", "get"),
        ("/users/me/sessions/{id}", "delete"),
        ("/users/me/tokens", "post"),
        ("/users/me/tokens/{id}", "delete"),
        ("/users/me/export", "get"),
        ("/users/me/audit", "get"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path}");
    }
    let codes = doc
        .pointer("/components/schemas/Problem/properties/code/enum")
        .expect("codes")
        .to_string();
    assert!(codes.contains("csrf_refused") && codes.contains("session_required"));
    // A token reads its account through the documented answer.
    let token = app.user().await;
    let me = app
        .call(
            reqwest::Method::GET,
            "/users/me",
            "/users/me",
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(me.status, StatusCode::OK);
    assert!(
        me.body.get("csrfToken").is_none(),
        "no CSRF token without a session"
    );
    let audit = app
        .call(
            reqwest::Method::GET,
            "/users/me/audit",
            "/users/me/audit?limit=5",
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(audit.status, StatusCode::OK);
    let sessions = app
        .call(
            reqwest::Method::GET,
            "/users/me/sessions",
            "/users/me/sessions",
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(sessions.body["current"], Value::Null);
    let minted = app
        .call(
            reqwest::Method::POST,
            "/users/me/tokens",
            "/users/me/tokens",
            Some(&token),
            &[],
            Some(&json!({"label": "x"})),
        )
        .await;
    assert_eq!(minted.status, StatusCode::FORBIDDEN);
}

/// Two API replicas on one PostgreSQL and one Redis: a link mailed by one is spent on the
/// other, the session it opens holds on both, a revocation on one holds on the other at once,
/// and the login budgets are one budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_links_sessions_and_login_budgets() {
    let Some(servers) = etappe_tests::Servers::from_env() else {
        return;
    };
    let _alone = ALONE.write().await;
    // Its login budgets are bounded by Redis's answers in 500 ms: no other server test runs
    // meanwhile, as none of this file does.
    let _servers = etappe_tests::servers_alone().await;
    let spawn = || TestApp::spawn_with(Backend::Postgres, |c| servers.configure(c));
    let a = spawn().await.expect("replica a");
    let b = spawn().await.expect("replica b");
    let address = email();
    assert_eq!(ask_link(&a, &address).await.0, StatusCode::ACCEPTED);
    let link = link_in(&wait_for_mail(&a, 1).await).replace(&a.base, &b.base);
    let answer = follow(&b, &link).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let cookie = cookie_of(&answer);
    let (status, body) = me(&a, &cookie).await;
    assert_eq!(status, StatusCode::OK, "the session opened on b holds on a");
    let browser = Browser {
        cookie: cookie.clone(),
        csrf: body["csrfToken"].as_str().expect("csrf").to_owned(),
        email: address.clone(),
    };
    // Spent on b, refused on a.
    let again = follow(&a, &link.replace(&b.base, &a.base)).await;
    assert_eq!(again.status(), StatusCode::GONE);
    // Logged out on a: refused on b at once.
    let out = from_page(&a, &browser, reqwest::Method::POST, "/auth/logout")
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    assert_eq!(me(&b, &cookie).await.0, StatusCode::UNAUTHORIZED);
    // The per-address budget is counted across replicas: one more on a and one on b make
    // three; the fourth, on either, sends nothing.
    assert_eq!(ask_link(&a, &address).await.0, StatusCode::ACCEPTED);
    assert_eq!(ask_link(&b, &address).await.0, StatusCode::ACCEPTED);
    assert_eq!(ask_link(&b, &address).await.0, StatusCode::ACCEPTED);
    wait_for_mail(&a, 2).await;
    wait_for_mail(&b, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        mailbox(&a).len() + mailbox(&b).len(),
        3,
        "three links in 15 minutes, whichever replica is asked"
    );
}

/// A login link handed over by someone else opens *their* account: the page says whose,
/// and, to a browser signed in to another account, that continuing leaves it. The page
/// spends nothing.
async fn the_link_page_names_the_account_and_the_one_it_leaves(app: TestApp) {
    let _shared = ALONE.read().await;
    let victim = log_in(&app, &email()).await;
    let attacker = email();
    let before = mailbox(&app).len();
    assert_eq!(ask_link(&app, &attacker).await.0, StatusCode::ACCEPTED);
    let link = link_in(&wait_for_mail(&app, before + 1).await);
    let page = |cookie: Option<String>| {
        let link = link.clone();
        async move {
            let mut request = client().get(&link);
            if let Some(cookie) = cookie {
                request = request.header("cookie", cookie);
            }
            let answer = request.send().await.expect("page");
            assert_eq!(answer.status(), StatusCode::OK);
            answer.text().await.expect("html")
        }
    };
    let fresh = page(None).await;
    assert!(
        fresh.contains(&format!("logs you in as <strong>{attacker}</strong>")),
        "{fresh}"
    );
    assert!(
        fresh.contains(&format!(">Continue as {attacker}</button>")),
        "{fresh}"
    );
    let signed_in = page(Some(victim.cookie.clone())).await;
    assert!(
        signed_in.contains(&format!(
            "You are signed in as <strong>{}</strong>; continuing logs you out and into <strong>{attacker}</strong>",
            victim.email
        )),
        "{signed_in}"
    );
    assert!(
        signed_in.contains(&format!(
            ">Log out of {} and continue as {attacker}</button>",
            victim.email
        )),
        "{signed_in}"
    );
    // Neither page spent the link, and the victim's session holds until they continue.
    assert_eq!(me(&app, &victim.cookie).await.0, StatusCode::OK);
    let answer = follow(&app, &link).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let (_, body) = me(&app, &cookie_of(&answer)).await;
    assert_eq!(body["email"], json!(attacker));
    // Spent now: the page says so at once.
    let spent = client().get(&link).send().await.expect("page");
    assert_eq!(spent.status(), StatusCode::GONE);
}

/// Each message of the file mailbox holds a live login link: the directory is 0700 (even
/// one that was wider before) and each file 0600; deleting an account deletes the mail
/// addressed to it, and only that.
async fn the_mailbox_is_the_owners_alone_and_goes_with_the_account(app: TestApp) {
    let _shared = ALONE.read().await;
    let dir = app.data_dir().join("mailbox");
    let other = log_in(&app, &email()).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| {
            std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
        };
        assert_eq!(mode(&dir), 0o700);
        // Widened by someone (or made so by an older version): the next mail narrows it.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let before = mailbox(&app).len();
        assert_eq!(ask_link(&app, &email()).await.0, StatusCode::ACCEPTED);
        wait_for_mail(&app, before + 1).await;
        assert_eq!(mode(&dir), 0o700);
        for entry in std::fs::read_dir(&dir).expect("dir") {
            let path = entry.expect("entry").path();
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
    }
    let leaving = log_in(&app, &email()).await;
    let before = mailbox(&app).len();
    assert_eq!(ask_link(&app, &leaving.email).await.0, StatusCode::ACCEPTED);
    wait_for_mail(&app, before + 1).await;
    let addressed = |address: &str| {
        mailbox(&app)
            .iter()
            .filter(|m| parse_eml(m).0.contains(&format!("To: {address}")))
            .count()
    };
    assert_eq!(addressed(&leaving.email), 2);
    let deleted = from_page(&app, &leaving, reqwest::Method::DELETE, "/users/me")
        .json(&json!({"confirm": leaving.email}))
        .send()
        .await
        .expect("delete");
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(
        addressed(&leaving.email),
        0,
        "the deleted account's mail is gone"
    );
    assert_eq!(addressed(&other.email), 1, "another person's mail stays");
}
