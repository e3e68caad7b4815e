//! An MCP host connecting unaided through the official TypeScript SDK's OAuth client
//! (`@modelcontextprotocol/sdk`, pinned in tests/node/package-lock.json): the node script
//! `tests/node/oauth_journey.mjs` implements the SDK's `OAuthClientProvider` in memory; the
//! transport meets the 401, discovers, registers (dynamic registration; then a client ID
//! metadata document served over https on loopback, as in `oauth_python.rs`), and hands the
//! authorization URL to `redirectToAuthorization`, where the person (logged in by the magic
//! link from the file mailbox) approves the consent page; `finishAuth(code)`, a tool call,
//! an expired access token refreshed by the SDK on the 401, revocation, 401. On both backends. Prints the calls and seconds from the client's first
//! request to its first successful tool call.
//!
//! Needs node 18+ and `npm ci --prefix tests/node` (`.ci/run` does it); without them the test
//! is skipped, and fails under `ETAPPE_REQUIRE_SERVICES=1`.

use std::time::Duration;

use etappe_tests::Backend;
use etappe_tests::node::{NODE_DIR, find_node, usable};
use etappe_tests::python::run_with_env;
use etappe_tests::tls_documents::{CLIENT_DOCUMENT_PATH, OAuthJourneySetup};

const TIMEOUT: Duration = Duration::from_secs(120);
/// The access token's lifetime in this test: short, so the script sees it expire.
const ACCESS_TTL_SECS: u64 = 2;
const DOCUMENT_CLIENT_NAME: &str = "Etappe OAuth journey (TypeScript, metadata document)";

async fn journey(backend: Backend) {
    let probe = tokio::task::spawn_blocking(find_node);
    let Some(OAuthJourneySetup {
        app,
        documents,
        cimd_url,
    }) = OAuthJourneySetup::start(
        backend,
        ACCESS_TTL_SECS,
        DOCUMENT_CLIENT_NAME,
        "http://127.0.0.1:47998/callback",
    )
    .await
    else {
        return;
    };
    let Some(node) = usable(probe.await.expect("the node probe")) else {
        return;
    };
    let env = vec![
        ("ETAPPE_BASE".to_owned(), app.base.clone()),
        (
            "ETAPPE_MAILBOX".to_owned(),
            app.data_dir().join("mailbox").display().to_string(),
        ),
        ("ETAPPE_ACCESS_TTL".to_owned(), ACCESS_TTL_SECS.to_string()),
        ("ETAPPE_CIMD_URL".to_owned(), cimd_url.clone()),
        (
            "ETAPPE_CIMD_NAME".to_owned(),
            DOCUMENT_CLIENT_NAME.to_owned(),
        ),
    ];
    let script = format!("{NODE_DIR}/oauth_journey.mjs");
    let run = tokio::task::spawn_blocking(move || run_with_env(&node, &script, &[], &env, TIMEOUT))
        .await
        .expect("the script's runner");
    let report = format!("--- stdout\n{}--- stderr\n{}---", run.stdout, run.stderr);
    let Some(status) = run.status else {
        panic!(
            "the TypeScript OAuth journey did not finish within {} s\n{report}",
            TIMEOUT.as_secs()
        );
    };
    assert!(
        status.success(),
        "the TypeScript OAuth journey failed ({status})\n{report}"
    );
    assert_eq!(
        run.stdout.lines().last(),
        Some("oauth journey complete"),
        "no summary line\n{report}"
    );
    for kind in ["dcr", "cimd"] {
        for step in [
            "first tool call:",
            "access token expired and refreshed",
            "revoked; the next call got 401",
        ] {
            assert!(
                run.stdout
                    .lines()
                    .any(|l| l.starts_with(&format!("{kind}: {step}"))),
                "{kind}: {step}\n{report}"
            );
        }
    }
    assert_eq!(
        documents.hits(CLIENT_DOCUMENT_PATH),
        1,
        "the metadata document's fetches\n{report}"
    );
    eprintln!(
        "{}typescript oauth journey: {:.1} s",
        run.stdout,
        run.elapsed.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdks_oauth_client_connects_unaided_on_sqlite() {
    journey(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdks_oauth_client_connects_unaided_on_postgres() {
    journey(Backend::Postgres).await;
}
