//! What the benchmarks share: latency percentiles, the one report line, the event store a
//! benchmark runs on, and the server it starts with a token to call it with.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use etappe_app::App;
use etappe_app::identity::Scope;
use etappe_events::{PostgresStore, SqliteStore, Store};
use etappe_services::config::Config;
use etappe_services::startup::Application;

use etappe_tests::TempDir;

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

pub(crate) fn report(label: &str, mut latencies: Vec<Duration>, elapsed: Duration, errors: usize) {
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

pub(crate) async fn open_store(
    sqlite: bool,
    dir: &TempDir,
) -> anyhow::Result<(Arc<dyn Store>, &'static str)> {
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

/// Points a benchmark server at PostgreSQL when `DATABASE_URL` is set and `sqlite` is not
/// asked for; answers the name of the store it runs on.
pub(crate) fn choose_store(config: &mut Config, sqlite: bool) -> &'static str {
    if !sqlite && let Ok(url) = std::env::var("DATABASE_URL") {
        config.work.database_url = Some(url);
    }
    if config.work.database_url.is_some() {
        "postgres"
    } else {
        "sqlite"
    }
}

/// Starts Etappe with `config` in this process, serving in the background; answers its base
/// URL and its application layer (for accounts and tokens made without HTTP).
pub(crate) async fn serve(config: &Config) -> anyhow::Result<(String, App)> {
    let app = Application::build(config)
        .await
        .context("starting Etappe")?;
    let base = format!("http://{}", app.local_addr()?);
    let state = app.app().clone();
    tokio::spawn(app.run_until_stopped(std::future::pending()));
    Ok((base, state))
}

/// A new account's bearer token with every scope.
pub(crate) async fn bench_token(app: &App) -> anyhow::Result<String> {
    let identity = app.identity();
    let user = identity
        .ensure_user(&format!("bench-{}@example.org", uuid::Uuid::now_v7()))
        .await?;
    Ok(identity.create_token(user, &Scope::ALL, "bench").await?)
}
