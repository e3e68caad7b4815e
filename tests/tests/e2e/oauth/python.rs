//! An MCP host connecting unaided through the official Python SDK's OAuth client
//! (`mcp.client.auth.OAuthClientProvider`): `tests/python/oauth_journey.py` meets the 401,
//! discovers, registers (dynamic registration, then a client ID metadata document URL),
//! has its person (logged in by the magic link from the file mailbox) approve the consent
//! page, exchanges the code, calls tools, refreshes an expired token, revokes, and gets
//! 401. On both backends. Prints the calls and seconds from the client's first request to
//! its first successful tool call.
//!
//! The SDK insists on an https client metadata URL, so the document is served over https on
//! 127.0.0.1 (`etappe_tests::tls_documents`, a throwaway CA made by the `openssl` CLI) and
//! nothing is registered ahead: the SDK sees `client_id_metadata_document_supported`, skips
//! registration, and Etappe fetches the document on `/oauth/authorize` with its SSRF-safe
//! fetcher, trusting the test CA through the `fetch_hooks` test hook only.

use std::time::Duration;

use etappe_tests::Backend;
use etappe_tests::python::{find_python, run, usable};
use etappe_tests::tls_documents::{CLIENT_DOCUMENT_PATH, OAuthJourneySetup};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/oauth_journey.py");
const TIMEOUT: Duration = Duration::from_secs(120);
/// The access token's lifetime in this test: short, so the script sees it expire.
const ACCESS_TTL_SECS: u64 = 2;
/// The name the document gives its client; the consent page must show it.
const DOCUMENT_CLIENT_NAME: &str = "Etappe OAuth journey (metadata document)";

async fn journey(backend: Backend) {
    let probe = tokio::task::spawn_blocking(find_python);
    let Some(OAuthJourneySetup {
        app,
        documents,
        cimd_url,
    }) = OAuthJourneySetup::start(
        backend,
        ACCESS_TTL_SECS,
        DOCUMENT_CLIENT_NAME,
        "http://127.0.0.1:47999/callback",
    )
    .await
    else {
        return;
    };
    let Some(python) = usable(probe.await.expect("the interpreter probe")) else {
        return;
    };
    let args = vec![
        "--base".to_owned(),
        app.base.clone(),
        "--mailbox".to_owned(),
        app.data_dir().join("mailbox").display().to_string(),
        "--access-ttl".to_owned(),
        ACCESS_TTL_SECS.to_string(),
        "--cimd-url".to_owned(),
        cimd_url.clone(),
        "--cimd-name".to_owned(),
        DOCUMENT_CLIENT_NAME.to_owned(),
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
    // Fetched once on /oauth/authorize, then served from the cache (token, refresh, revoke).
    assert_eq!(
        documents.hits(CLIENT_DOCUMENT_PATH),
        1,
        "the metadata document's fetches\n{report}"
    );
    let stored = app
        .state
        .authorization()
        .store()
        .client(&cimd_url)
        .await
        .expect("the client store")
        .expect("the document's client, cached");
    assert_eq!(stored.kind, "cimd");
    assert_eq!(stored.client_name, DOCUMENT_CLIENT_NAME);
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
