//! What an operator ships from the process itself: the `etappe` binary, run as a server with
//! `ETAPPE_LOG_FORMAT=json`, writes one JSON object a line (no ANSI colours when its output is
//! not a terminal), and an access line per request carrying its route, status, latency and
//! request id; a `/readyz` that says "not ready" is not logged as an error.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_logs_one_json_object_a_line_with_an_access_line_per_request() {
    let binary = tokio::task::spawn_blocking(etappe_tests::api_binary)
        .await
        .expect("build");
    let dir = std::env::temp_dir().join(format!("etappe-logs-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).expect("a data dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut server = std::process::Command::new(binary)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ETAPPE_DATA_DIR", &dir)
        .env("ETAPPE_ADDR", format!("127.0.0.1:{port}"))
        .env("ETAPPE_LOG", "info")
        .env("ETAPPE_LOG_FORMAT", "json")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start etappe");
    etappe_services::telemetry::install_tls_provider();
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let up = client.get(format!("{base}/livez")).send().await;
        if up.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        assert!(Instant::now() < deadline, "the server never came up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let request_id = "0193a0b0-0000-7000-8000-00000000abcd";
    let answered = client
        .get(format!("{base}/livez"))
        .header("x-request-id", request_id)
        .send()
        .await
        .expect("livez");
    assert!(answered.status().is_success());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = server.kill();
    let mut stderr = String::new();
    server
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read the log");
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);

    assert!(
        !stderr.contains('\u{1b}'),
        "no ANSI colours off a terminal: {stderr}"
    );
    let lines: Vec<Value> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(!lines.is_empty(), "the server logged nothing");
    let access = lines
        .iter()
        .find(|l| l["span"]["request_id"] == request_id)
        .unwrap_or_else(|| panic!("no access line for the request: {stderr}"));
    assert_eq!(access["level"], "INFO", "{access}");
    assert_eq!(access["span"]["route"], "/livez", "{access}");
    assert_eq!(access["fields"]["status"], 200, "{access}");
    assert!(access["fields"]["latency"].is_string(), "{access}");
}

/// The operations kit in `deploy/` names only what Etappe has: every metric its alert rules
/// and dashboard query is one the API or a worker exports, and the Kubernetes example scales
/// the worker Deployment it defines on the queue the workers consume. (promtool and
/// kubernetes-validate check their syntax and schemas in `.ci/run`.)
#[test]
fn the_operations_kit_names_only_what_etappe_exports() {
    use etappe_infra::metrics::Metrics;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let read = |path: &str| {
        std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    // Every family, with a sample each so labelled ones render too.
    let exported: String = [Metrics::default(), Metrics::worker()]
        .iter()
        .map(|m| {
            m.job_ended("compute_route", "completed");
            m.job_dispatched("compute_route");
            m.job_took("compute_route", 0.1);
            m.job_in_flight("compute_route", 0);
            m.http_answered("GET", "/trips", 200, 0.01);
            m.refused_for("changes");
            m.render()
        })
        .collect();
    let alerts = read("prometheus/alerts.yml");
    let dashboard = read("grafana/etappe-dashboard.json");
    let _: Value = serde_json::from_str(&dashboard).expect("the dashboard is JSON");
    let mut named = 0;
    for text in [&alerts, &dashboard] {
        for name in text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("etappe_"))
        {
            named += 1;
            assert!(
                exported.contains(name),
                "{name} is queried but not exported:\n{exported}"
            );
        }
    }
    assert!(named >= 15, "the kit queries the metrics ({named} names)");

    let documents = |path: &str| -> Vec<serde_yaml::Value> {
        read(path)
            .split("\n---\n")
            .map(|doc| serde_yaml::from_str(doc).expect("YAML"))
            .collect()
    };
    let manifests = documents("kubernetes/etappe.yaml");
    let kind = |doc: &serde_yaml::Value, kind: &str, name: &str| {
        doc["kind"].as_str() == Some(kind) && doc["metadata"]["name"].as_str() == Some(name)
    };
    let worker = manifests
        .iter()
        .find(|d| kind(d, "Deployment", "etappe-worker"))
        .expect("the worker Deployment");
    assert_eq!(
        worker["spec"]["template"]["spec"]["containers"][0]["command"][0].as_str(),
        Some("etappe-worker")
    );
    assert!(
        manifests.iter().any(|d| kind(d, "Job", "etappe-migrate")),
        "one process migrates"
    );
    let scaling = documents("kubernetes/keda-scaledobject.yaml");
    let scaled = scaling
        .iter()
        .find(|d| d["kind"].as_str() == Some("ScaledObject"))
        .expect("a ScaledObject");
    assert_eq!(
        scaled["spec"]["scaleTargetRef"]["name"].as_str(),
        Some("etappe-worker")
    );
    assert_eq!(
        scaled["spec"]["triggers"][0]["metadata"]["queueName"].as_str(),
        Some(etappe_workers::queue::rabbitmq::jobs_queue_name("etappe").as_str()),
        "KEDA watches the queue the workers consume"
    );
}
