//! `oauth`: latency of the token endpoint under load, open loop at a fixed rate: first
//! `authorization_code` exchanges (PKCE checked, the code consumed by a conditional UPDATE,
//! a grant checked, two tokens stored), then `refresh_token` rotations of the refresh tokens
//! those gave. The codes are issued beforehand through the application service (what the
//! consent's POST does), so only the token endpoint is measured. Rate limits are lifted:
//! the server is measured, not its budgets.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use etappe_app::authorization::{AuthorizeParams, s256};
use etappe_services::config::{BudgetSettings, Config, OAuthSettings};
use serde_json::json;

use crate::common::{choose_store, report, serve};
use etappe_tests::temp_dir;

const REDIRECT: &str = "http://127.0.0.1:47999/callback";

fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// Sends `bodies` to the token endpoint at `rate` a second; answers the latencies of the 200s,
/// the failures, the wall time, and the bodies of the answers in order.
async fn phase(
    client: &reqwest::Client,
    url: &str,
    rate: u64,
    bodies: Vec<String>,
) -> anyhow::Result<(
    Vec<Duration>,
    usize,
    Duration,
    Vec<Option<serde_json::Value>>,
)> {
    let started = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.into_iter().enumerate() {
        let due = started + Duration::from_secs_f64(i as f64 / rate as f64);
        tokio::time::sleep_until(due).await;
        let client = client.clone();
        let url = url.to_owned();
        tasks.push(tokio::spawn(async move {
            let answer = client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await;
            let value = match answer {
                Ok(r) if r.status().is_success() => r.json::<serde_json::Value>().await.ok(),
                _ => None,
            };
            (value, due.elapsed())
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut answers = Vec::new();
    for task in tasks {
        let (value, took) = task.await?;
        if value.is_some() {
            latencies.push(took);
        } else {
            errors += 1;
        }
        answers.push(value);
    }
    Ok((latencies, errors, started.elapsed(), answers))
}

/// Exchanges codes, then refreshes, at `rate` per second for `seconds` each.
pub async fn run(rate: u64, seconds: u64, sqlite: bool) -> anyhow::Result<()> {
    anyhow::ensure!(
        rate > 0 && seconds > 0,
        "--rate and --seconds must be positive"
    );
    let dir = temp_dir();
    let mut config = Config::embedded(dir.path().to_path_buf());
    config.db_max_connections = 32;
    config.budgets = BudgetSettings::unlimited();
    config.oauth = OAuthSettings::unlimited();
    let backend = choose_store(&mut config, sqlite);
    let (base, state) = serve(&config).await?;
    let auth = Arc::clone(state.authorization());
    let client_id = auth
        .register(&json!({"client_name": "bench", "redirect_uris": [REDIRECT]}))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?["client_id"]
        .as_str()
        .context("client id")?
        .to_owned();
    let count = usize::try_from(rate * seconds)?;
    let mut exchanges = Vec::with_capacity(count);
    for i in 0..count {
        let user = state
            .identity()
            .ensure_user(&format!("bench-{i}-{}@example.org", uuid::Uuid::now_v7()))
            .await?;
        let verifier = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let params = AuthorizeParams {
            response_type: Some("code".into()),
            client_id: Some(client_id.clone()),
            redirect_uri: Some(REDIRECT.into()),
            state: None,
            code_challenge: Some(s256(&verifier)),
            code_challenge_method: Some("S256".into()),
            scope: None,
            resource: None,
        };
        let request = auth
            .validate(&params, &base)
            .await
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let to = auth
            .approve(user, &request, &base)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let code = url::Url::parse(&to)?
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .context("code")?;
        exchanges.push(form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
        ]));
    }
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(60))
        .build()?;
    let url = format!("{base}/oauth/token");
    let (latencies, errors, elapsed, answers) = phase(&client, &url, rate, exchanges).await?;
    report(
        &format!("oauth token, authorization_code ({backend}, {rate}/s)"),
        latencies,
        elapsed,
        errors,
    );
    let refreshes: Vec<String> = answers
        .iter()
        .flatten()
        .filter_map(|a| a["refresh_token"].as_str())
        .map(|r| {
            form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", r),
                ("client_id", &client_id),
            ])
        })
        .collect();
    let (latencies, errors, elapsed, _) = phase(&client, &url, rate, refreshes).await?;
    report(
        &format!("oauth token, refresh_token ({backend}, {rate}/s)"),
        latencies,
        elapsed,
        errors,
    );
    Ok(())
}
