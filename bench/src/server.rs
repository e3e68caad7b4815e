//! The server's defences, measured (`etappe-bench exports|streams|half-open`): memory of
//! parallel anonymous exports of a large trip, CPU of idle live streams, and how long a
//! half-open connection is held. Each starts the application in this process on the embedded
//! defaults, so the figures include the server's work and nothing else's.

use std::time::{Duration, Instant};

use anyhow::Context;
use etappe_app::{Caller, RequestContext};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use etappe_tests::{Backend, TestApp};

/// This process's peak resident memory so far (VmHWM) and current (VmRSS), KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// CPU time this process has used (user + system), from /proc/self/stat.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the state field.
    let total = ticks(11) + ticks(12);
    // Linux's USER_HZ is 100 on every common configuration.
    Duration::from_millis(total * 10)
}

async fn app() -> anyhow::Result<TestApp> {
    TestApp::spawn_with(Backend::Sqlite, |c| {
        c.budgets.share_reads_per_address = 100_000;
        c.budgets.share_reads_per_code = 100_000;
        c.budgets.streams_per_user = 100_000;
    })
    .await
    .context("start Etappe")
}

/// A trip of `points` points whose days exist, shared; answers its public code.
async fn shared_trip(app: &TestApp, token: &str, points: usize) -> anyhow::Result<String> {
    let km = points as f64 * 2.5 / 1000.0;
    let gpx = etappe_tests::fixtures::route_gpx(km, 2.5);
    let caller = Caller {
        principal: app
            .state
            .identity()
            .authenticate(token)
            .await?
            .context("token")?,
        context: RequestContext::default(),
    };
    // In process: the HTTP upload limit (30 MB) is not what is measured here.
    let mut settings = Map::new();
    settings.insert("title".into(), json!("Export bench"));
    settings.insert("maxDistancePerDay".into(), json!(300));
    let created = app
        .state
        .trips()
        .create_from_upload(&caller, "bench.gpx", gpx.as_bytes(), &settings)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let id = created.trip.id;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let detail = app.detail(token, &id).await;
        if detail.body["partial"] == json!(false) {
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "no days: {}", detail.body);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let shared: Value = app
        .client
        .post(format!("{}/trips/{id}/share", app.base))
        .bearer_auth(token)
        .send()
        .await?
        .json()
        .await?;
    shared["shortCode"]
        .as_str()
        .map(str::to_owned)
        .context("share code")
}

/// `parallel` anonymous GPX exports of a trip of `points` points at once.
pub async fn exports(points: usize, parallel: usize) -> anyhow::Result<()> {
    let app = app().await?;
    let token = app.user().await;
    let code = shared_trip(&app, &token, points).await?;
    let (peak_before, rss_before) = memory_kib();
    let started = Instant::now();
    let downloads = (0..parallel).map(|_| {
        let client = app.client.clone();
        let url = format!("{}/s/{code}.gpx", app.base);
        async move {
            let mut response = client.get(url).send().await?;
            anyhow::ensure!(response.status() == StatusCode::OK, "{}", response.status());
            // Counted as it arrives, not kept: the client's memory is not what is measured.
            let mut received = 0;
            while let Some(chunk) = response.chunk().await? {
                received += chunk.len();
            }
            Ok::<usize, anyhow::Error>(received)
        }
    });
    let sizes = futures::future::try_join_all(downloads).await?;
    let took = started.elapsed();
    let (peak_after, _) = memory_kib();
    println!(
        "{parallel} parallel exports of a {points}-point trip ({:.1} MB each): {:.2} s; \
         peak memory {} MiB before, {} MiB after (+{} MiB); resident before {} MiB",
        sizes.first().copied().unwrap_or(0) as f64 / 1e6,
        took.as_secs_f64(),
        peak_before / 1024,
        peak_after / 1024,
        peak_after.saturating_sub(peak_before) / 1024,
        rss_before / 1024,
    );
    Ok(())
}

/// `count` live streams held open on an idle trip for `seconds`: the CPU they cost.
pub async fn streams(count: usize, seconds: u64) -> anyhow::Result<()> {
    let app = app().await?;
    let token = app.user().await;
    let fixtures = etappe_tests::fixtures::start().await;
    let created = app
        .create_trip(&token, &json!({"sourceUrl": fixtures.url("/route.gpx")}))
        .await;
    let id = created.body["id"].as_str().context("id")?.to_owned();
    app.wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    let mut open = Vec::with_capacity(count);
    for _ in 0..count {
        let response = app
            .client
            .get(format!("{}/trips/{id}/events", app.base))
            .bearer_auth(&token)
            .send()
            .await?;
        anyhow::ensure!(response.status() == StatusCode::OK, "{}", response.status());
        open.push(response);
    }
    // Let the first state of every stream go out, then measure the idle cost.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (cpu_before, wall) = (cpu_time(), Instant::now());
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let used = cpu_time().saturating_sub(cpu_before);
    println!(
        "{count} idle live streams for {seconds} s: {:.2} s of CPU, {:.1} % of one core",
        used.as_secs_f64(),
        100.0 * used.as_secs_f64() / wall.elapsed().as_secs_f64()
    );
    drop(open);
    Ok(())
}

/// How long the server holds a connection whose request headers never finish.
pub async fn half_open() -> anyhow::Result<()> {
    let app = app().await?;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
        .await?;
    let started = Instant::now();
    let mut sink = Vec::new();
    let closed =
        tokio::time::timeout(Duration::from_secs(300), stream.read_to_end(&mut sink)).await;
    match closed {
        Ok(_) => println!(
            "a connection with half-sent headers was closed after {:.1} s",
            started.elapsed().as_secs_f64()
        ),
        Err(_) => println!("a connection with half-sent headers was still open after 300 s"),
    }
    Ok(())
}
