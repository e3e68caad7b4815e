//! A global pacing of request starts, shared by every caller of one upstream
//! (public Nominatim allows at most one request per second per application).
//!
//! Within a process, callers take turns on a local schedule. Across processes
//! (several API replicas), a [`SharedPace`] — Redis in production — holds the
//! one slot all replicas compete for, so the application as a whole keeps the
//! pace however many replicas run.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use etappe_infra::redis_link::RedisLink;
use tokio::sync::Mutex;
use tokio::time::{Instant, sleep, sleep_until};

/// The answer of a shared schedule to a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// The caller holds the slot: it may start its request now.
    Granted,
    /// Another process holds the slot for this much longer.
    Wait(Duration),
    /// The shared store does not answer: pace locally only (a degraded, not a
    /// failed, search: the local schedule still spaces this process's calls).
    Unavailable,
}

/// A request-start slot shared between processes.
#[async_trait]
pub trait SharedPace: Send + Sync + Debug {
    /// Claims the slot for `interval` if nobody holds it.
    async fn claim(&self, interval: Duration) -> Claim;
}

/// Spaces request starts at least `min_interval` apart. Clones share the
/// schedule. Callers are served in arrival order because tokio's mutex is
/// fair and each caller reserves its slot before sleeping.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    min_interval: Duration,
    next_free_slot: Arc<Mutex<Option<Instant>>>,
    shared: Option<Arc<dyn SharedPace>>,
}

impl RateLimiter {
    pub fn new(min_interval: Duration) -> Self {
        Self {
            min_interval,
            next_free_slot: Arc::new(Mutex::new(None)),
            shared: None,
        }
    }

    /// The same pace, held together with every other process using `shared`.
    pub fn shared_with(mut self, shared: Arc<dyn SharedPace>) -> Self {
        self.shared = Some(shared);
        self
    }

    /// The usage policy of the public Nominatim instance.
    pub fn nominatim_public() -> Self {
        Self::new(Duration::from_secs(1))
    }

    pub fn min_interval(&self) -> Duration {
        self.min_interval
    }

    /// Waits until the caller may start one request. The lock is held only to
    /// reserve the slot, so waiting callers don't block each other's bookkeeping.
    /// A caller cancelled while sleeping forfeits its slot; the schedule stays
    /// conservative rather than letting two requests start too close together.
    pub async fn acquire(&self) {
        let slot = {
            let mut next_free = self.next_free_slot.lock().await;
            let now = Instant::now();
            let slot = next_free.map_or(now, |next| next.max(now));
            *next_free = Some(slot + self.min_interval);
            slot
        };
        sleep_until(slot).await;
        let Some(shared) = &self.shared else {
            return;
        };
        loop {
            match shared.claim(self.min_interval).await {
                Claim::Granted => return,
                Claim::Wait(rest) => sleep(rest.max(Duration::from_millis(1))).await,
                Claim::Unavailable => {
                    tracing::warn!(
                        "the shared request pace does not answer; pacing this process alone"
                    );
                    return;
                }
            }
        }
    }
}

/// The geocoder's one request slot, shared by every replica: `SET key NX PX interval`
/// grants it to one caller at a time; the others wait out the key's remaining life.
pub struct RedisPace {
    redis: Arc<RedisLink>,
    key: String,
}

impl RedisPace {
    /// The slot held under `key`.
    pub fn new(redis: Arc<RedisLink>, key: String) -> Self {
        Self { redis, key }
    }

    /// The slot of another upstream on the same Redis (`…:pace:<name>`), so the router's pace
    /// and the geocoder's never hold each other up.
    pub fn named(&self, name: &str) -> Self {
        let base = self
            .key
            .rsplit_once(':')
            .map_or(self.key.as_str(), |(base, _)| base);
        Self {
            redis: Arc::clone(&self.redis),
            key: format!("{base}:{name}"),
        }
    }
}

impl std::fmt::Debug for RedisPace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisPace")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl SharedPace for RedisPace {
    async fn claim(&self, interval: Duration) -> Claim {
        let Ok(mut connection) = self.redis.connection().await else {
            return Claim::Unavailable;
        };
        let millis = u64::try_from(interval.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let claim = async {
            let set: Option<String> = redis::cmd("SET")
                .arg(&self.key)
                .arg(1)
                .arg("NX")
                .arg("PX")
                .arg(millis)
                .query_async(&mut connection)
                .await?;
            if set.is_some() {
                return Ok::<_, redis::RedisError>(Claim::Granted);
            }
            let rest: i64 = redis::cmd("PTTL")
                .arg(&self.key)
                .query_async(&mut connection)
                .await?;
            // -2: expired in between; -1: a key without expiry (never ours): retry shortly.
            Ok(Claim::Wait(Duration::from_millis(
                u64::try_from(rest).unwrap_or(1).clamp(1, millis),
            )))
        };
        match tokio::time::timeout(Duration::from_secs(1), claim).await {
            Ok(Ok(claim)) => claim,
            _ => Claim::Unavailable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When each of `limiters` got its slot, all asking at once, in order.
    async fn starts_of(limiters: impl Iterator<Item = RateLimiter>) -> Vec<Instant> {
        let tasks: Vec<_> = limiters
            .map(|limiter| {
                tokio::spawn(async move {
                    limiter.acquire().await;
                    Instant::now()
                })
            })
            .collect();
        let mut starts = Vec::new();
        for task in tasks {
            starts.push(task.await.expect("task"));
        }
        starts.sort();
        starts
    }

    #[tokio::test]
    async fn spaces_concurrent_callers_by_the_interval() {
        let limiter = RateLimiter::new(Duration::from_millis(40));
        let started = Instant::now();
        let starts = starts_of((0..5).map(|_| limiter.clone())).await;
        // Each time is read when its task runs again after its slot, so a loaded machine can
        // read one late and bring it nearer the next; the slots themselves are 40 ms apart,
        // which no caller can undercut by half, and five callers span at least four slots
        // less that lateness.
        for pair in starts.windows(2) {
            assert!(pair[1] - pair[0] >= Duration::from_millis(20), "{pair:?}");
        }
        assert!(
            starts[4] - starts[0] >= Duration::from_millis(140),
            "{starts:?}"
        );
        assert!(
            starts[0] - started < Duration::from_millis(30),
            "first caller must not wait"
        );
    }

    /// A slot held in memory, as Redis holds it for replicas: `SET NX PX`.
    #[derive(Debug, Default)]
    struct SlotInMemory(std::sync::Mutex<Option<Instant>>);

    #[async_trait]
    impl SharedPace for SlotInMemory {
        async fn claim(&self, interval: Duration) -> Claim {
            let mut held = self.0.lock().expect("slot");
            let now = Instant::now();
            match *held {
                Some(until) if until > now => Claim::Wait(until - now),
                _ => {
                    *held = Some(now + interval);
                    Claim::Granted
                }
            }
        }
    }

    #[tokio::test]
    async fn two_processes_sharing_a_slot_keep_the_pace_together() {
        let slot: Arc<dyn SharedPace> = Arc::new(SlotInMemory::default());
        let interval = Duration::from_millis(40);
        let replicas = [
            RateLimiter::new(interval).shared_with(Arc::clone(&slot)),
            RateLimiter::new(interval).shared_with(Arc::clone(&slot)),
        ];
        let starts = starts_of((0..6).map(|i| replicas[i % 2].clone())).await;
        for pair in starts.windows(2) {
            assert!(pair[1] - pair[0] >= Duration::from_millis(38), "{pair:?}");
        }
    }

    #[derive(Debug)]
    struct Down;

    #[async_trait]
    impl SharedPace for Down {
        async fn claim(&self, _interval: Duration) -> Claim {
            Claim::Unavailable
        }
    }

    #[tokio::test]
    async fn a_shared_pace_that_is_down_leaves_the_local_pace() {
        let limiter = RateLimiter::new(Duration::from_millis(30)).shared_with(Arc::new(Down));
        let started = Instant::now();
        limiter.acquire().await;
        limiter.acquire().await;
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(28), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(500), "{elapsed:?}");
    }

    #[tokio::test]
    async fn an_idle_limiter_does_not_delay() {
        let limiter = RateLimiter::new(Duration::from_millis(50));
        limiter.acquire().await;
        tokio::time::sleep(Duration::from_millis(60)).await;
        let before = Instant::now();
        limiter.acquire().await;
        assert!(before.elapsed() < Duration::from_millis(20));
    }

    #[tokio::test]
    async fn serves_callers_in_arrival_order() {
        let limiter = RateLimiter::new(Duration::from_millis(20));
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for caller in 0..4 {
            let (limiter, order) = (limiter.clone(), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                limiter.acquire().await;
                order.lock().await.push(caller);
            }));
            // Let this caller reach the queue before the next one is spawned.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for task in tasks {
            task.await.expect("task");
        }
        assert_eq!(*order.lock().await, [0, 1, 2, 3]);
    }
}
