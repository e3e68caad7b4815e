//! A person in a browser, for the OAuth tests: logs in by the magic link read from the file
//! mailbox (as a person would: the link's page, then its button), and keeps the session
//! cookie and its CSRF token.

use std::time::Duration;

use serde_json::{Value, json};

use crate::TestApp;

/// A logged-in browser.
#[derive(Debug, Clone)]
pub struct Browser {
    /// `name=value` of the session cookie.
    pub cookie: String,
    /// The session's synchronizer token (`GET /users/me`).
    pub csrf: String,
}

/// A client that shows redirects instead of following them.
pub fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The newest message of the mailbox once it holds more than `before`.
async fn mail_after(app: &TestApp, before: usize) -> String {
    for _ in 0..200 {
        let mut paths: Vec<_> = std::fs::read_dir(app.data_dir().join("mailbox"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        paths.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "eml"));
        if paths.len() > before {
            paths.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
            return std::fs::read_to_string(paths.last().expect("a message")).expect("mail");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no login mail arrived");
}

/// How many messages the mailbox holds.
pub fn mail_count(app: &TestApp) -> usize {
    std::fs::read_dir(app.data_dir().join("mailbox"))
        .map(|d| d.filter_map(Result::ok).count())
        .unwrap_or(0)
}

/// The login token in a message (quoted-printable soft breaks undone).
pub fn login_token(message: &str) -> String {
    let body = message
        .replace("=\r\n", "")
        .replace("=\n", "")
        .replace("=3D", "=");
    let start = body.find("/auth/magic?token=").expect("a login link") + "/auth/magic?token=".len();
    body[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

/// Logs `email` in through the mailbox.
pub async fn log_in(app: &TestApp, email: &str) -> Browser {
    let before = mail_count(app);
    let asked = no_redirects()
        .post(format!("{}/auth/login", app.base))
        .json(&json!({"email": email}))
        .send()
        .await
        .expect("login");
    assert_eq!(asked.status(), 202);
    let token = login_token(&mail_after(app, before).await);
    let answer = no_redirects()
        .post(format!("{}/auth/magic", app.base))
        .header("origin", &app.base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .expect("magic");
    assert_eq!(answer.status(), 303);
    let cookie = answer.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    let me: Value = no_redirects()
        .get(format!("{}/users/me", app.base))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    Browser {
        cookie,
        csrf: me["csrfToken"].as_str().expect("csrfToken").to_owned(),
    }
}
