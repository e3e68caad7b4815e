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

/// Runs `node --test <file>` in tests/web against `app` (its address and file mailbox, with
/// `env` besides), its screenshots under the artefacts folder's `label`; answers how it ended.
async fn run_browser_test(
    app: &TestApp,
    file: &'static str,
    label: &str,
    env: Vec<(&'static str, String)>,
) -> std::process::ExitStatus {
    let artefacts = std::env::var("ETAPPE_WEB_ARTEFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| web_dir().join("artefacts"))
        .join(label);
    std::fs::create_dir_all(&artefacts).expect("artefacts folder");
    let (base, mailbox, dir) = (app.base.clone(), app.data_dir().join("mailbox"), web_dir());
    tokio::task::spawn_blocking(move || {
        Command::new("node")
            .args(["--test", "--test-reporter=spec", file])
            .current_dir(dir)
            .env("ETAPPE_BASE", base)
            .env("ETAPPE_MAILBOX", mailbox)
            .env("ETAPPE_ARTEFACTS", artefacts)
            .env("CHROMIUM", CHROMIUM)
            .envs(env)
            .status()
            .expect("run node")
    })
    .await
    .expect("node finished")
}

async fn journey(backend: Backend, label: &str) {
    // OpenStreetMap from the Overpass stand-in, so the days have something found along them.
    let upstreams = etappe_tests::standins::start().await;
    let overpass = upstreams.url("overpass");
    let Some(app) = TestApp::spawn_with(backend, |config| {
        // No tiles: the browser must not reach outside the machine (the route draws on the
        // plain background, as it does offline).
        config.people.tile_url = String::new();
        config.work.upstreams.overpass_url = Some(overpass.clone());
        // The journey edits faster than a rider does (twenty changes a minute by default).
        config.budgets.changes_per_minute = 1000;
        config.budgets.creations_per_minute = 100;
    })
    .await
    else {
        return;
    };
    let fixtures = fixtures::start().await;
    let status = run_browser_test(
        &app,
        "journey.test.mjs",
        label,
        vec![
            ("ETAPPE_GPX_URL", fixtures.url("/route.gpx")),
            ("ETAPPE_LONG_GPX_URL", fixtures.url("/long.gpx")),
        ],
    )
    .await;
    assert!(
        status.success(),
        "the browser journey failed on {label}: {status}"
    );
}

/// A fresh install (no OpenStreetMap source): a night chosen by hand, and nights at a place
/// to sleep refused with the way to get a source (`tests/web/fresh.test.mjs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fresh_install_in_chromium() {
    if !tools_present() {
        return;
    }
    let Some(app) = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.people.tile_url = String::new();
        config.work.upstreams.overpass_url = None;
    })
    .await
    else {
        return;
    };
    let fixtures = fixtures::start().await;
    let status = run_browser_test(
        &app,
        "fresh.test.mjs",
        "fresh",
        vec![("ETAPPE_GPX_URL", fixtures.url("/route.gpx"))],
    )
    .await;
    assert!(
        status.success(),
        "the fresh-install journey failed: {status}"
    );
}

/// A plan fixed on the page (`tests/web/plan.test.mjs`): planned on a real Valhalla, a place
/// off its map keeps the days and is named, then changed in the plan's form and routed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_plan_is_fixed_on_the_page() {
    if !tools_present() {
        return;
    }
    let extract = etappe_tests::valhalla::liechtenstein();
    let Some(engine) = tokio::task::spawn_blocking(move || {
        etappe_tests::valhalla::start(
            &extract,
            &etappe_tests::valhalla::ValhallaOptions::default(),
        )
    })
    .await
    .expect("the harness") else {
        return;
    };
    let router_url = engine.url.clone();
    let Some(app) = TestApp::spawn_with(Backend::Sqlite, move |config| {
        config.people.tile_url = String::new();
        config.work.upstreams.router = "valhalla".into();
        config.work.upstreams.router_url = Some(router_url);
        config.work.upstreams.timeout_secs = 20;
    })
    .await
    else {
        return;
    };
    let status = run_browser_test(&app, "plan.test.mjs", "plan", Vec::new()).await;
    drop(engine);
    assert!(status.success(), "the plan journey failed: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_riders_journey_in_chromium() {
    if !tools_present() {
        return;
    }
    journey(Backend::Sqlite, "embedded").await;
    journey(Backend::Postgres, "postgres").await;
}

/// The headers and negotiation the page depends on, without a browser: a share link gives a
/// browser the page and JSON clients the JSON, its files stay files; the page is locked
/// down (CSP without inline script, no framing), its assets hashed, immutable, gzip.
#[tokio::test]
async fn share_links_negotiate_and_the_page_is_locked_down() {
    let Some(app) = TestApp::spawn(Backend::Sqlite).await else {
        return;
    };
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let source = fixtures.url("/route.gpx");
    let created = app
        .create_trip(&token, &serde_json::json!({"sourceUrl": source}))
        .await;
    let id = created.body["id"].as_str().expect("an id").to_owned();
    app.wait_until(&token, &id, |d| d["partial"] == false).await;
    let shared = app
        .call(
            reqwest::Method::POST,
            "/trips/{id}/share",
            &format!("/trips/{id}/share"),
            Some(&token),
            &[],
            None,
        )
        .await;
    let url = shared.body["url"].as_str().expect("a share url").to_owned();
    // Without its gzip feature reqwest shows the encoding as sent.
    let client = reqwest::Client::new();

    // A browser gets the page: no source link, locked down.
    let page = client
        .get(&url)
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    let h = page.headers().clone();
    assert!(
        h["content-type"]
            .to_str()
            .unwrap_or("")
            .starts_with("text/html")
    );
    let csp = h["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(csp.contains("script-src 'self';"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(h["x-frame-options"], "DENY");
    let html = page.text().await.expect("html");
    assert!(
        !html.contains(&source),
        "the page never holds the source link"
    );
    assert!(!html.contains("<script>"), "no inline script");
    // Its assets: hashed names, a year's immutable cache, gzip.
    let assets: Vec<&str> = html
        .split('"')
        .filter(|s| s.starts_with("/assets/"))
        .collect();
    assert!(assets.len() >= 5, "{html}");
    for asset in &assets {
        let answer = client
            .get(format!("{}{asset}", app.base))
            .header("accept-encoding", "gzip, br")
            .send()
            .await
            .expect("asset");
        assert_eq!(answer.status(), 200, "{asset}");
        assert_eq!(
            answer.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
        assert_eq!(answer.headers()["content-encoding"], "gzip", "{asset}");
    }
    let unknown = client
        .get(format!("{}/assets/app.0000000000.js", app.base))
        .send()
        .await
        .expect("unknown asset");
    assert_eq!(unknown.status(), 404);

    // JSON clients keep the JSON, without the owner's private details.
    let json = client
        .get(&url)
        .header("accept", "application/json")
        .send()
        .await
        .expect("json");
    assert_eq!(json.status(), 200);
    assert_eq!(json.headers()["vary"], "Accept");
    let body: serde_json::Value = json.json().await.expect("json body");
    assert!(body["stages"].as_array().is_some_and(|s| !s.is_empty()));
    assert!(!body.to_string().contains(&source));
    assert!(body.get("sourceUrl").is_none() && body.get("maxDistancePerDay").is_none());
    // Files stay files, whatever the Accept.
    let gpx = client
        .get(format!("{url}.gpx"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("gpx");
    assert_eq!(gpx.status(), 200);
    assert!(gpx.text().await.expect("gpx text").contains("<gpx"));

    // Without a session, / is the script-free page that leads to the login form.
    let home = client
        .get(format!("{}/", app.base))
        .send()
        .await
        .expect("home");
    assert_eq!(home.status(), 200);
    let home = home.text().await.expect("home text");
    assert!(
        home.contains("/login") && !home.contains("<script"),
        "{home}"
    );
}
