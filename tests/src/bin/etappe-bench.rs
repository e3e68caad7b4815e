//! `etappe-bench`: the measurements reported in the README, reproducible on any machine.
//!
//! - `appends`: durable single-event appends per second through the event store, with N
//!   concurrent clients, on PostgreSQL (`DATABASE_URL`) or the embedded SQLite.
//! - `patch`: REST command latency of `PATCH /trips/{id}` at a fixed request rate (open
//!   loop: latency is measured from when each request was due, so a slow server cannot hide
//!   its queueing), against the real application started in this process.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Parser, Subcommand};
use etappe_events::store::{
    EventMetadata, ExpectedVersion, NewEvent, PostgresStore, SqliteStore, Store,
};
use etappe_services::config::Config;
use etappe_services::startup::Application;
use etappe_tests::TempDir;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(name = "etappe-bench", about = "Etappe's benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Durable single-event appends per second.
    Appends {
        /// Concurrent clients.
        #[arg(long, default_value_t = 1)]
        clients: usize,
        /// How long to run.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Use the embedded SQLite store even when DATABASE_URL is set.
        #[arg(long)]
        sqlite: bool,
    },
    /// Time from POST /trips to partial: false for a synthetic route served on loopback.
    Route {
        /// Route length, km.
        #[arg(long, default_value_t = 1000.0)]
        km: f64,
        /// Point spacing, metres.
        #[arg(long, default_value_t = 25.0)]
        spacing: f64,
        /// Repetitions.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Run on PostgreSQL, RabbitMQ and Redis (DATABASE_URL, AMQP_URL, REDIS_URL) with
        /// separate worker processes.
        #[arg(long)]
        servers: bool,
        /// Worker processes (with --servers) or in-process worker slots.
        #[arg(long, default_value_t = 1)]
        workers: u16,
        /// Trips created at once (jobs per second = trips / time to finish them all).
        #[arg(long, default_value_t = 1)]
        trips: usize,
        /// Report the peak memory (VmHWM) of the worker process after the runs (--servers).
        #[arg(long)]
        memory: bool,
    },
    /// PATCH /trips/{id} latency at a fixed rate.
    Patch {
        /// Requests per second.
        #[arg(long, default_value_t = 500)]
        rate: u64,
        /// How long to run.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
        /// Trips the requests are spread over.
        #[arg(long, default_value_t = 50)]
        trips: usize,
        /// Use the embedded SQLite store even when DATABASE_URL is set.
        #[arg(long)]
        sqlite: bool,
    },
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn report(label: &str, mut latencies: Vec<Duration>, elapsed: Duration, errors: usize) {
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{label}: {} ok, {errors} errors in {:.1}s = {:.0}/s; latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        elapsed.as_secs_f64(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.90)),
        ms(percentile(&latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
    );
}

async fn open_store(sqlite: bool, dir: &TempDir) -> anyhow::Result<(Arc<dyn Store>, &'static str)> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if !sqlite && url.starts_with("postgres") => Ok((
            Arc::new(PostgresStore::connect(&url, 32).await?),
            "postgres",
        )),
        _ => Ok((
            Arc::new(SqliteStore::open(&dir.path().join("bench.db")).await?),
            "sqlite",
        )),
    }
}

async fn appends(clients: usize, seconds: u64, sqlite: bool) -> anyhow::Result<()> {
    let dir = TempDir::new();
    let (store, backend) = open_store(sqlite, &dir).await?;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0;
                while Instant::now() < deadline {
                    let event = NewEvent {
                        event_id: uuid::Uuid::now_v7(),
                        event_type: "BenchmarkRecorded".into(),
                        schema_version: 1,
                        data: json!({"payload": "x".repeat(160)}),
                        metadata: EventMetadata {
                            actor: Some("bench".into()),
                            ..Default::default()
                        },
                    };
                    let stream = format!("bench-{}", uuid::Uuid::now_v7());
                    let t = Instant::now();
                    match store
                        .append(&stream, ExpectedVersion::NoStream, vec![event])
                        .await
                    {
                        Ok(_) => latencies.push(t.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (l, e) = task.await?;
        all.extend(l);
        errors += e;
    }
    report(
        &format!("appends on {backend}, {clients} client(s)"),
        all,
        started.elapsed(),
        errors,
    );
    Ok(())
}

async fn patch(rate: u64, seconds: u64, trips: usize, sqlite: bool) -> anyhow::Result<()> {
    let dir = TempDir::new();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.db_max_connections = 32;
    if !sqlite && let Ok(url) = std::env::var("DATABASE_URL") {
        config.database_url = Some(url);
    }
    let backend = if config.database_url.is_some() {
        "postgres"
    } else {
        "sqlite"
    };
    let app = Application::build(&config)
        .await
        .context("starting Etappe")?;
    let base = format!("http://{}", app.local_addr()?);
    let identity = app.state().identity.clone();
    let user = identity
        .ensure_user(&format!("bench-{}@example.org", uuid::Uuid::now_v7()))
        .await?;
    let token = identity
        .create_token(user, &etappe_services::identity::Scope::ALL, "bench")
        .await?;
    tokio::spawn(app.run_until_stopped(std::future::pending()));

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()?;
    let mut ids = Vec::new();
    for i in 0..trips {
        let answer: serde_json::Value = client
            .post(format!("{base}/trips"))
            .bearer_auth(&token)
            .json(&json!({"sourceUrl": "https://example.org/bench.gpx", "title": format!("bench {i}")}))
            .send()
            .await?
            .json()
            .await?;
        ids.push(answer["id"].as_str().context("created trip id")?.to_owned());
    }

    let total = rate * seconds;
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let started = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(total as usize);
    for i in 0..total {
        let due = started + interval * i as u32;
        tokio::time::sleep_until(due).await;
        let client = client.clone();
        let url = format!("{base}/trips/{}", ids[i as usize % ids.len()]);
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            // A title change appends an event but does not move the version: "1" stays valid.
            let response = client
                .patch(url)
                .bearer_auth(token)
                .header("if-match", "\"1\"")
                .json(&json!({"title": format!("bench title {i}")}))
                .send()
                .await;
            let status = match &response {
                Ok(r) => r.status().as_u16(),
                Err(_) => 0,
            };
            (status, due.elapsed())
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = std::collections::BTreeMap::<u16, usize>::new();
    for task in tasks {
        let (status, latency) = task.await?;
        if (200..300).contains(&status) {
            latencies.push(latency);
        } else {
            *errors.entry(status).or_default() += 1;
        }
    }
    if !errors.is_empty() {
        println!("failed requests by status (0 = no answer): {errors:?}");
    }
    report(
        &format!("PATCH /trips/{{id}} on {backend} at {rate}/s over {trips} trips"),
        latencies,
        started.elapsed(),
        errors.values().sum(),
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn route(
    km: f64,
    spacing: f64,
    runs: usize,
    servers: bool,
    workers: u16,
    trips: usize,
    memory: bool,
) -> anyhow::Result<()> {
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

    let dir = TempDir::new();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.allowed_source_hosts = vec!["127.0.0.1".into()];
    config.worker_concurrency = workers;
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
    let app = Application::build(&config)
        .await
        .context("starting Etappe")?;
    let base = format!("http://{}", app.local_addr()?);
    let identity = app.state().identity.clone();
    let user = identity
        .ensure_user(&format!("bench-{}@example.org", uuid::Uuid::now_v7()))
        .await?;
    let token = identity
        .create_token(user, &etappe_services::identity::Scope::ALL, "bench")
        .await?;
    tokio::spawn(app.run_until_stopped(std::future::pending()));
    let client = reqwest::Client::new();
    if servers {
        // Let the worker processes connect before timing.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let mut times = Vec::new();
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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    etappe_services::telemetry::install_tls_provider();
    match Cli::parse().command {
        Command::Appends {
            clients,
            seconds,
            sqlite,
        } => appends(clients, seconds, sqlite).await,
        Command::Patch {
            rate,
            seconds,
            trips,
            sqlite,
        } => patch(rate, seconds, trips, sqlite).await,
        Command::Route {
            km,
            spacing,
            runs,
            servers,
            workers,
            trips,
            memory,
        } => route(km, spacing, runs, servers, workers, trips, memory).await,
    }
}
