//! `mcp`: latency of the agent surface, `tools/call` of `get_trip` then of `edit_stages`
//! (relabelling a day, with the version each answer carries) through `/mcp`, open loop at
//! a fixed rate over trips whose days exist, one user per trip; refusals (the per-user rate
//! limits, stale versions) and JSON-RPC errors are counted apart from the latencies.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use etappe_services::config::Config;
use serde_json::json;

use crate::common::{bench_token, choose_store, report, serve};
use etappe_tests::temp_dir;

const MCP_PROTOCOL_VERSION: &str = "2025-11-25";

/// A `tools/call` that did not answer a result: its kind (for counting) and a sample message.
#[derive(Debug)]
struct McpFailure {
    kind: String,
    message: String,
}

impl McpFailure {
    fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

/// The JSON-RPC answer of a POST to `/mcp`: a JSON body, or the `data:` line of an SSE stream
/// that carries the response.
fn jsonrpc_answer(body: &str, sse: bool) -> Option<serde_json::Value> {
    if !sse {
        return serde_json::from_str(body).ok();
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data.trim()).ok())
        .rfind(|v| v.get("result").is_some() || v.get("error").is_some())
}

/// One `tools/call` as raw JSON-RPC over HTTP; answers the result's `structuredContent`.
/// A refusal (`isError: true`) is counted by its kind: rate limit, stale version or other.
async fn mcp_call(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    agent: &str,
    id: u64,
    tool: &str,
    arguments: serde_json::Value,
) -> Result<serde_json::Value, McpFailure> {
    let request = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    });
    let response = client
        .post(url)
        .bearer_auth(token)
        .header(reqwest::header::USER_AGENT, agent)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header("mcp-protocol-version", MCP_PROTOCOL_VERSION)
        .body(request.to_string())
        .send()
        .await
        .map_err(|e| McpFailure::new("no answer", e.to_string()))?;
    let status = response.status();
    let sse = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let body = response
        .text()
        .await
        .map_err(|e| McpFailure::new("no answer", e.to_string()))?;
    if !status.is_success() {
        return Err(McpFailure::new(format!("HTTP {}", status.as_u16()), body));
    }
    let answer = jsonrpc_answer(&body, sse)
        .ok_or_else(|| McpFailure::new("unreadable answer", body.clone()))?;
    if let Some(error) = answer.get("error") {
        return Err(McpFailure::new(
            format!("JSON-RPC error {}", error["code"]),
            error["message"].as_str().unwrap_or_default(),
        ));
    }
    let result = &answer["result"];
    if result["isError"] == json!(true) {
        let message = result["structuredContent"]["error"]
            .as_str()
            .or_else(|| result["content"][0]["text"].as_str())
            .unwrap_or_default()
            .to_owned();
        let kind = if message.starts_with("rate_limited") {
            "refused: rate limited"
        } else if message.contains("has moved on") {
            "refused: stale version"
        } else {
            "refused: other"
        };
        return Err(McpFailure::new(kind, message));
    }
    result
        .get("structuredContent")
        .cloned()
        .ok_or_else(|| McpFailure::new("no structuredContent", body))
}

/// Runs `call(i)` for i in 0..rate × seconds, each started when due (open loop), and measures
/// each from when it was due to its full answer. Answers the latencies of the successes, the
/// failures by kind (count and first message) and the phase's wall time.
async fn open_loop<F, Fut>(
    rate: u64,
    seconds: u64,
    mut call: F,
) -> anyhow::Result<(Vec<Duration>, BTreeMap<String, (usize, String)>, Duration)>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<(), McpFailure>> + Send + 'static,
{
    let total = rate * seconds;
    let started = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(usize::try_from(total)?);
    for i in 0..total {
        let due = started + Duration::from_secs_f64(i as f64 / rate as f64);
        tokio::time::sleep_until(due).await;
        let answer = call(i);
        tasks.push(tokio::spawn(async move {
            let outcome = answer.await;
            (outcome, due.elapsed())
        }));
    }
    let mut latencies = Vec::with_capacity(tasks.len());
    let mut failures = BTreeMap::<String, (usize, String)>::new();
    for task in tasks {
        match task.await? {
            (Ok(()), latency) => latencies.push(latency),
            (Err(failure), _) => {
                let entry = failures
                    .entry(failure.kind)
                    .or_insert_with(|| (0, failure.message));
                entry.0 += 1;
            }
        }
    }
    Ok((latencies, failures, started.elapsed()))
}

fn report_failures(failures: &BTreeMap<String, (usize, String)>) {
    for (kind, (count, message)) in failures {
        let message: String = message.chars().take(200).collect();
        println!("  {count} × {kind}, e.g.: {message}");
    }
}

/// One trip of the `mcp` benchmark, with its own user (the rate limits count per user and
/// client) and the version its last edit answered.
struct McpTrip {
    token: String,
    id: String,
    stage: String,
    version: tokio::sync::Mutex<u64>,
}

/// The version named by a stale-version refusal ("… the current one is N. …").
fn current_version(message: &str) -> Option<u64> {
    let (_, rest) = message.split_once("the current one is ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Calls `get_trip`, then `edit_stages`, at `rate` per second for `seconds` each.
pub async fn run(rate: u64, seconds: u64, trips: usize, sqlite: bool) -> anyhow::Result<()> {
    anyhow::ensure!(rate > 0 && trips > 0, "--rate and --trips must be positive");
    let fixtures = etappe_tests::fixtures::start().await;
    let source = fixtures.url("/route.gpx");
    let dir = temp_dir();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.db_max_connections = 32;
    // The server is measured, not its budgets.
    config.budgets = etappe_services::config::BudgetSettings::unlimited();
    config.work.allowed_source_hosts = vec!["127.0.0.1".into()];
    let backend = choose_store(&mut config, sqlite);
    let (base, app) = serve(&config).await?;
    let mut tokens = Vec::with_capacity(trips);
    for _ in 0..trips {
        tokens.push(bench_token(&app).await?);
    }

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(60))
        .build()?;
    let mut ids = Vec::with_capacity(trips);
    for (i, token) in tokens.iter().enumerate() {
        let answer: serde_json::Value = client
            .post(format!("{base}/trips"))
            .bearer_auth(token)
            .json(&json!({"sourceUrl": source, "title": format!("bench {i}")}))
            .send()
            .await?
            .json()
            .await?;
        ids.push(
            answer["id"]
                .as_str()
                .with_context(|| format!("created trip id: {answer}"))?
                .to_owned(),
        );
    }
    // The days first, then the analyses they start, so the phases measure a quiet server.
    let waiting = Instant::now();
    let mut unsettled = BTreeMap::<String, usize>::new();
    for (id, token) in ids.iter().zip(&tokens) {
        loop {
            let summary: serde_json::Value = client
                .get(format!("{base}/trips/{id}"))
                .bearer_auth(token)
                .send()
                .await?
                .json()
                .await?;
            if summary["computationStatus"]["route"] == json!("failed") {
                anyhow::bail!("the route failed: {summary}");
            }
            let busy: Vec<String> = summary["computationStatus"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(_, s)| *s == "pending" || *s == "running")
                        .map(|(c, _)| c.clone())
                        .collect()
                })
                .unwrap_or_default();
            if summary["partial"] == json!(false) && busy.is_empty() {
                break;
            }
            if waiting.elapsed() > Duration::from_secs(120) {
                anyhow::ensure!(
                    summary["partial"] == json!(false),
                    "no days after 120 s: {summary}"
                );
                for category in busy {
                    *unsettled.entry(category).or_default() += 1;
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let ready = waiting.elapsed();
    if !unsettled.is_empty() {
        println!("still computing after 120 s (trips by category): {unsettled:?}");
    }

    let url = format!("{base}/mcp");
    let mut riders = Vec::with_capacity(trips);
    let mut days = BTreeMap::<usize, usize>::new();
    let mut status = serde_json::Value::Null;
    for (id, token) in ids.iter().zip(&tokens) {
        let trip = mcp_call(
            &client,
            &url,
            token,
            "etappe-bench/setup",
            0,
            "get_trip",
            json!({"id": id}),
        )
        .await
        .map_err(|f| anyhow::anyhow!("get_trip {id}: {}: {}", f.kind, f.message))?;
        *days
            .entry(trip["stages"].as_array().map_or(0, Vec::len))
            .or_default() += 1;
        status = trip["categoryStatus"].clone();
        riders.push(McpTrip {
            token: token.clone(),
            id: id.clone(),
            stage: trip["stages"][0]["stageId"]
                .as_str()
                .with_context(|| format!("a day in {trip}"))?
                .to_owned(),
            version: tokio::sync::Mutex::new(trip["version"].as_u64().context("version")?),
        });
    }
    println!(
        "{trips} trips (one user each) with their days in {:.1} s; trips by number of days: \
         {days:?}; categoryStatus of the last: {status}",
        ready.as_secs_f64()
    );
    let riders = Arc::new(riders);
    // The budgets (60 calls, 20 changes a minute) count per token: one user and token per
    // trip keeps a run at the default rate well within them (each trip is read, then edited,
    // once a second); a faster run reports its refusals apart from the latencies.

    let (latencies, failures, elapsed) = open_loop(rate, seconds, |i| {
        let client = client.clone();
        let url = url.clone();
        let riders = Arc::clone(&riders);
        let agent = "etappe-bench/get_trip";
        async move {
            let rider = &riders[i as usize % riders.len()];
            let trip = mcp_call(
                &client,
                &url,
                &rider.token,
                agent,
                i,
                "get_trip",
                json!({"id": rider.id}),
            )
            .await?;
            if trip["partial"] != json!(false) {
                return Err(McpFailure::new("partial trip", trip.to_string()));
            }
            Ok(())
        }
    })
    .await?;
    report_failures(&failures);
    report(
        &format!("MCP get_trip on {backend} at {rate}/s over {trips} trips"),
        latencies,
        elapsed,
        failures.values().map(|(n, _)| n).sum(),
    );

    let (latencies, failures, elapsed) = open_loop(rate, seconds, |i| {
        let client = client.clone();
        let url = url.clone();
        let riders = Arc::clone(&riders);
        let agent = "etappe-bench/edit_stages";
        async move {
            let rider = &riders[i as usize % riders.len()];
            // One edit at a time per trip, each with the version the previous one answered.
            let mut version = rider.version.lock().await;
            let answer = mcp_call(
                &client,
                &url,
                &rider.token,
                agent,
                i,
                "edit_stages",
                json!({
                    "tripId": rider.id,
                    "version": *version,
                    "action": "update",
                    "stageId": rider.stage,
                    "label": format!("bench day {i}"),
                }),
            )
            .await;
            match answer {
                Ok(edited) => {
                    *version = edited["version"].as_u64().ok_or_else(|| {
                        McpFailure::new("no version in the answer", edited.to_string())
                    })?;
                    Ok(())
                }
                Err(failure) => {
                    if let Some(current) = current_version(&failure.message) {
                        *version = current;
                    }
                    Err(failure)
                }
            }
        }
    })
    .await?;
    report_failures(&failures);
    report(
        &format!("MCP edit_stages on {backend} at {rate}/s over {trips} trips"),
        latencies,
        elapsed,
        failures.values().map(|(n, _)| n).sum(),
    );
    // Every trip is at the version its last edit answered (no edit lost or doubled).
    let mut behind = 0;
    for rider in riders.iter() {
        let trip = mcp_call(
            &client,
            &url,
            &rider.token,
            "etappe-bench/check",
            0,
            "get_trip",
            json!({"id": rider.id}),
        )
        .await
        .map_err(|f| anyhow::anyhow!("get_trip {}: {}: {}", rider.id, f.kind, f.message))?;
        if trip["version"].as_u64() != Some(*rider.version.lock().await) {
            behind += 1;
        }
    }
    if behind > 0 {
        println!("{behind} trip(s) not at the version their last edit answered");
    }
    Ok(())
}
