//! `plan`: a plan from places on a real Valhalla (the harness in [`etappe_tests::valhalla`], tiles
//! built from an extract): what the tiles cost, and the time from `POST /trips` with a plan
//! to `partial: false`, in process on the embedded defaults, with the heights of the routed
//! line from an Open-Meteo-format stand-in on loopback (the plan has none of its own).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{bench_token, serve};
use anyhow::Context;
use etappe_services::config::Config;
use serde_json::{Value, json};

use etappe_tests::temp_dir;
use etappe_tests::valhalla::{self, ValhallaOptions};

/// An Open-Meteo elevation stand-in: a gentle synthetic terrain; answers its base URL and the
/// count of calls it answered.
async fn heights() -> anyhow::Result<(String, Arc<AtomicUsize>)> {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let app = axum::Router::new().route(
        "/v1/elevation",
        axum::routing::get(
            move |axum::extract::Query(q): axum::extract::Query<
                std::collections::HashMap<String, String>,
            >| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.fetch_add(1, Ordering::Relaxed);
                    let numbers = |key: &str| -> Vec<f64> {
                        q.get(key)
                            .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
                            .unwrap_or_default()
                    };
                    let heights: Vec<f64> = numbers("latitude")
                        .iter()
                        .zip(numbers("longitude"))
                        .map(|(lat, lon)| {
                            400.0 + 50.0 * (lat * 300.0).sin() + 30.0 * (lon * 200.0).cos()
                        })
                        .collect();
                    axum::Json(json!({"elevation": heights}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, calls))
}

/// Parses `"lat,lon;lat,lon;…"`.
fn places(text: &str) -> anyhow::Result<Vec<Value>> {
    text.split(';')
        .map(|p| {
            let (lat, lon) = p.split_once(',').context("a place is lat,lon")?;
            Ok(json!({"lat": lat.trim().parse::<f64>()?, "lon": lon.trim().parse::<f64>()?}))
        })
        .collect()
}

/// Builds (or reuses) tiles for `extract`, starts Valhalla and Etappe, and plans `route` (at
/// least two places) `runs` times.
pub async fn run(extract: &Path, route: &str, runs: usize, max_leg_km: f64) -> anyhow::Result<()> {
    let places = places(route)?;
    anyhow::ensure!(places.len() >= 2, "--places needs at least two places");
    let path = extract.to_path_buf();
    let engine =
        tokio::task::spawn_blocking(move || valhalla::start(&path, &ValhallaOptions::default()))
            .await?
            .context("Valhalla is not installed: run tests/valhalla/install.sh")?;
    println!(
        "tiles of {}: {:.1} s to build{}, {:.1} MB",
        extract.display(),
        engine.tiles.seconds,
        if engine.tiles.reused {
            " (an earlier build, reused)"
        } else {
            ""
        },
        engine.tiles.bytes as f64 / 1e6
    );
    let (elevation_url, calls) = heights().await?;
    let dir = temp_dir();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.budgets = etappe_services::config::BudgetSettings::unlimited();
    config.work.upstreams.router = "valhalla".into();
    config.work.upstreams.router_url = Some(engine.url.clone());
    config.work.upstreams.router_max_leg_km = max_leg_km;
    config.work.upstreams.elevation_url = Some(elevation_url);
    config.work.upstreams.timeout_secs = 120;
    let (base, app) = serve(&config).await?;
    let token = bench_token(&app).await?;
    let client = reqwest::Client::new();
    let (from, to) = (places[0].clone(), places[places.len() - 1].clone());
    let via: Vec<Value> = places[1..places.len() - 1].to_vec();
    let mut times = Vec::new();
    let mut last = Value::Null;
    for _ in 0..runs {
        let before = calls.load(Ordering::Relaxed);
        let started = Instant::now();
        let answer: Value = client
            .post(format!("{base}/trips"))
            .bearer_auth(&token)
            .json(&json!({"plan": {"from": from, "via": via, "to": to}}))
            .send()
            .await?
            .json()
            .await?;
        let id = answer["id"].as_str().context("trip id")?.to_owned();
        loop {
            let detail: Value = client
                .get(format!("{base}/trips/{id}/detail"))
                .bearer_auth(&token)
                .send()
                .await?
                .json()
                .await?;
            if detail["status"] == "failed" {
                anyhow::bail!("the plan failed: {}", detail["unavailable"]);
            }
            if detail["partial"] == json!(false) {
                last = detail;
                break;
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(600),
                "no days in 600 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        times.push((started.elapsed(), calls.load(Ordering::Relaxed) - before));
    }
    times.sort();
    let km = last["totalDistance"].as_f64().unwrap_or(0.0);
    let (best, median) = (times[0], times[times.len() / 2]);
    println!(
        "plan of {} places, {km:.1} km in {} days: POST -> partial:false best {:.2} s, median {:.2} s over {runs} runs; {} elevation calls a plan ({:.1} per 100 km)",
        places.len(),
        last["stageCount"],
        best.0.as_secs_f64(),
        median.0.as_secs_f64(),
        median.1,
        median.1 as f64 * 100.0 / km.max(1.0),
    );
    Ok(())
}
