//! The rider's page in a real browser: starts Etappe (embedded, then on PostgreSQL), serves
//! a GPX on loopback and runs `node --test tests/web/journey.test.mjs`, which drives Debian's
//! headless Chromium through playwright-core: log in by the mailbox link, create a trip from
//! the GPX, watch it compute, edit, meet a conflict, share, read the public page, revoke;
//! axe-core on every main screen; screenshots and figures. Fails when node fails. Without
//! node, Chromium or `tests/web/node_modules` the test skips, unless
//! `ETAPPE_REQUIRE_SERVICES=1` makes that a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use etappe_tests::{Backend, TestApp, fixtures};

const CHROMIUM: &str = "/usr/bin/chromium";

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("web")
}

/// Whether the browser test can run; panics under `ETAPPE_REQUIRE_SERVICES=1` when not.
fn tools_present() -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let missing: Vec<&str> = [
        (!node).then_some("node"),
        (!Path::new(CHROMIUM).exists()).then_some(CHROMIUM),
        (!web_dir().join("node_modules/playwright-core").exists())
            .then_some("tests/web/node_modules (npm ci in tests/web)"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but the browser test lacks {missing:?}"
    );
    eprintln!("skipped: the browser test needs {missing:?}");
    false
}

async fn journey(backend: Backend, label: &str) {
    let Some(app) = TestApp::spawn_with(backend, |config| {
        // No tiles: the browser must not reach outside the machine (the route draws on the
        // plain background, as it does offline).
        config.people.tile_url = String::new();
    })
    .await
    else {
        return;
    };
    let fixtures = fixtures::start().await;
    let artefacts = std::env::var("ETAPPE_WEB_ARTEFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| web_dir().join("artefacts"))
        .join(label);
    std::fs::create_dir_all(&artefacts).expect("artefacts folder");
    let base = app.base.clone();
    let gpx = fixtures.url("/route.gpx");
    let long_gpx = fixtures.url("/long.gpx");
    let mailbox = app.data_dir().join("mailbox");
    let dir = web_dir();
    let status = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .args(["--test", "--test-reporter=spec", "journey.test.mjs"])
            .current_dir(dir)
            .env("ETAPPE_BASE", base)
            .env("ETAPPE_GPX_URL", gpx)
            .env("ETAPPE_LONG_GPX_URL", long_gpx)
            .env("ETAPPE_MAILBOX", mailbox)
            .env("ETAPPE_ARTEFACTS", artefacts)
            .env("CHROMIUM", CHROMIUM)
            .status()
            .expect("run node")
    })
    .await
    .expect("node finished");
    assert!(
        status.success(),
        "the browser journey failed on {label}: {status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_riders_journey_in_chromium() {
    if !tools_present() {
        return;
    }
    journey(Backend::Sqlite, "embedded").await;
    journey(Backend::Postgres, "postgres").await;
}
