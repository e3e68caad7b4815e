//! The readiness document both binaries answer on `/readyz`: each check by name with what it
//! found, ready only when every check passed, and how each upstream is (reported, never
//! required: a job without one falls back to the embedded default or records the category
//! as unavailable). Written once, so an operator reads the same shape from the API and from
//! a worker.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use serde_json::{Map, Value, json};

/// How long a check waits for its server before calling it down.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// One check: its name, whether it passed, and what it found in words.
#[derive(Clone, Debug)]
pub struct Check {
    pub name: &'static str,
    pub passed: bool,
    pub found: String,
}

impl Check {
    /// A server asked within [`CHECK_TIMEOUT`]: `up` (with `detail` of its answer) when it
    /// answered, `down: …` when it failed or kept silent.
    pub async fn server<T, E: Display>(
        name: &'static str,
        asked: impl Future<Output = Result<T, E>>,
        detail: impl FnOnce(T) -> String,
    ) -> Self {
        let (passed, found) = match tokio::time::timeout(CHECK_TIMEOUT, asked).await {
            Ok(Ok(answer)) => (true, detail(answer)),
            Ok(Err(e)) => (false, format!("down: {e}")),
            Err(_) => (
                false,
                format!("down: no answer within {}s", CHECK_TIMEOUT.as_secs()),
            ),
        };
        Self {
            name,
            passed,
            found,
        }
    }
}

/// The document: whether the process is ready, and its JSON.
pub fn document(checks: &[Check], upstreams: &Value) -> (bool, Value) {
    let ready = checks.iter().all(|c| c.passed);
    let found: Map<String, Value> = checks
        .iter()
        .map(|c| (c.name.to_owned(), json!(c.found)))
        .collect();
    (
        ready,
        json!({
            "status": if ready { "ready" } else { "unready" },
            "checks": found,
            "upstreams": upstreams,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ready_only_when_every_check_passed() {
        let up = Check::server("database", async { Ok::<_, String>(()) }, |()| "up".into()).await;
        let down = Check::server("queue", async { Err::<u64, _>("refused") }, |n| {
            n.to_string()
        })
        .await;
        let (ready, doc) = document(std::slice::from_ref(&up), &json!({}));
        assert!(ready);
        assert_eq!(doc["checks"]["database"], "up");
        let (ready, doc) = document(&[up, down], &json!({"nominatim": "up"}));
        assert!(!ready);
        assert_eq!(doc["status"], "unready");
        assert_eq!(doc["checks"]["queue"], "down: refused");
        assert_eq!(doc["upstreams"]["nominatim"], "up");
    }
}
