//! An MCP host connecting unaided through the official Python SDK's OAuth client
//! (`mcp.client.auth.OAuthClientProvider`): `tests/python/oauth_journey.py` meets the 401,
//! discovers, registers (dynamic registration, then a client ID metadata document URL),
//! has its person (logged in by the magic link from the file mailbox) approve the consent
//! page, exchanges the code, calls tools, refreshes an expired token, revokes, and gets
//! 401. On both backends. Prints the calls and seconds from the client's first request to
//! its first successful tool call.
//!
//! The SDK insists on an https client metadata URL, and the test's server cannot be reached
//! over https; so the document's client is pre-registered (CIMD-02 §7.2: an authorization
//! server may know a client's document already), and the fetcher, with its refusals, is
//! tested against a local server in `oauth.rs`.

use std::time::Duration;

use etappe_tests::python::{find_python, run, usable};
use etappe_tests::{Backend, TestApp};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/oauth_journey.py");
const TIMEOUT: Duration = Duration::from_secs(120);
/// The access token's lifetime in this test: short, so the script sees it expire.
const ACCESS_TTL_SECS: u64 = 2;
const CIMD_URL: &str = "https://127.0.0.1/etappe-oauth-journey/client.json";

async fn journey(backend: Backend) {
    let probe = tokio::task::spawn_blocking(find_python);
    let Some(app) =
        TestApp::spawn_with(backend, |c| c.oauth.access_ttl_secs = ACCESS_TTL_SECS).await
    else {
        return;
    };
    let Some(python) = usable(probe.await.expect("the interpreter probe")) else {
        return;
    };
    app.state
        .authorization
        .preregister_document(
            CIMD_URL,
            "Etappe OAuth journey (document)",
            vec!["http://127.0.0.1:47999/callback".into()],
            Duration::from_secs(3600),
        )
        .await
        .expect("pre-registered");
    let args = vec![
        "--base".to_owned(),
        app.base.clone(),
        "--mailbox".to_owned(),
        app.data_dir().join("mailbox").display().to_string(),
        "--access-ttl".to_owned(),
        ACCESS_TTL_SECS.to_string(),
        "--cimd-url".to_owned(),
        CIMD_URL.to_owned(),
    ];
    let run = tokio::task::spawn_blocking(move || run(&python, SCRIPT, &args, TIMEOUT))
        .await
        .expect("the script's runner");
    let report = format!("--- stdout\n{}--- stderr\n{}---", run.stdout, run.stderr);
    let Some(status) = run.status else {
        panic!(
            "the OAuth journey did not finish within {} s\n{report}",
            TIMEOUT.as_secs()
        );
    };
    assert!(
        status.success(),
        "the OAuth journey failed ({status})\n{report}"
    );
    assert_eq!(
        run.stdout.lines().last(),
        Some("oauth journey complete"),
        "no summary line\n{report}"
    );
    for kind in ["dcr", "cimd"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{kind}: first tool call:"))),
            "{report}"
        );
    }
    eprintln!(
        "{}oauth journey: {:.1} s",
        run.stdout,
        run.elapsed.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_oauth_client_connects_unaided_on_sqlite() {
    journey(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_oauth_client_connects_unaided_on_postgres() {
    journey(Backend::Postgres).await;
}
