//! The agent journey through the official Python MCP SDK (PyPI `mcp`, pinned in
//! `tests/python/requirements.txt`): `tests/python/mcp_journey.py` walks the steps of
//! `mcp.rs`'s journey (initialize, tools/list with hints, create, poll, a day, an edit and a
//! stale one, settings, share, unshare and delete through their confirmations, and, in the
//! 2026-07-28 era, delete confirmed by the person through an elicitation form) against a real
//! Etappe, so the surface is proven with a second, independent client. Without a Python that
//! can `import mcp` the test skips (and fails under `ETAPPE_REQUIRE_SERVICES=1`, as in CI).

use std::time::Duration;

use etappe_tests::python::{find_python, run, usable};
use etappe_tests::{Backend, TestApp, fixtures};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/mcp_journey.py");
/// The whole script, both eras; its own polling deadline is 60 s.
const TIMEOUT: Duration = Duration::from_secs(150);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_walks_the_whole_journey() {
    // Importing the SDK takes about a second: probe it while Etappe starts.
    let probe = tokio::task::spawn_blocking(find_python);
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let Some(python) = usable(probe.await.expect("the interpreter probe")) else {
        return;
    };
    let fixtures = fixtures::start().await;
    // One token per era, and one for the 2026-07-28 client that confirms through a form: each
    // is a client with its own rate budget (20 changes a minute).
    let args = vec![
        "--url".to_owned(),
        format!("{}/mcp", app.base),
        "--token".to_owned(),
        app.user().await,
        "--token".to_owned(),
        app.user().await,
        "--token".to_owned(),
        app.user().await,
        "--gpx-url".to_owned(),
        fixtures.url("/route.gpx"),
    ];
    // The server runs on this runtime's workers; the script waits on a blocking thread.
    let run = tokio::task::spawn_blocking(move || run(&python, SCRIPT, &args, TIMEOUT))
        .await
        .expect("the script's runner");
    let report = format!("--- stdout\n{}--- stderr\n{}---", run.stdout, run.stderr);
    let Some(status) = run.status else {
        panic!(
            "the Python journey did not finish within {} s and was killed\n{report}",
            TIMEOUT.as_secs()
        );
    };
    assert!(
        status.success(),
        "the Python journey failed ({status})\n{report}"
    );
    // The script's last line is its summary; without it the journey did not run to the end.
    assert!(
        run.stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("journey complete:")),
        "the Python journey exited 0 without its summary line\n{report}"
    );
    if !run.stderr.trim().is_empty() {
        // Warnings of the SDK (a protocol quirk shows here first).
        eprintln!("--- the script's stderr\n{}---", run.stderr);
    }
    eprintln!(
        "{}python journey: {:.1} s",
        run.stdout,
        run.elapsed.as_secs_f64()
    );
}
