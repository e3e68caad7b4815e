//! `route`: time from `POST /trips` to `partial: false` for a synthetic route served on
//! loopback, in process or on the servers with separate worker processes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{bench_token, serve};
use anyhow::Context;
use etappe_services::config::Config;
use serde_json::json;

use etappe_tests::temp_dir;

/// What to time: the route, how often, and on which backend.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Route length, km.
    #[arg(long, default_value_t = 1000.0)]
    pub km: f64,
    /// Point spacing, metres.
    #[arg(long, default_value_t = 25.0)]
    pub spacing: f64,
    /// Repetitions.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Run on PostgreSQL, RabbitMQ and Redis (DATABASE_URL, AMQP_URL, REDIS_URL) with
    /// separate worker processes.
    #[arg(long)]
    pub servers: bool,
    /// Worker processes (with --servers) or in-process worker slots.
    #[arg(long, default_value_t = 1)]
    pub workers: u16,
    /// Trips created at once (jobs per second = trips / time to finish them all).
    #[arg(long, default_value_t = 1)]
    pub trips: usize,
    /// Report the peak memory (VmHWM) of the worker process after the runs (--servers).
    #[arg(long)]
    pub memory: bool,
}

/// Creates trips on a synthetic `km` route and times them until their days are computed.
pub async fn run(options: Options) -> anyhow::Result<()> {
    let Options {
        km,
        spacing,
        runs,
        servers,
        workers,
        trips,
        memory,
    } = options;
    let gpx = etappe_tests::fixtures::route_gpx(km, spacing);
    let size_mb = gpx.len() as f64 / 1e6;
    let gpx = Arc::new(gpx);
    let app = axum::Router::new().route(
        "/route.gpx",
        axum::routing::get(move || {
            let gpx = Arc::clone(&gpx);
            async move { gpx.as_str().to_owned() }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let source = format!("http://{}/route.gpx", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = temp_dir();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.work.allowed_source_hosts = vec!["127.0.0.1".into()];
    config.work.worker_concurrency = workers;
    // The server is measured, not its budgets.
    config.budgets = etappe_services::config::BudgetSettings::unlimited();
    let mut processes = Vec::new();
    let backend = if servers {
        let s = etappe_tests::Servers::from_env()
            .context("--servers needs DATABASE_URL, AMQP_URL and REDIS_URL")?;
        s.configure(&mut config);
        config.db_max_connections = 16;
        for _ in 0..workers {
            processes.push(s.spawn_worker());
        }
        "postgres + rabbitmq + redis"
    } else {
        "embedded defaults"
    };
    let (base, app) = serve(&config).await?;
    let token = bench_token(&app).await?;
    let client = reqwest::Client::new();
    if servers {
        // Let the worker processes connect before timing.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let mut times = Vec::new();
    // The workers' CPU time over the runs: trips per CPU-second is trips per second per core.
    let cpu = || -> Option<f64> { processes.iter().map(|p| p.cpu_seconds()).sum() };
    let cpu_before = cpu();
    for _ in 0..runs {
        let started = Instant::now();
        let mut ids = Vec::new();
        for _ in 0..trips {
            let answer: serde_json::Value = client
                .post(format!("{base}/trips"))
                .bearer_auth(&token)
                .json(&json!({"sourceUrl": source}))
                .send()
                .await?
                .json()
                .await?;
            ids.push(answer["id"].as_str().context("trip id")?.to_owned());
        }
        for id in &ids {
            loop {
                let summary: serde_json::Value = client
                    .get(format!("{base}/trips/{id}"))
                    .bearer_auth(&token)
                    .send()
                    .await?
                    .json()
                    .await?;
                if summary["partial"] == json!(false) {
                    break;
                }
                if summary["computationStatus"]["route"] == json!("failed") {
                    anyhow::bail!("the route failed: {summary}");
                }
                if started.elapsed() > Duration::from_secs(300) {
                    anyhow::bail!("no days after 300 s");
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        times.push(started.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "route {km} km ({size_mb:.1} MB GPX) on {backend}, {workers} worker(s), {trips} trip(s) per run: \
         POST -> partial:false best {:.0} ms, median {:.0} ms over {runs} runs; {:.2} jobs/s (median)",
        ms(times[0]),
        ms(times[times.len() / 2]),
        trips as f64 / times[times.len() / 2].as_secs_f64()
    );
    if let (Some(before), Some(after)) = (cpu_before, cpu()) {
        let per_trip = (after - before) / (runs * trips) as f64;
        println!(
            "worker CPU: {per_trip:.3} CPU-s per trip, i.e. {:.2} trips/s per core",
            1.0 / per_trip
        );
    }
    if memory {
        for p in &processes {
            if let Some(peak) = p.peak_memory_kib() {
                println!(
                    "worker process peak memory (VmHWM): {:.1} MiB",
                    peak as f64 / 1024.0
                );
            }
        }
    }
    Ok(())
}
