//! What the agent surface keeps between calls: the per-user-and-client rate limits (60 calls
//! and 20 mutations a minute) and the confirmation tokens (random, single use, 5 minutes,
//! bound to the exact canonical arguments).
//!
//! `/mcp` is stateless so that any API replica answers any call; what the guards keep must be
//! shared the same way. With Redis configured, both live there: a sliding window per user and
//! client (a sorted set, checked and counted in one script), and a token per key read and
//! deleted at once (`GETDEL`), so a token minted on one replica is redeemed on another,
//! exactly once. Without Redis (one process), they live in memory. If Redis stops answering,
//! the guards fall back to memory and say so in the log: limits then hold per replica and a
//! confirmation must come back to the replica that minted it — degraded, never refused.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use sha2::{Digest, Sha256};

/// Calls a user and client may make in a minute.
pub const CALLS_PER_MINUTE: usize = 60;
/// Mutating calls a user and client may make in a minute.
pub const MUTATIONS_PER_MINUTE: usize = 20;
/// How long a confirmation token is valid.
pub const CONFIRMATION_TTL: Duration = Duration::from_secs(300);
const WINDOW: Duration = Duration::from_secs(60);
/// How many callers the in-memory windows hold before the quiet ones are forgotten.
const PRUNE_AT: usize = 4_096;
/// How long a Redis round trip may take before the guards decide without it.
const REDIS_TIMEOUT: Duration = Duration::from_millis(500);
/// After a Redis failure, how long calls decide without asking it again (so a Redis that is
/// down costs one slow call, not every call).
const REDIS_BACKOFF: Duration = Duration::from_secs(5);

/// The rate limits and pending confirmations.
#[derive(Default)]
pub struct Guards {
    memory: MemoryGuards,
    redis: Option<RedisGuards>,
}

impl std::fmt::Debug for Guards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guards")
            .field("shared", &self.redis.is_some())
            .finish_non_exhaustive()
    }
}

/// The key of one user and client: hashed, so that any User-Agent makes a short, safe key.
fn caller_key(principal: &crate::identity::Principal, client: &str) -> String {
    let digest = Sha256::digest(format!("{}|{client}", principal.user_id).as_bytes());
    hex::encode(&digest[..12])
}

fn refusal(limit: usize, what: &str, retry_secs: u64) -> String {
    format!("rate_limited: {limit} {what} a minute. Retry in {retry_secs} seconds.")
}

impl Guards {
    /// Guards shared through Redis when `redis_url` is set (keys under `{prefix}:mcp:`).
    pub fn new(redis_url: Option<&str>, prefix: &str) -> Self {
        let redis = redis_url
            .filter(|u| !u.is_empty())
            .and_then(|u| redis::Client::open(u).ok())
            .map(|client| RedisGuards {
                client,
                connection: tokio::sync::Mutex::new(None),
                down_until: Mutex::new(None),
                prefix: format!("{prefix}:mcp"),
            });
        Self {
            memory: MemoryGuards::default(),
            redis,
        }
    }

    /// Counts a call; refuses it (with when to retry) over the budget.
    pub async fn admit(
        &self,
        principal: &crate::identity::Principal,
        client: &str,
        mutates: bool,
    ) -> Result<(), String> {
        let key = caller_key(principal, client);
        if let Some(redis) = &self.redis {
            match redis.admit(&key, mutates).await {
                Ok(verdict) => return verdict,
                Err(e) => {
                    tracing::warn!(error = %e, "rate limits: Redis does not answer; counting in this replica");
                }
            }
        }
        self.memory.admit(&key, mutates)
    }

    /// Mints a token for `binding` (the digest of user, client, tool and canonical arguments).
    pub async fn mint(&self, binding: &str) -> String {
        let token = hex::encode(rand::random::<[u8; 16]>());
        if let Some(redis) = &self.redis {
            match redis.put(&token, binding).await {
                Ok(()) => return token,
                Err(e) => {
                    tracing::warn!(error = %e, "confirmations: Redis does not answer; keeping the token in this replica");
                }
            }
        }
        self.memory.put(&token, binding);
        token
    }

    /// Consumes `token` (even on a mismatch) and says whether it was minted for `binding`
    /// less than five minutes ago.
    pub async fn redeem(&self, token: &str, binding: &str) -> bool {
        let shared = match &self.redis {
            Some(redis) => redis.take(token).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "confirmations: Redis does not answer; looking in this replica");
                None
            }),
            None => None,
        };
        match shared.or_else(|| self.memory.take(token)) {
            Some(bound) => bound == binding,
            None => false,
        }
    }
}

/// One process's guards.
#[derive(Debug, Default)]
struct MemoryGuards {
    windows: Mutex<HashMap<String, Windows>>,
    confirmations: Mutex<HashMap<String, (String, Instant)>>,
}

#[derive(Debug, Default)]
struct Windows {
    calls: VecDeque<Instant>,
    mutations: VecDeque<Instant>,
}

fn trim(window: &mut VecDeque<Instant>, now: Instant) {
    while window
        .front()
        .is_some_and(|t| now.duration_since(*t) >= WINDOW)
    {
        window.pop_front();
    }
}

impl MemoryGuards {
    fn admit(&self, key: &str, mutates: bool) -> Result<(), String> {
        let now = Instant::now();
        let Ok(mut all) = self.windows.lock() else {
            return Ok(());
        };
        if all.len() >= PRUNE_AT {
            // Callers quiet for a minute have nothing left to count: forget them.
            all.retain(|_, w| {
                w.calls
                    .back()
                    .is_some_and(|t| now.duration_since(*t) < WINDOW)
            });
        }
        let windows = all.entry(key.to_owned()).or_default();
        trim(&mut windows.calls, now);
        trim(&mut windows.mutations, now);
        let retry = |window: &VecDeque<Instant>| {
            window
                .front()
                .map_or(60, |t| 60 - now.duration_since(*t).as_secs().min(59))
        };
        if windows.calls.len() >= CALLS_PER_MINUTE {
            return Err(refusal(CALLS_PER_MINUTE, "calls", retry(&windows.calls)));
        }
        if mutates && windows.mutations.len() >= MUTATIONS_PER_MINUTE {
            return Err(refusal(
                MUTATIONS_PER_MINUTE,
                "changes",
                retry(&windows.mutations),
            ));
        }
        windows.calls.push_back(now);
        if mutates {
            windows.mutations.push_back(now);
        }
        Ok(())
    }

    fn put(&self, token: &str, binding: &str) {
        if let Ok(mut pending) = self.confirmations.lock() {
            let now = Instant::now();
            pending.retain(|_, (_, at)| now.duration_since(*at) < CONFIRMATION_TTL);
            pending.insert(token.to_owned(), (binding.to_owned(), now));
        }
    }

    fn take(&self, token: &str) -> Option<String> {
        let mut pending = self.confirmations.lock().ok()?;
        pending
            .remove(token)
            .filter(|(_, at)| at.elapsed() < CONFIRMATION_TTL)
            .map(|(bound, _)| bound)
    }
}

/// The guards of every replica, in Redis.
struct RedisGuards {
    client: redis::Client,
    connection: tokio::sync::Mutex<Option<ConnectionManager>>,
    /// Set after a failure: until then, Redis is not asked.
    down_until: Mutex<Option<Instant>>,
    prefix: String,
}

/// Trims both windows, refuses over a budget (answering the oldest entry's time, from
/// which the retry delay follows), else counts the call. One script, so that two replicas
/// admitting at the same instant cannot both take the last slot.
const ADMIT_SCRIPT: &str = r"
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return {1, tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])}
end
if ARGV[5] == '1' then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
    return {2, tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])}
  end
  redis.call('ZADD', KEYS[2], now, ARGV[6])
  redis.call('PEXPIRE', KEYS[2], window)
end
redis.call('ZADD', KEYS[1], now, ARGV[6])
redis.call('PEXPIRE', KEYS[1], window)
return {0, 0}
";

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl RedisGuards {
    fn resting(&self) -> bool {
        self.down_until
            .lock()
            .ok()
            .and_then(|d| *d)
            .is_some_and(|until| Instant::now() < until)
    }

    fn failed(&self, error: String) -> String {
        if let Ok(mut down) = self.down_until.lock() {
            *down = Some(Instant::now() + REDIS_BACKOFF);
        }
        error
    }

    async fn connection(&self) -> Result<ConnectionManager, String> {
        if self.resting() {
            return Err(format!(
                "failed less than {} s ago",
                REDIS_BACKOFF.as_secs()
            ));
        }
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
        Ok(manager)
    }

    async fn bounded<T>(
        &self,
        future: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, String> {
        tokio::time::timeout(REDIS_TIMEOUT, future)
            .await
            .map_err(|_| self.failed(format!("no answer within {} ms", REDIS_TIMEOUT.as_millis())))?
            .map_err(|e| self.failed(e.to_string()))
    }

    async fn admit(&self, key: &str, mutates: bool) -> Result<Result<(), String>, String> {
        let mut connection = self.connection().await?;
        let now = now_ms();
        let window = u64::try_from(WINDOW.as_millis()).unwrap_or(60_000);
        let member = format!("{now}-{}", hex::encode(rand::random::<[u8; 6]>()));
        let script = redis::Script::new(ADMIT_SCRIPT);
        let mut invocation = script.prepare_invoke();
        invocation
            .key(format!("{}:calls:{key}", self.prefix))
            .key(format!("{}:mutations:{key}", self.prefix))
            .arg(now)
            .arg(window)
            .arg(CALLS_PER_MINUTE)
            .arg(MUTATIONS_PER_MINUTE)
            .arg(if mutates { "1" } else { "0" })
            .arg(member);
        let (verdict, oldest): (u8, u64) = self
            .bounded(invocation.invoke_async(&mut connection))
            .await?;
        let retry = (oldest + window)
            .saturating_sub(now)
            .div_ceil(1000)
            .clamp(1, 60);
        Ok(match verdict {
            0 => Ok(()),
            1 => Err(refusal(CALLS_PER_MINUTE, "calls", retry)),
            _ => Err(refusal(MUTATIONS_PER_MINUTE, "changes", retry)),
        })
    }

    async fn put(&self, token: &str, binding: &str) -> Result<(), String> {
        let mut connection = self.connection().await?;
        let key = format!("{}:confirm:{token}", self.prefix);
        self.bounded(connection.set_ex::<_, _, ()>(key, binding, CONFIRMATION_TTL.as_secs()))
            .await
    }

    async fn take(&self, token: &str) -> Result<Option<String>, String> {
        let mut connection = self.connection().await?;
        let key = format!("{}:confirm:{token}", self.prefix);
        self.bounded(connection.get_del::<_, Option<String>>(key))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{Principal, Scope};

    fn principal() -> Principal {
        Principal {
            user_id: etappe_events::ids::UserId(uuid::Uuid::now_v7()),
            scopes: Scope::ALL.to_vec(),
        }
    }

    /// Two replicas' guards on the same Redis (a prefix of this test alone).
    fn replicas() -> Option<(Guards, Guards)> {
        let Some(url) = std::env::var("REDIS_URL").ok().filter(|u| !u.is_empty()) else {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but REDIS_URL is not set"
            );
            eprintln!("skipped: set REDIS_URL to run the shared guards on Redis");
            return None;
        };
        let prefix = format!("etappe-test-{}", uuid::Uuid::now_v7().simple());
        Some((
            Guards::new(Some(&url), &prefix),
            Guards::new(Some(&url), &prefix),
        ))
    }

    async fn budgets_hold_per_user_and_client(a: &Guards, b: &Guards) {
        let alice = principal();
        for i in 0..MUTATIONS_PER_MINUTE {
            let replica = if i % 2 == 0 { a } else { b };
            assert!(replica.admit(&alice, "agent", true).await.is_ok(), "{i}");
        }
        let refused = b.admit(&alice, "agent", true).await;
        assert!(
            refused.as_ref().is_err_and(|m| m.contains("Retry in")),
            "{refused:?}"
        );
        // Reads still pass until the call budget is spent; another client has its own.
        for _ in MUTATIONS_PER_MINUTE..CALLS_PER_MINUTE {
            assert!(a.admit(&alice, "agent", false).await.is_ok());
        }
        assert!(b.admit(&alice, "agent", false).await.is_err());
        assert!(a.admit(&alice, "other client", true).await.is_ok());
        assert!(b.admit(&principal(), "agent", true).await.is_ok());
    }

    async fn a_token_is_single_use_and_bound_to_its_arguments(a: &Guards, b: &Guards) {
        let token = a.mint("delete:a").await;
        assert!(!b.redeem(&token, "delete:b").await, "other arguments");
        assert!(
            !a.redeem(&token, "delete:a").await,
            "consumed by the mismatch"
        );
        let token = a.mint("delete:a").await;
        assert!(
            b.redeem(&token, "delete:a").await,
            "redeemed on another replica"
        );
        assert!(!a.redeem(&token, "delete:a").await, "single use");
        assert_ne!(a.mint("x").await, a.mint("x").await, "random, not derived");
    }

    #[tokio::test]
    async fn in_one_process_the_budgets_and_tokens_hold() {
        let guards = Guards::default();
        budgets_hold_per_user_and_client(&guards, &guards).await;
        a_token_is_single_use_and_bound_to_its_arguments(&guards, &guards).await;
    }

    #[tokio::test]
    async fn across_replicas_sharing_redis_the_budgets_and_tokens_hold() {
        let Some((a, b)) = replicas() else { return };
        budgets_hold_per_user_and_client(&a, &b).await;
        a_token_is_single_use_and_bound_to_its_arguments(&a, &b).await;
    }

    #[test]
    fn callers_quiet_for_a_minute_are_forgotten() {
        let memory = MemoryGuards::default();
        let long_ago = Instant::now()
            .checked_sub(WINDOW + Duration::from_secs(1))
            .expect("a minute ago");
        if let Ok(mut all) = memory.windows.lock() {
            for i in 0..PRUNE_AT {
                all.entry(format!("quiet {i}"))
                    .or_default()
                    .calls
                    .push_back(long_ago);
            }
        }
        assert!(memory.admit("busy", false).is_ok());
        let left = memory.windows.lock().map(|a| a.len()).unwrap_or_default();
        assert_eq!(left, 1, "only the caller of this minute is kept");
    }

    #[tokio::test]
    async fn with_redis_down_the_guards_fall_back_to_this_replica() {
        let guards = Guards::new(Some("redis://127.0.0.1:1"), "etappe-test");
        let alice = principal();
        assert!(guards.admit(&alice, "agent", true).await.is_ok());
        let token = guards.mint("delete:a").await;
        assert!(guards.redeem(&token, "delete:a").await);
    }
}
