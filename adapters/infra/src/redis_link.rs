//! The one handle on Redis a process holds, for everything kept there: live progress, the
//! upstreams' response cache and pace, the API's budgets and MCP confirmations. A connection
//! opened on first use and kept, every call bounded by a deadline, and after a failure a rest
//! of a few seconds during which callers decide without Redis — so a Redis that is down costs
//! one slow call, not every call. Subscribers open their own pub/sub connection from the same
//! client.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;

/// How long a Redis round trip may take before the caller decides without it.
pub const REDIS_TIMEOUT: Duration = Duration::from_millis(500);
/// After a failure, how long Redis is not asked again.
pub const REDIS_BACKOFF: Duration = Duration::from_secs(5);

/// A lazily opened, failure-resting Redis connection.
pub struct RedisLink {
    client: redis::Client,
    connection: tokio::sync::Mutex<Option<ConnectionManager>>,
    /// Set after a failure: until then, Redis is not asked.
    down_until: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for RedisLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLink").finish_non_exhaustive()
    }
}

impl RedisLink {
    /// The process's link to `url`, shared by its users; `None` when none is configured (or
    /// it does not parse).
    pub fn open(url: Option<&str>) -> Option<Arc<Self>> {
        Self::new(url).map(Arc::new)
    }

    /// A link to `url`, or `None` when none is configured (or it does not parse).
    pub fn new(url: Option<&str>) -> Option<Self> {
        let client = redis::Client::open(url.filter(|u| !u.is_empty())?).ok()?;
        Some(Self {
            client,
            connection: tokio::sync::Mutex::new(None),
            down_until: Mutex::new(None),
        })
    }

    /// The client, for a connection of its own (a pub/sub subscription).
    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    fn failed(&self, error: String) -> String {
        if let Ok(mut down) = self.down_until.lock() {
            *down = Some(Instant::now() + REDIS_BACKOFF);
        }
        error
    }

    /// The connection, opened if needed; an error (and a rest) when Redis does not answer.
    /// During a rest it fails at once: for callers on a request's path (budgets,
    /// confirmations), which decide without Redis rather than wait.
    pub async fn connection(&self) -> Result<ConnectionManager, String> {
        let resting = self
            .down_until
            .lock()
            .ok()
            .and_then(|d| *d)
            .is_some_and(|until| Instant::now() < until);
        if resting {
            return Err(format!(
                "failed less than {} s ago",
                REDIS_BACKOFF.as_secs()
            ));
        }
        self.connection_now().await
    }

    /// The connection, opened now if needed whatever an earlier failure: for work off the
    /// request path (progress), which must resume as soon as Redis does.
    pub async fn connection_now(&self) -> Result<ConnectionManager, String> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let manager =
            tokio::time::timeout(Duration::from_secs(2), self.client.get_connection_manager())
                .await
                .map_err(|_| self.failed("no connection within 2s".to_owned()))?
                .map_err(|e| self.failed(e.to_string()))?;
        *slot = Some(manager.clone());
        if let Ok(mut down) = self.down_until.lock() {
            *down = None;
        }
        Ok(manager)
    }

    /// Runs one Redis call within [`REDIS_TIMEOUT`]; a failure starts a rest.
    pub async fn bounded<T>(
        &self,
        future: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, String> {
        tokio::time::timeout(REDIS_TIMEOUT, future)
            .await
            .map_err(|_| self.failed(format!("no answer within {} ms", REDIS_TIMEOUT.as_millis())))?
            .map_err(|e| self.failed(e.to_string()))
    }
}
