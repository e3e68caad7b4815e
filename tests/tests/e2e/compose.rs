//! `docker compose up` comes up, checked without a Docker engine: `compose.yaml` is valid
//! against the Compose Specification's JSON schema (vendored in `tests/compose/`), the
//! workers wait for the API's liveness (its readiness needs a live worker, so waiting for it
//! would deadlock), the API and the workers route through the `valhalla` service without
//! waiting for it, and every health check of Etappe's own services — the compose file's and
//! the Dockerfile's — passes when run under `/bin/sh` (dash here, as in
//! `debian:bookworm-slim`) against a running server.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use etappe_tests::{Backend, Servers, TestApp, api_binary, built_worker_binary};
use serde_json::Value;

const COMPOSE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../compose.yaml"));
const DOCKERFILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../Dockerfile"));
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/compose/compose-spec.json"
));

fn compose() -> Value {
    serde_yaml::from_str(COMPOSE).expect("compose.yaml is YAML")
}

fn schema_errors(document: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator
        .iter_errors(document)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn compose_yaml_matches_the_compose_specification() {
    let document = compose();
    let errors = schema_errors(&document);
    assert!(errors.is_empty(), "compose.yaml: {errors:#?}");

    // The validator does judge: a health check that is a number, a depends_on condition
    // that does not exist and an unknown key are each refused, naming where.
    type Mutation = fn(&mut Value);
    let mutations: [(&str, Mutation); 3] = [
        ("/services/api/healthcheck/test", |d| {
            d["services"]["api"]["healthcheck"]["test"] = Value::from(5);
        }),
        ("/services/worker/depends_on", |d| {
            d["services"]["worker"]["depends_on"]["api"]["condition"] =
                Value::from("service_ready");
        }),
        ("/services/api", |d| {
            d["services"]["api"]["healthchek"] = Value::from("typo");
        }),
    ];
    for (path, mutate) in mutations {
        let mut broken = document.clone();
        mutate(&mut broken);
        let errors = schema_errors(&broken);
        assert!(
            errors.iter().any(|e| e.starts_with(path)),
            "{path} not refused: {errors:#?}"
        );
    }
}

#[test]
fn the_workers_wait_for_the_api_to_be_live_not_ready() {
    let document = compose();
    let services = &document["services"];
    assert_eq!(
        services["worker"]["depends_on"]["api"]["condition"],
        "service_healthy"
    );
    let api_check = shell_line(&services["api"]["healthcheck"]["test"]);
    assert!(
        api_check.contains("--live") && !api_check.contains("ready"),
        "the API's health check gates the workers, so it must be liveness: {api_check}"
    );
}

#[test]
fn the_api_and_the_workers_route_through_the_valhalla_service() {
    let document = compose();
    let services = &document["services"];
    let valhalla = &services["valhalla"];
    assert_eq!(
        valhalla["image"],
        "ghcr.io/valhalla/valhalla-scripted:latest"
    );
    // The image's scripts compare these to the strings "True" and "False": a YAML boolean
    // would reach them as "true" and never match.
    let environment = &valhalla["environment"];
    for (name, value) in [
        ("use_tiles_ignore_pbf", "False"),
        ("serve_tiles", "True"),
        ("build_admins", "False"),
        ("build_time_zones", "False"),
        ("build_elevation", "False"),
    ] {
        assert_eq!(environment[name], value, "valhalla's {name}");
    }
    // Tiles come from the mounted extract, never from a download.
    assert!(environment.get("tile_urls").is_none(), "{environment}");
    assert_eq!(
        valhalla["volumes"],
        serde_json::json!(["./data/osm:/custom_files"])
    );
    let check = shell_line(&valhalla["healthcheck"]["test"]);
    assert!(check.contains("http://localhost:8002/status"), "{check}");

    for name in ["api", "worker"] {
        let environment = &services[name]["environment"];
        assert_eq!(environment["ETAPPE_ROUTER"], "valhalla", "{name}");
        assert_eq!(
            environment["ETAPPE_ROUTER_URL"], "http://valhalla:8002",
            "{name} names the service and the port it serves"
        );
        // No upstream is required: nothing waits for the tiles to be built.
        assert!(
            services[name]["depends_on"].get("valhalla").is_none(),
            "{name} must not wait for Valhalla"
        );
    }
}

/// A health check's `test` as one `sh` command line: `["CMD", args…]` quoted word by word,
/// `["CMD-SHELL", line]` and a plain string as they are.
fn shell_line(test: &Value) -> String {
    match test {
        Value::String(line) => line.clone(),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.split_first() {
                Some((&"CMD-SHELL", [line])) => (*line).to_owned(),
                Some((&"CMD", args)) => args
                    .iter()
                    .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => panic!("unexpected health check form: {test}"),
            }
        }
        other => panic!("unexpected health check: {other}"),
    }
}

/// The Dockerfile's `HEALTHCHECK … CMD [...]` as a `test` value.
fn dockerfile_healthcheck() -> Value {
    let line = DOCKERFILE
        .lines()
        .find(|l| l.starts_with("HEALTHCHECK"))
        .expect("the Dockerfile has a HEALTHCHECK");
    let (_, command) = line.split_once(" CMD ").expect("HEALTHCHECK … CMD");
    let mut words: Vec<Value> = serde_json::from_str(command.trim()).expect("exec form");
    words.insert(0, Value::from("CMD"));
    Value::Array(words)
}

/// Runs `line` under `/bin/sh` with only `PATH` (the built binaries first) and `env`; answers
/// its exit code and what it printed on stderr.
fn run_under_sh(line: &str, bin_dir: &Path, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display());
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", line])
        .env_clear()
        .env("PATH", path)
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run /bin/sh");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_health_checks_pass_under_sh_against_a_running_server() {
    let binary = tokio::task::spawn_blocking(api_binary)
        .await
        .expect("build");
    let bin_dir = binary.parent().expect("bin dir").to_path_buf();
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let addr = app.base.trim_start_matches("http://").to_owned();
    let document = compose();
    let checks = [
        (
            "compose api",
            document["services"]["api"]["healthcheck"]["test"].clone(),
        ),
        ("Dockerfile", dockerfile_healthcheck()),
    ];
    for (name, test) in checks {
        let line = shell_line(&test);
        let (bin, line_env) = (bin_dir.clone(), addr.clone());
        let (code, stderr) = tokio::task::spawn_blocking(move || {
            run_under_sh(&line, &bin, &[("ETAPPE_ADDR", &line_env)])
        })
        .await
        .expect("join");
        assert_eq!(code, Some(0), "{name}'s health check failed: {stderr}");
    }
    // Readiness passes too here (the embedded default runs a worker in the process), and a
    // server that is not there fails the check with 1, within the 2 s bound.
    let ready = format!("etappe health --ready --addr {addr}");
    let (bin, started) = (bin_dir.clone(), Instant::now());
    let (code, stderr) = tokio::task::spawn_blocking(move || run_under_sh(&ready, &bin, &[]))
        .await
        .expect("join");
    assert_eq!(code, Some(0), "{stderr}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let gone = format!(
        "etappe health --live --addr {}",
        closed.local_addr().expect("addr")
    );
    drop(closed);
    let (code, stderr) = tokio::task::spawn_blocking(move || run_under_sh(&gone, &bin_dir, &[]))
        .await
        .expect("join");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_health_check_passes_under_sh_against_a_running_worker() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _servers = etappe_tests::servers_shared().await;
    let binary = tokio::task::spawn_blocking(built_worker_binary)
        .await
        .expect("build");
    let bin_dir = binary.parent().expect("bin dir").to_path_buf();
    // The worker's queue and database must exist: an API on the same servers migrates them.
    let _app = TestApp::spawn_with(Backend::Postgres, |c| servers.configure(c))
        .await
        .expect("postgres");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let _worker = servers.spawn_worker_at(&addr);
    let line = shell_line(&compose()["services"]["worker"]["healthcheck"]["test"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (line, bin, addr) = (line.clone(), bin_dir.clone(), addr.clone());
        let (code, stderr) = tokio::task::spawn_blocking(move || {
            run_under_sh(&line, &bin, &[("ETAPPE_WORKER_ADDR", &addr)])
        })
        .await
        .expect("join");
        if code == Some(0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the worker's health check never passed: {code:?} {stderr}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // Its metrics say only what a worker knows: the queue as sampled, no dispatcher series
    // (a worker does not dispatch; a zero it never measured would hide a real lag).
    let metrics = reqwest::Client::new()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .expect("worker metrics")
        .text()
        .await
        .expect("text");
    assert!(metrics.contains("etappe_queue_depth "), "{metrics}");
    assert!(metrics.contains("etappe_dead_letter_depth "), "{metrics}");
    assert!(!metrics.contains("etappe_dispatcher_lag"), "{metrics}");
    assert!(!metrics.contains("etappe_dispatcher_leader"), "{metrics}");
}
