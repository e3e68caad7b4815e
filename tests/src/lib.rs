//! Helpers for Etappe's end-to-end tests: start the real application on port 0 against a
//! chosen backend, mint users and tokens, call it over HTTP, and check every answer against
//! the published OpenAPI document (its status must be documented for the route, and its body
//! must match the documented schema).
//!
//! Nothing under test reaches outside the machine: the application's fetcher resolves names
//! with a resolver that answers loopback names only and records every other name (or
//! non-loopback address) something tried; a test whose code tried one fails when its
//! `TestApp` is dropped. Komoot, Strava and RideWithGPS pages are answered by a local server
//! (`config.work.fetch_hooks.source_origins`), never by the services themselves.

pub mod browser;
pub mod fixtures;
pub mod node;
pub mod openapi;
pub mod python;
pub mod route_services;
pub mod shared_servers;
pub mod snapshot;
pub mod standins;
pub mod tls_documents;
pub mod valhalla;

pub use shared_servers::{servers_alone, servers_shared};

use std::path::PathBuf;

use etappe_app::App;
use etappe_app::identity::Scope;
use etappe_infra::fetch::{LoopbackOnlyResolver, SourceOrigins};
use etappe_services::config::Config;
use etappe_services::startup::Application;

/// A loopback origin where nothing listens (the discard port): fetching from it fails at
/// once, as an unreachable source does, without leaving the machine.
pub const UNREACHABLE_ORIGIN: &str = "http://127.0.0.1:9";

/// A source link for tests that do not care about the fetch: a GPX file at
/// [`UNREACHABLE_ORIGIN`] (allowed over http in tests; the fetch fails as unreachable).
pub const UNFETCHED_GPX: &str = "http://127.0.0.1:9/a.gpx";
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

/// A new, empty PostgreSQL database on the server `url` names, for one test alone: no other
/// test's trips reach its dispatcher and workers, and none of its own reach theirs. Created
/// from a thread of its own, so it can be called from any context. Named `etappe_t_…` so that
/// CI drops them all at the end.
pub fn own_database(url: &str) -> String {
    let admin = url.to_owned();
    let name = format!("etappe_t_{}", uuid::Uuid::now_v7().simple());
    let created = name.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            use sqlx::Connection;
            let mut connection = sqlx::postgres::PgConnection::connect(&admin)
                .await
                .expect("connect to PostgreSQL");
            // The name is ours (a prefix and a UUID's hex digits): nothing of a caller's in it.
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {created}")))
                .execute(&mut connection)
                .await
                .expect("create a test database");
        });
    })
    .join()
    .expect("the database thread");
    let mut own = url::Url::parse(url).expect("DATABASE_URL");
    own.set_path(&format!("/{name}"));
    own.to_string()
}

/// A directory removed when dropped.
pub use tempfile::TempDir;

/// A new empty directory under the system's temporary directory, named so a leftover one
/// (after a killed run) is recognisable.
pub fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("etappe-e2e-")
        .tempdir()
        .expect("create temp dir")
}

/// A running Etappe and a client for it.
#[derive(Debug)]
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub state: App,
    pub local_token: Option<String>,
    /// The login link printed at an embedded start, for the local user.
    pub login_url: Option<String>,
    pub backend: Backend,
    /// The embedded data directory (SQLite file, first-start token).
    pub data_dir: std::path::PathBuf,
    /// Its own PostgreSQL database, on [`Backend::Postgres`].
    pub database_url: Option<String>,
    /// Every outside name the application tried to resolve (none, or the test fails).
    pub resolver: LoopbackOnlyResolver,
    outside_allowed: std::sync::atomic::AtomicBool,
    _dir: TempDir,
    _stop: oneshot::Sender<()>,
}

impl TestApp {
    /// Fails the test if anything under it tried to reach outside the machine.
    pub fn assert_stayed_inside(&self) {
        let outside = self.resolver.outside_attempts();
        assert!(
            outside.is_empty(),
            "the code under test tried to reach outside the machine: {outside:?}"
        );
    }
}

impl TestApp {
    /// Waives the end-of-test check, for a test that provokes an outside attempt on purpose
    /// (and has asserted it).
    pub fn allow_outside_attempts(&self) {
        self.outside_allowed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // A test already failing keeps its own message (a second panic would abort).
        let waived = self
            .outside_allowed
            .load(std::sync::atomic::Ordering::Relaxed);
        if !std::thread::panicking() && !waived {
            self.assert_stayed_inside();
        }
    }
}

/// An answer, already checked against the OpenAPI document.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    /// The body's bytes (files).
    pub raw: Vec<u8>,
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
        Self::spawn_with(backend, |_| {}).await
    }

    /// Starts Etappe on `backend` with a configuration adjusted by `tweak`.
    pub async fn spawn_with(backend: Backend, tweak: impl FnOnce(&mut Config)) -> Option<TestApp> {
        etappe_services::telemetry::install_tls_provider();
        let dir = temp_dir();
        // A directory the application creates itself, as on a first start.
        let mut config = Config::embedded(dir.path().join("data"));
        config.work.allowed_source_hosts = vec!["127.0.0.1".into()];
        let resolver = LoopbackOnlyResolver::new();
        config.work.fetch_hooks.resolver = Some(std::sync::Arc::new(resolver.clone()));
        // Komoot, Strava and RideWithGPS links fail as unreachable unless a test points
        // them at `route_services`.
        config.work.fetch_hooks.source_origins = SourceOrigins::all_at(UNREACHABLE_ORIGIN);
        if backend == Backend::Postgres {
            config.work.database_url = Some(own_database(&postgres_url()?));
            config.db_max_connections = 8;
        }
        tweak(&mut config);
        let app = Application::build(&config).await.expect("start Etappe");
        let addr = app.local_addr().expect("bound address");
        let state = app.app().clone();
        let local_token = app.local_token().map(str::to_owned);
        let login_url = app.login_url().map(str::to_owned);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(app.run_until_stopped(async move {
            let _ = stopped.await;
        }));
        Some(TestApp {
            data_dir: config.work.data_dir.clone(),
            database_url: config.work.database_url.clone(),
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            state,
            local_token,
            login_url,
            backend,
            resolver,
            outside_allowed: std::sync::atomic::AtomicBool::new(false),
            _dir: dir,
            _stop: stop,
        })
    }

    /// The embedded data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// Runs the `etappe` binary against this application's database (its SQLite file or
    /// its PostgreSQL database), as an operator would: `etappe osm import …`.
    pub fn operator_command(&self, args: &[&str]) -> std::process::Output {
        let mut command = std::process::Command::new(api_binary());
        command
            .args(args)
            .env_clear()
            .env("ETAPPE_DATA_DIR", &self.data_dir)
            .env("ETAPPE_LOG", "warn")
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        if let Some(url) = &self.database_url {
            command.env("DATABASE_URL", url);
        }
        command.output().expect("run etappe")
    }

    /// A new user holding a token with `scopes`; answers the token.
    pub async fn user_with(&self, scopes: &[Scope]) -> String {
        let email = format!("rider-{}@example.org", uuid::Uuid::now_v7());
        let user = self
            .state
            .identity()
            .ensure_user(&email)
            .await
            .expect("user");
        self.state
            .identity()
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
        let is_json = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.contains("json"));
        let bytes = response.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else if is_json {
            serde_json::from_slice(&bytes).expect("JSON body")
        } else {
            // Files (GPX, FIT) travel as bytes; the test reads them from `raw`.
            Value::String(format!("{} bytes", bytes.len()))
        };
        if is_json || body.is_null() {
            openapi::check_answer(method.as_str(), template, status.as_u16(), &headers, &body);
        } else {
            openapi::check_status(method.as_str(), template, status.as_u16(), &headers);
        }
        Answer {
            status,
            headers,
            body,
            raw: bytes.to_vec(),
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

    /// The trip's detail once `done` holds of it; fails after 30 s with the last detail.
    pub async fn wait_until(&self, token: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let detail = self.detail(token, id).await;
            assert_partial_is_honest(&detail.body);
            if done(&detail.body) {
                return detail.body;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "condition not reached in 30 s: {}",
                detail.body
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// One raw JSON-RPC request to `/mcp` (stateless: no session, no initialize), as a
    /// client without an SDK sends it; answers the JSON-RPC `result`.
    /// `params` `null` leaves them out, as a request without parameters is sent.
    pub async fn mcp_raw(&self, token: &str, method: &str, params: Value) -> Value {
        self.mcp_answer(token, method, params).await["result"].clone()
    }

    /// [`Self::mcp_raw`]'s whole JSON-RPC answer: its `result`, or its `error`.
    pub async fn mcp_answer(&self, token: &str, method: &str, params: Value) -> Value {
        let mut request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method});
        if !params.is_null() {
            request["params"] = params;
        }
        self.client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(request.to_string())
            .send()
            .await
            .expect("an MCP request")
            .json()
            .await
            .expect("a JSON-RPC answer")
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

/// The servers' URLs for tests of the production shape: PostgreSQL, RabbitMQ and Redis. `None`
/// (with the reason printed) when one is not configured; a failure with
/// `ETAPPE_REQUIRE_SERVICES=1`.
#[derive(Debug, Clone)]
pub struct Servers {
    pub database_url: String,
    pub amqp_url: String,
    pub redis_url: String,
    /// A prefix of queue names and Redis keys of this test alone.
    pub prefix: String,
}

impl Servers {
    /// The configured servers, or `None`.
    pub fn from_env() -> Option<Servers> {
        let get = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        match (get("DATABASE_URL"), get("AMQP_URL"), get("REDIS_URL")) {
            (Some(database_url), Some(amqp_url), Some(redis_url))
                if database_url.starts_with("postgres") =>
            {
                Some(Servers {
                    database_url: own_database(&database_url),
                    amqp_url,
                    redis_url,
                    prefix: format!("etappe-test-{}", uuid::Uuid::now_v7().simple()),
                })
            }
            _ => {
                assert!(
                    std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                    "ETAPPE_REQUIRE_SERVICES=1 but DATABASE_URL, AMQP_URL and REDIS_URL are not all set"
                );
                eprintln!(
                    "skipped: set DATABASE_URL, AMQP_URL and REDIS_URL to run the tests on the servers"
                );
                None
            }
        }
    }

    /// Points a configuration at the servers, with no worker in the API process.
    pub fn configure(&self, config: &mut Config) {
        config.work.database_url = Some(self.database_url.clone());
        config.work.amqp_url = Some(self.amqp_url.clone());
        config.work.redis_url = Some(self.redis_url.clone());
        config.work.queue_prefix = self.prefix.clone();
        config.in_process_workers = Some(false);
        config.db_max_connections = 8;
    }

    /// Starts an `etappe-worker` process on the servers (built first if needed).
    pub fn spawn_worker(&self) -> WorkerProcess {
        self.spawn_worker_at("127.0.0.1:0")
    }

    /// Starts an `etappe-worker` process whose own HTTP server listens on `addr`.
    pub fn spawn_worker_at(&self, addr: &str) -> WorkerProcess {
        let binary = worker_binary();
        ensure_worker_built();
        let child = std::process::Command::new(&binary)
            .env("DATABASE_URL", &self.database_url)
            .env("AMQP_URL", &self.amqp_url)
            .env("REDIS_URL", &self.redis_url)
            .env("ETAPPE_QUEUE_PREFIX", &self.prefix)
            .env("ETAPPE_ALLOWED_SOURCE_HOSTS", "127.0.0.1")
            .env("ETAPPE_WORKER_ADDR", addr)
            .env("ETAPPE_LOG", "warn")
            // Retries through the 1 s delay queue, so a job gives up within seconds.
            .env("ETAPPE_RETRY_UNIT_MS", "5")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e} (build it: cargo build -p etappe-workers)",
                    binary.display()
                )
            });
        WorkerProcess { child: Some(child) }
    }
}

/// Builds `etappe-worker` once per test process, with the cargo that runs the tests, so the
/// process tests never run a stale binary (`cargo test` builds test targets, not binaries).
fn ensure_worker_built() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| build_binary("etappe-workers", "etappe-worker"));
}

/// Builds `etappe` (the API binary) once per test process; answers its path.
pub fn api_binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| build_binary("etappe-services", "etappe"));
    binary("etappe")
}

/// Builds `etappe-worker` once per test process; answers its path.
pub fn built_worker_binary() -> PathBuf {
    ensure_worker_built();
    worker_binary()
}

fn build_binary(package: &str, bin: &str) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let profile_dir = binary(bin)
        .parent()
        .map(std::path::Path::to_path_buf)
        .expect("profile dir");
    let mut command = std::process::Command::new(cargo);
    command.args(["build", "-p", package, "--bin", bin]);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        command.arg("--release");
    }
    if let Some(target) = profile_dir.parent() {
        command.env("CARGO_TARGET_DIR", target);
    }
    let status = command.status().expect("run cargo build");
    assert!(status.success(), "building {bin} failed");
}

/// The `etappe-worker` binary next to this test's own executable.
pub fn worker_binary() -> PathBuf {
    binary("etappe-worker")
}

/// A binary of the workspace next to this test's own executable.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let mut dir = exe.parent().expect("exe dir");
    // Test executables live in target/<profile>/deps, binaries in target/<profile>.
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir = dir.parent().expect("profile dir");
    }
    dir.join(name)
}

/// A worker process, killed when dropped.
#[derive(Debug)]
pub struct WorkerProcess {
    child: Option<std::process::Child>,
}

impl WorkerProcess {
    /// The peak resident memory of the process so far (VmHWM, KiB), on Linux.
    pub fn peak_memory_kib(&self) -> Option<u64> {
        let pid = self.child.as_ref()?.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// The CPU time it used so far (user + system, seconds), on Linux.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let pid = self.child.as_ref()?.id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name (which may hold spaces, closed by the last ')'):
        // utime and stime are the 12th and 13th, in clock ticks (100 a second on Linux).
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(ticks as f64 / 100.0)
    }

    /// Kills it at once (SIGKILL): whatever it held is redelivered by the broker.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Asks it to stop (SIGTERM) and waits up to `within` for a clean exit.
    pub fn terminate(&mut self, within: std::time::Duration) -> bool {
        let Some(mut child) = self.child.take() else {
            return false;
        };
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.success();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs each named `async fn(TestApp)` as two tests, `sqlite::name` and `postgres::name` (the
/// latter skipping, or failing under `ETAPPE_REQUIRE_SERVICES=1`, without PostgreSQL).
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let app = etappe_tests::TestApp::spawn(etappe_tests::Backend::Sqlite).await.expect("sqlite");
                    super::$name(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(app) = etappe_tests::TestApp::spawn(etappe_tests::Backend::Postgres).await else { return };
                    super::$name(app).await;
                }
            )*
        }
    };
}

/// What `partial` promises an agent, checked on every poll of every test: once it is false,
/// no computation of the version waits or runs (the days, their alerts, found places and
/// nights are all in); while it is true, the answer says when to read again.
pub fn assert_partial_is_honest(detail: &Value) {
    let Some(partial) = detail["partial"].as_bool() else {
        return;
    };
    if partial {
        assert!(
            detail["retryAfterMs"].as_u64().is_some_and(|ms| ms > 0),
            "partial without retryAfterMs: {detail}"
        );
        return;
    }
    let busy: Vec<&String> = detail["computationStatus"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, s)| *s == "pending" || *s == "running")
                .map(|(c, _)| c)
                .collect()
        })
        .unwrap_or_default();
    assert!(
        busy.is_empty(),
        "partial is false while {busy:?} still wait or run: {detail}"
    );
}
