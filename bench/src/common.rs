//! What the benchmarks share: latency percentiles, the one report line, and the event store a
//! benchmark runs on.

use std::sync::Arc;
use std::time::Duration;

use etappe_events::{PostgresStore, SqliteStore, Store};

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
