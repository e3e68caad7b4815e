//! `patch`: REST command latency of `PATCH /trips/{id}` at a fixed request rate (open
//! loop: latency is measured from when each request was due, so a slow server cannot hide
//! its queueing), against the real application started in this process.

use std::time::Duration;

use anyhow::Context;
use etappe_services::config::Config;
use serde_json::json;

use crate::common::{bench_token, choose_store, report, serve};
use etappe_tests::temp_dir;

/// Sends `PATCH /trips/{id}` at `rate` per second for `seconds`, spread over `trips` trips.
pub async fn run(rate: u64, seconds: u64, trips: usize, sqlite: bool) -> anyhow::Result<()> {
    let dir = temp_dir();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.db_max_connections = 32;
    // The server is measured, not its budgets.
    config.budgets = etappe_services::config::BudgetSettings::unlimited();
    let backend = choose_store(&mut config, sqlite);
    let (base, app) = serve(&config).await?;
    let token = bench_token(&app).await?;

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()?;
    let mut ids = Vec::new();
    for i in 0..trips {
        let answer: serde_json::Value = client
            .post(format!("{base}/trips"))
            .bearer_auth(&token)
            .json(
                &json!({"sourceUrl": "https://192.0.2.1/bench.gpx", "title": format!("bench {i}")}),
            )
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
            // Every caller edit moves the version, and calls on one trip overlap at this rate:
            // `*` (whatever is current) measures the write path, not the rate of lost races.
            let response = client
                .patch(url)
                .bearer_auth(token)
                .header("if-match", "*")
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
