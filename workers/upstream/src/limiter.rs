//! A global pacing of request starts, shared by every caller of one upstream
//! (public Nominatim allows at most one request per second per application).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::{Instant, sleep_until};

/// Spaces request starts at least `min_interval` apart. Clones share the
/// schedule. Callers are served in arrival order because tokio's mutex is
/// fair and each caller reserves its slot before sleeping.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    min_interval: Duration,
    next_free_slot: Arc<Mutex<Option<Instant>>>,
}

impl RateLimiter {
    pub fn new(min_interval: Duration) -> Self {
        Self {
            min_interval,
            next_free_slot: Arc::new(Mutex::new(None)),
        }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn spaces_concurrent_callers_by_the_interval() {
        let limiter = RateLimiter::new(Duration::from_millis(40));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..5 {
            let limiter = limiter.clone();
            tasks.push(tokio::spawn(async move {
                limiter.acquire().await;
                Instant::now()
            }));
        }
        let mut starts = Vec::new();
        for task in tasks {
            starts.push(task.await.expect("task"));
        }
        starts.sort();
        for pair in starts.windows(2) {
            assert!(pair[1] - pair[0] >= Duration::from_millis(38), "{pair:?}");
        }
        assert!(
            starts[0] - started < Duration::from_millis(30),
            "first caller must not wait"
        );
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
