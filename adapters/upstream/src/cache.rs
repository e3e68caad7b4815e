//! Response caching behind a small trait, so the application can plug in a
//! shared store (Redis) while tests and single-node setups use memory.
//!
//! The trait cannot fail by design: a cache that is down or full must cost a
//! slower answer, never a failed request.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use etappe_infra::redis_link::RedisLink;
use redis::AsyncCommands;
use tokio::time::Instant;

#[async_trait]
pub trait ResponseCache: Send + Sync {
    /// The stored value, or `None` when absent, expired or unreadable.
    async fn get(&self, key: &str) -> Option<String>;
    /// Stores `value` for `ttl`; failures are logged by the implementation and swallowed.
    async fn put(&self, key: &str, value: &str, ttl: Duration);
}

/// A cache that keeps nothing: for deployments that want no caching at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCache;

#[async_trait]
impl ResponseCache for NoCache {
    async fn get(&self, _key: &str) -> Option<String> {
        None
    }
    async fn put(&self, _key: &str, _value: &str, _ttl: Duration) {}
}

/// An in-process cache with at most `capacity` entries. When full, expired
/// entries go first, then the oldest stored.
#[derive(Debug)]
pub struct MemoryCache {
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Insertion sequence number -> key, so the oldest entry is found without a scan.
    by_age: BTreeMap<u64, String>,
    next_sequence: u64,
}

#[derive(Debug)]
struct Entry {
    value: String,
    expires_at: Instant,
    sequence: u64,
}

impl MemoryCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            state: Mutex::new(State::default()),
        }
    }

    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A poisoned lock only means another thread panicked mid-update; the map
    /// is still consistent enough for a cache, and refusing service is worse.
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn remove(&mut self, key: &str) {
        if let Some(entry) = self.entries.remove(key) {
            self.by_age.remove(&entry.sequence);
        }
    }

    fn remove_expired(&mut self, now: Instant) {
        let expired: Vec<String> = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.expires_at <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in expired {
            self.remove(&key);
        }
    }

    fn remove_oldest(&mut self) {
        if let Some((_, key)) = self.by_age.pop_first() {
            self.entries.remove(&key);
        }
    }
}

#[async_trait]
impl ResponseCache for MemoryCache {
    async fn get(&self, key: &str) -> Option<String> {
        let mut state = self.lock();
        let entry = state.entries.get(key)?;
        if entry.expires_at <= Instant::now() {
            state.remove(key);
            return None;
        }
        Some(entry.value.clone())
    }

    async fn put(&self, key: &str, value: &str, ttl: Duration) {
        if self.capacity == 0 || ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let Some(expires_at) = now.checked_add(ttl) else {
            return;
        };
        let mut state = self.lock();
        state.remove(key);
        if state.entries.len() >= self.capacity {
            state.remove_expired(now);
        }
        while state.entries.len() >= self.capacity {
            state.remove_oldest();
        }
        let sequence = state.next_sequence;
        state.next_sequence += 1;
        state.by_age.insert(sequence, key.to_owned());
        state.entries.insert(
            key.to_owned(),
            Entry {
                value: value.to_owned(),
                expires_at,
                sequence,
            },
        );
    }
}

/// Reads and decodes a cached value; an undecodable entry (say, written by
/// an older version) is a miss, not an error.
pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
    cache: &dyn ResponseCache,
    key: &str,
) -> Option<T> {
    let raw = cache.get(key).await?;
    match serde_json::from_str(&raw) {
        Ok(value) => Some(value),
        Err(error) => {
            tracing::debug!(key, %error, "ignoring undecodable cache entry");
            None
        }
    }
}

pub(crate) async fn put_json<T: serde::Serialize>(
    cache: &dyn ResponseCache,
    key: &str,
    value: &T,
    ttl: Duration,
) {
    match serde_json::to_string(value) {
        Ok(raw) => cache.put(key, &raw, ttl).await,
        Err(error) => tracing::debug!(key, %error, "not caching unserialisable value"),
    }
}

/// Upstream answers in Redis, with their TTL. A Redis failure is a cache miss, never an
/// error: the upstream is asked instead.
#[derive(Debug)]
pub struct RedisCache {
    redis: Arc<RedisLink>,
    prefix: String,
}

impl RedisCache {
    /// Answers kept under `prefix` (each key is the prefix and the answer's own key).
    pub fn new(redis: Arc<RedisLink>, prefix: String) -> Self {
        Self { redis, prefix }
    }
}

#[async_trait]
impl ResponseCache for RedisCache {
    async fn get(&self, key: &str) -> Option<String> {
        let mut connection = self.redis.connection().await.ok()?;
        let key = format!("{}{key}", self.prefix);
        tokio::time::timeout(
            Duration::from_secs(1),
            connection.get::<_, Option<String>>(key),
        )
        .await
        .ok()?
        .ok()?
    }

    async fn put(&self, key: &str, value: &str, ttl: Duration) {
        let Ok(mut connection) = self.redis.connection().await else {
            return;
        };
        let key = format!("{}{key}", self.prefix);
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            connection.set_ex::<_, _, ()>(key, value, ttl.as_secs().max(1)),
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn returns_what_was_stored() {
        let cache = MemoryCache::new(4);
        assert_eq!(cache.get("a").await, None);
        cache.put("a", "1", HOUR).await;
        cache.put("a", "2", HOUR).await;
        assert_eq!(cache.get("a").await.as_deref(), Some("2"));
        assert_eq!(cache.len(), 1);
    }

    #[tokio::test]
    async fn honours_the_ttl() {
        let cache = MemoryCache::new(4);
        cache.put("short", "x", Duration::from_millis(30)).await;
        cache.put("long", "y", HOUR).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(cache.get("short").await, None);
        assert_eq!(cache.get("long").await.as_deref(), Some("y"));
    }

    #[tokio::test]
    async fn evicts_the_oldest_when_full() {
        let cache = MemoryCache::new(2);
        cache.put("first", "1", HOUR).await;
        cache.put("second", "2", HOUR).await;
        cache.put("third", "3", HOUR).await;
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("first").await, None);
        assert_eq!(cache.get("third").await.as_deref(), Some("3"));
    }

    #[tokio::test]
    async fn evicts_expired_entries_before_live_ones() {
        let cache = MemoryCache::new(2);
        cache.put("old-but-live", "1", HOUR).await;
        cache
            .put("young-but-expired", "2", Duration::from_millis(10))
            .await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        cache.put("new", "3", HOUR).await;
        assert_eq!(cache.get("old-but-live").await.as_deref(), Some("1"));
        assert_eq!(cache.get("new").await.as_deref(), Some("3"));
    }

    #[tokio::test]
    async fn undecodable_entries_are_misses() {
        let cache = MemoryCache::new(2);
        cache.put("k", "{not json", HOUR).await;
        assert_eq!(get_json::<Vec<u8>>(&cache, "k").await, None);
        put_json(&cache, "k", &vec![1u8, 2], HOUR).await;
        assert_eq!(get_json::<Vec<u8>>(&cache, "k").await, Some(vec![1, 2]));
    }
}
