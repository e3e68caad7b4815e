//! The `etappe` binary as an operator runs it: its commands, its first start, and the export
//! of traces to an OTLP/HTTP collector when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::routing::post;

use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_etappe");

/// A data directory of its own for one test, removed when dropped.
fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("etappe-bin-")
        .tempdir()
        .expect("temp dir")
}

fn etappe(data_dir: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_clear()
        .env("ETAPPE_DATA_DIR", data_dir)
        .env("ETAPPE_LOG", "warn")
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

fn run(dir: &TempDir, args: &[&str]) -> String {
    let output = etappe(dir.path(), args).output().expect("run etappe");
    assert!(
        output.status.success(),
        "etappe {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

#[test]
fn operator_commands_migrate_mint_tokens_and_rebuild_projections() {
    let dir = temp_dir();
    assert!(run(&dir, &["migrate"]).contains("migrations applied"));
    let token = run(
        &dir,
        &[
            "token",
            "create",
            "--email",
            "Rider@Example.org",
            "--scopes",
            "trips:read",
        ],
    );
    assert!(
        token.trim().starts_with("etp_") && token.trim().len() == 68,
        "{token}"
    );
    let rebuilt = run(&dir, &["projections", "rebuild"]);
    assert!(
        rebuilt.contains("rebuilt 0 trip read models from 0 events"),
        "{rebuilt}"
    );
    let refused = etappe(
        dir.path(),
        &[
            "token",
            "create",
            "--email",
            "a@b.c",
            "--scopes",
            "trips:admin",
        ],
    )
    .output()
    .expect("run");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("trips:admin"));
}

/// Starts `etappe serve` on a free port; answers the child and its address once it listens.
fn serve(
    data_dir: &std::path::Path,
    extra_env: &[(&str, &str)],
) -> (std::process::Child, String, String) {
    let mut command = etappe(data_dir, &[]);
    command
        .env("ETAPPE_ADDR", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in extra_env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("spawn etappe");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut token = String::new();
    for line in lines.by_ref() {
        let line = line.expect("line");
        if line.trim().starts_with("etp_") {
            token = line.trim().to_owned();
        }
        if let Some(rest) = line.strip_prefix("Etappe is listening on http://") {
            let addr = rest.split_whitespace().next().expect("address").to_owned();
            return (child, addr, token);
        }
    }
    let _ = child.kill();
    let status = child.wait();
    panic!("etappe exited before listening: {status:?}");
}

/// Kills the server if a test fails before stopping it, so no process outlives the test.
struct Running(Option<std::process::Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn stop(mut running: Running) {
    let Some(mut child) = running.0.take() else {
        return;
    };
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            assert!(
                status.success(),
                "etappe exits cleanly on SIGTERM: {status}"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("etappe did not stop within 10 s of SIGTERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_start_prints_a_working_token_and_traces_reach_the_collector() {
    // A collector that records what is posted to /v1/traces.
    let received: Arc<Mutex<Vec<usize>>> = Arc::default();
    let sink = Arc::clone(&received);
    let collector = Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let sink = Arc::clone(&sink);
            async move {
                sink.lock().expect("lock").push(body.len());
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let collector_addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, collector).await });

    let dir = temp_dir();
    let endpoint = format!("http://{collector_addr}");
    let data_dir = dir.path().to_path_buf();
    let (child, addr, token) = tokio::task::spawn_blocking(move || {
        serve(&data_dir, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)])
    })
    .await
    .expect("serve");
    let running = Running(Some(child));
    assert!(token.starts_with("etp_"), "the first start prints a token");
    let saved = std::fs::read_to_string(dir.path().join("local-token")).expect("token saved");
    assert_eq!(saved.trim(), token);

    etappe_services::telemetry::install_tls_provider();
    let client = reqwest::Client::new();
    let created = client
        .post(format!("http://{addr}/trips"))
        .bearer_auth(&token)
        .header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        // A documentation address: the fetcher refuses it before connecting anywhere.
        .json(&serde_json::json!({"sourceUrl": "https://192.0.2.1/a.gpx"}))
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 202);

    tokio::task::spawn_blocking(move || stop(running))
        .await
        .expect("stop");
    // The batch exporter flushes on shutdown.
    let posted = received.lock().expect("lock").clone();
    assert!(
        !posted.is_empty() && posted.iter().all(|n| *n > 0),
        "spans were exported: {posted:?}"
    );
}

#[test]
fn off_loopback_the_public_url_is_required() {
    let dir = temp_dir();
    let output = etappe(dir.path(), &[])
        .env("ETAPPE_ADDR", "0.0.0.0:0")
        .output()
        .expect("run etappe");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ETAPPE_PUBLIC_URL"), "{stderr}");
    // Refused before anything was created.
    assert!(!dir.path().join("local-token").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_embedded_start_prints_a_login_link_and_mail_last_shows_the_newest_mail() {
    let dir = temp_dir();
    let empty = etappe(dir.path(), &["mail", "last"]).output().expect("run");
    assert!(!empty.status.success());
    assert!(String::from_utf8_lossy(&empty.stderr).contains("no mail"));

    let data_dir = dir.path().to_path_buf();
    let (child, addr, link) = tokio::task::spawn_blocking(move || {
        let mut command = etappe(&data_dir, &[]);
        command
            .env("ETAPPE_ADDR", "127.0.0.1:0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn etappe");
        let stdout = child.stdout.take().expect("stdout");
        let mut link = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("line");
            if line.contains("/auth/magic?token=") {
                link = line.trim().to_owned();
            }
            if let Some(rest) = line.strip_prefix("Etappe is listening on http://") {
                let addr = rest.split_whitespace().next().expect("address").to_owned();
                return (child, addr, link);
            }
        }
        let _ = child.kill();
        let status = child.wait();
        panic!("etappe exited before listening: {status:?}");
    })
    .await
    .expect("serve");
    let running = Running(Some(child));
    assert!(
        link.starts_with(&format!("http://{addr}/auth/magic?token=")),
        "a login link on the bound address: {link:?}"
    );
    etappe_services::telemetry::install_tls_provider();
    let client = reqwest::Client::new();
    let asked = client
        .post(format!("http://{addr}/auth/login"))
        .json(&serde_json::json!({"email": "rider@example.org"}))
        .send()
        .await
        .expect("login");
    assert_eq!(asked.status(), 202);
    let deadline = Instant::now() + Duration::from_secs(5);
    let shown = loop {
        let output = etappe(dir.path(), &["mail", "last"]).output().expect("run");
        if output.status.success() {
            break String::from_utf8(output.stdout).expect("utf-8");
        }
        assert!(Instant::now() < deadline, "no mail within 5 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(shown.contains("To: rider@example.org"), "{shown}");
    assert!(
        shown.lines().any(|l| l
            .trim()
            .starts_with(&format!("http://{addr}/auth/magic?token="))
            && l.trim().len() == format!("http://{addr}/auth/magic?token=").len() + 64),
        "the link whole, on one line: {shown}"
    );
    tokio::task::spawn_blocking(move || stop(running))
        .await
        .expect("stop");
}

#[test]
fn osm_import_and_status_report_what_is_loaded_and_refuse_broken_files() {
    let dir = temp_dir();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/osm");
    assert!(run(&dir, &["osm", "status"]).contains("no OpenStreetMap index is loaded"));
    let route = fixtures.join("route.osm.pbf");
    let output = etappe(
        dir.path(),
        &["osm", "import", route.to_str().expect("utf-8 path")],
    )
    .output()
    .expect("run etappe");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("imported \"route\": 16 points, 11 road ways, 2 ferry lines"),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("pass 3/3"));
    let status = run(&dir, &["osm", "status"]);
    assert!(
        status.starts_with("route: 16 points, 11 road ways, 2 ferry lines"),
        "{status}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&run(&dir, &["osm", "status", "--json"])).expect("JSON");
    assert_eq!(json[0]["name"], "route");
    assert_eq!(json[0]["bbox"]["north"], 45.6);

    let broken = fixtures.join("not-pbf.osm.pbf");
    let output = etappe(
        dir.path(),
        &["osm", "import", broken.to_str().expect("utf-8 path")],
    )
    .output()
    .expect("run etappe");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not an OSM PBF file"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(run(&dir, &["osm", "status"]).starts_with("route: 16 points"));
}
