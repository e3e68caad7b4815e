//! Helpers for Etappe's end-to-end tests: start the real application on port 0 against a
//! chosen backend, mint users and tokens, call it over HTTP, and check every answer against
//! the published OpenAPI document (its status must be documented for the route, and its body
//! must match the documented schema).

pub mod fixtures;
pub mod openapi;

use std::path::PathBuf;

use etappe_services::config::Config;
use etappe_services::http::AppState;
use etappe_services::identity::Scope;
use etappe_services::startup::Application;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::oneshot;

/// Which database a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The PostgreSQL URL for tests, or `None` with the reason printed. With
/// `ETAPPE_REQUIRE_SERVICES=1` a missing URL is a failure, not a skip.
pub fn postgres_url() -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => Some(url),
        _ => {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but DATABASE_URL does not name a PostgreSQL database"
            );
            eprintln!("skipped: set DATABASE_URL=postgres://… to run this test on PostgreSQL");
            None
        }
    }
}

/// A directory removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory under the system's temporary directory.
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!("etappe-e2e-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Default for TempDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running Etappe and a client for it.
#[derive(Debug)]
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub state: AppState,
    pub local_token: Option<String>,
    pub backend: Backend,
    _dir: TempDir,
    _stop: oneshot::Sender<()>,
}

/// An answer, already checked against the OpenAPI document.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl TestApp {
    /// Starts Etappe on `backend` (None: PostgreSQL is not configured, skip the test).
    pub async fn spawn(backend: Backend) -> Option<TestApp> {
        etappe_services::telemetry::install_tls_provider();
        let dir = TempDir::new();
        let mut config = Config::embedded(dir.path().to_path_buf());
        config.allowed_source_hosts = vec!["127.0.0.1".into()];
        if backend == Backend::Postgres {
            config.database_url = Some(postgres_url()?);
            config.db_max_connections = 8;
        }
        let app = Application::build(&config).await.expect("start Etappe");
        let addr = app.local_addr().expect("bound address");
        let state = app.state().clone();
        let local_token = app.local_token().map(str::to_owned);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(app.run_until_stopped(async move {
            let _ = stopped.await;
        }));
        Some(TestApp {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            state,
            local_token,
            backend,
            _dir: dir,
            _stop: stop,
        })
    }

    /// A new user holding a token with `scopes`; answers the token.
    pub async fn user_with(&self, scopes: &[Scope]) -> String {
        let email = format!("rider-{}@example.org", uuid::Uuid::now_v7());
        let user = self.state.identity.ensure_user(&email).await.expect("user");
        self.state
            .identity
            .create_token(user, scopes, "test")
            .await
            .expect("token")
    }

    /// A new user with both scopes.
    pub async fn user(&self) -> String {
        self.user_with(&Scope::ALL).await
    }

    /// Calls `method path` and checks the answer against the OpenAPI operation `template`.
    pub async fn call(
        &self,
        method: Method,
        template: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Answer {
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).expect("JSON body")
        };
        openapi::check_answer(method.as_str(), template, status.as_u16(), &headers, &body);
        Answer {
            status,
            headers,
            body,
        }
    }

    /// `POST /trips` with `body`.
    pub async fn create_trip(&self, token: &str, body: &Value) -> Answer {
        self.call(
            Method::POST,
            "/trips",
            "/trips",
            Some(token),
            &[],
            Some(body),
        )
        .await
    }

    /// `GET /trips/{id}/detail`.
    pub async fn detail(&self, token: &str, id: &str) -> Answer {
        self.call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail"),
            Some(token),
            &[],
            None,
        )
        .await
    }

    /// `PATCH /trips/{id}` with `If-Match` (when given) and `body`.
    pub async fn patch(
        &self,
        token: &str,
        id: &str,
        if_match: Option<&str>,
        body: &Value,
    ) -> Answer {
        let headers: Vec<(&str, &str)> = if_match.map(|v| ("if-match", v)).into_iter().collect();
        self.call(
            Method::PATCH,
            "/trips/{id}",
            &format!("/trips/{id}"),
            Some(token),
            &headers,
            Some(body),
        )
        .await
    }
}
