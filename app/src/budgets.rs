//! Request budgets: how many calls of a kind one caller may make in a minute, counted in a
//! sliding window. REST and MCP share them, keyed by the credential a caller presents, so a
//! change budget cannot be escaped by switching transport; anonymous share reads are counted
//! per address and per code.
//!
//! With Redis configured the windows live there (one sorted set per budget and caller,
//! checked and counted in one script, so two replicas cannot both take the last slot) and
//! every replica sees the same counts. Without Redis, or while it does not answer, they live
//! in this process's memory: degraded to per-replica limits, never refused for it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::settings::BudgetSettings;
use etappe_infra::metrics::Metrics;
use etappe_infra::redis_link::RedisLink;

/// The window every budget counts in.
pub const WINDOW: Duration = Duration::from_secs(60);
/// The longest window a budget may count in: the OAuth budgets' hour (client registrations
/// and metadata fetches from one address). A budget asking for more is counted over this.
pub const LONGEST_WINDOW: Duration = Duration::from_secs(60 * 60);
/// How many windows the memory keeps before the quiet ones are forgotten.
const PRUNE_AT: usize = 4_096;

/// One budget: `limit` calls of a kind a minute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The key prefix of its windows.
    pub name: &'static str,
    /// Calls a minute.
    pub limit: usize,
    /// What is counted, in words ("changes", "trip creations").
    pub what: &'static str,
}

/// A call refused for its budget: which one, and when to try again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: usize,
    pub what: &'static str,
    pub retry_after_secs: u64,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rate_limited: {} {} a minute. Retry in {} seconds.",
            self.limit, self.what, self.retry_after_secs
        )
    }
}

impl BudgetSettings {
    pub fn upload_quota_bytes(&self) -> u64 {
        self.upload_quota_mb.saturating_mul(1024 * 1024)
    }
    pub fn reads(&self) -> Budget {
        Budget {
            name: "reads",
            limit: self.reads_per_minute,
            what: "reads",
        }
    }
    pub fn changes(&self) -> Budget {
        Budget {
            name: "changes",
            limit: self.changes_per_minute,
            what: "changes",
        }
    }
    pub fn mcp_calls(&self) -> Budget {
        Budget {
            name: "mcp-calls",
            limit: self.mcp_calls_per_minute,
            what: "calls",
        }
    }
    pub fn creations(&self) -> Budget {
        Budget {
            name: "creations",
            limit: self.creations_per_minute,
            what: "trip creations",
        }
    }
    pub fn share_per_address(&self) -> Budget {
        Budget {
            name: "share-address",
            limit: self.share_reads_per_address,
            what: "public-link reads from one address",
        }
    }
    pub fn share_per_code(&self) -> Budget {
        Budget {
            name: "share-code",
            limit: self.share_reads_per_code,
            what: "reads of one public link",
        }
    }
}

/// What a call does to trips, as the budgets count it: a read spends from the read
/// budget, a change from the change budget every transport shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    Read,
    Change,
}

/// The key one credential's budgets are counted under, the same on every transport (so
/// switching from REST to MCP or the page does not reset a budget).
pub fn caller_key(user_id: &etappe_domain::ids::UserId, credential: &str) -> String {
    key_of(&[&user_id.to_string(), credential])
}

/// A short, safe window key for any caller text (a token, an address, a code).
pub fn key_of(parts: &[&str]) -> String {
    let digest = Sha256::digest(parts.join("|").as_bytes());
    hex::encode(&digest[..12])
}

/// The name a credential's budgets are counted under: a digest of the bearer token, the
/// same on every transport (so a change budget is one budget over REST and MCP).
pub fn credential_key(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    hex::encode(&digest[..8])
}

/// The budgets' windows.
pub struct Budgets {
    pub settings: BudgetSettings,
    memory: Mutex<HashMap<String, VecDeque<Instant>>>,
    redis: Option<SharedWindows>,
    /// Where refusals are counted (`etappe_rate_limited_total`), when set.
    metrics: Option<Arc<Metrics>>,
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets")
            .field("settings", &self.settings)
            .field("shared", &self.redis.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Budgets {
    fn default() -> Self {
        Self::new(BudgetSettings::default(), None, "etappe")
    }
}

impl Budgets {
    /// Budgets shared through Redis when `redis_url` is set (keys under `{prefix}:budget:`).
    pub fn new(settings: BudgetSettings, redis: Option<Arc<RedisLink>>, prefix: &str) -> Self {
        let redis = redis.map(|link| SharedWindows {
            link,
            prefix: format!("{prefix}:budget"),
        });
        Self {
            settings,
            memory: Mutex::new(HashMap::new()),
            redis,
            metrics: None,
        }
    }

    /// Counts every refusal in `metrics`, by budget.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Counts one call of `key` against every budget in `budgets`, or refuses it (counting
    /// nothing) when one of them is spent.
    pub async fn admit(&self, key: &str, budgets: &[Budget]) -> Result<(), Exceeded> {
        self.admit_within(key, budgets, WINDOW).await
    }

    /// The one admission of a caller's call on every transport: counts it against the
    /// read or the change budget of the credential, or refuses it when that one is spent.
    pub async fn admit_call(
        &self,
        user_id: &etappe_domain::ids::UserId,
        credential: &str,
        kind: CallKind,
    ) -> Result<(), Exceeded> {
        let budget = match kind {
            CallKind::Read => self.settings.reads(),
            CallKind::Change => self.settings.changes(),
        };
        self.admit(&caller_key(user_id, credential), &[budget])
            .await
    }

    /// Whether one more call of `key` would fit every budget of `budgets`, counting nothing:
    /// for a call counted only once it has been admitted (an agent's change, see
    /// `mcp::guard`), so that refusals do not spend it.
    pub async fn check(&self, key: &str, budgets: &[Budget]) -> Result<(), Exceeded> {
        self.decide(key, budgets, WINDOW, false).await
    }

    /// [`Self::admit`] over a longer sliding `window` (at most [`LONGEST_WINDOW`]): the
    /// login budgets count per quarter of an hour, the OAuth ones per hour.
    pub async fn admit_within(
        &self,
        key: &str,
        budgets: &[Budget],
        window: Duration,
    ) -> Result<(), Exceeded> {
        self.decide(key, budgets, window, true).await
    }

    /// Refuses when a budget is spent; else counts the call in every budget when `count`.
    async fn decide(
        &self,
        key: &str,
        budgets: &[Budget],
        window: Duration,
        count: bool,
    ) -> Result<(), Exceeded> {
        if budgets.is_empty() {
            return Ok(());
        }
        let window = window.clamp(Duration::from_secs(1), LONGEST_WINDOW);
        let verdict = match &self.redis {
            Some(redis) => match redis.admit(key, budgets, window, count).await {
                SharedVerdict::Admitted => Ok(()),
                SharedVerdict::Exceeded(exceeded) => Err(exceeded),
                SharedVerdict::Unavailable(e) => {
                    tracing::warn!(error = %e, "budgets: Redis does not answer; counting in this replica");
                    self.admit_in_memory(key, budgets, window, count)
                }
            },
            None => self.admit_in_memory(key, budgets, window, count),
        };
        if let (Err(exceeded), Some(metrics)) = (&verdict, &self.metrics) {
            let budget = budgets
                .iter()
                .find(|b| b.what == exceeded.what && b.limit == exceeded.limit)
                .map_or("unknown", |b| b.name);
            metrics.refused_for(budget);
        }
        verdict
    }

    fn admit_in_memory(
        &self,
        key: &str,
        budgets: &[Budget],
        window_length: Duration,
        count: bool,
    ) -> Result<(), Exceeded> {
        let now = Instant::now();
        let Ok(mut all) = self.memory.lock() else {
            return Ok(());
        };
        if all.len() >= PRUNE_AT {
            // Callers quiet for the longest window have nothing left to count: forget them.
            all.retain(|_, w| {
                w.back()
                    .is_some_and(|t| now.duration_since(*t) < LONGEST_WINDOW)
            });
        }
        for budget in budgets {
            let window = all.entry(format!("{}:{key}", budget.name)).or_default();
            while window
                .front()
                .is_some_and(|t| now.duration_since(*t) >= window_length)
            {
                window.pop_front();
            }
            if window.len() >= budget.limit {
                let waited = window
                    .front()
                    .map_or(0, |t| now.duration_since(*t).as_secs());
                return Err(Exceeded {
                    limit: budget.limit,
                    what: budget.what,
                    retry_after_secs: window_length
                        .as_secs()
                        .saturating_sub(waited)
                        .clamp(1, window_length.as_secs().max(1)),
                });
            }
        }
        if count {
            for budget in budgets {
                all.entry(format!("{}:{key}", budget.name))
                    .or_default()
                    .push_back(now);
            }
        }
        Ok(())
    }
}

/// What the shared windows decided, or that they could not be asked.
enum SharedVerdict {
    Admitted,
    Exceeded(Exceeded),
    /// Redis did not answer: the replica decides alone.
    Unavailable(String),
}

/// Every replica's windows, in Redis.
struct SharedWindows {
    link: Arc<RedisLink>,
    prefix: String,
}

/// Trims every window, refuses when one is full (answering its index, 1-based, and its
/// oldest entry's time, from which the retry delay follows), else counts the call in all
/// (unless the member is empty: a check that counts nothing).
const ADMIT_SCRIPT: &str = r"
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then
    return {i, tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])}
  end
end
if ARGV[3] ~= '' then
  for _, key in ipairs(KEYS) do
    redis.call('ZADD', key, now, ARGV[3])
    redis.call('PEXPIRE', key, window)
  end
end
return {0, 0}
";

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl SharedWindows {
    async fn admit(
        &self,
        key: &str,
        budgets: &[Budget],
        window: Duration,
        count: bool,
    ) -> SharedVerdict {
        match self.ask(key, budgets, window, count).await {
            Ok(None) => SharedVerdict::Admitted,
            Ok(Some(exceeded)) => SharedVerdict::Exceeded(exceeded),
            Err(e) => SharedVerdict::Unavailable(e),
        }
    }

    /// The budget that is spent, if one is (the call is then not counted).
    async fn ask(
        &self,
        key: &str,
        budgets: &[Budget],
        window: Duration,
        count: bool,
    ) -> Result<Option<Exceeded>, String> {
        let mut connection = self.link.connection().await?;
        let now = now_ms();
        let longest = window.as_secs().max(1);
        let window = u64::try_from(window.as_millis()).unwrap_or(60_000);
        let member = if count {
            format!("{now}-{}", hex::encode(rand::random::<[u8; 6]>()))
        } else {
            String::new()
        };
        let script = redis::Script::new(ADMIT_SCRIPT);
        let mut invocation = script.prepare_invoke();
        for budget in budgets {
            invocation.key(format!("{}:{}:{key}", self.prefix, budget.name));
        }
        invocation.arg(now).arg(window).arg(member);
        for budget in budgets {
            invocation.arg(budget.limit);
        }
        let (verdict, oldest): (usize, u64) = self
            .link
            .bounded(invocation.invoke_async(&mut connection))
            .await?;
        if verdict == 0 {
            return Ok(None);
        }
        let budget = budgets[(verdict - 1).min(budgets.len() - 1)];
        let retry = (oldest + window)
            .saturating_sub(now)
            .div_ceil(1000)
            .clamp(1, longest);
        Ok(Some(Exceeded {
            limit: budget.limit,
            what: budget.what,
            retry_after_secs: retry,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: Budget = Budget {
        name: "two",
        limit: 2,
        what: "things",
    };
    const FIVE: Budget = Budget {
        name: "five",
        limit: 5,
        what: "calls",
    };

    async fn a_spent_budget_refuses_and_counts_nothing(a: &Budgets, b: &Budgets) {
        let key = key_of(&[&uuid::Uuid::now_v7().to_string()]);
        assert!(a.admit(&key, &[FIVE, TWO]).await.is_ok());
        assert!(b.admit(&key, &[FIVE, TWO]).await.is_ok());
        let refused = a.admit(&key, &[FIVE, TWO]).await.expect_err("third thing");
        assert_eq!((refused.limit, refused.what), (2, "things"));
        assert!((1..=60).contains(&refused.retry_after_secs));
        // The refusal counted nothing: three more calls fit in the five.
        for _ in 0..3 {
            assert!(b.admit(&key, &[FIVE]).await.is_ok());
        }
        assert!(a.admit(&key, &[FIVE]).await.is_err());
        // Another caller has budgets of its own.
        assert!(a.admit("someone else", &[FIVE, TWO]).await.is_ok());
        // A check counts nothing: the two fit after any number of checks.
        let key = key_of(&[&uuid::Uuid::now_v7().to_string()]);
        for _ in 0..10 {
            assert!(a.check(&key, &[TWO]).await.is_ok());
        }
        assert!(b.admit(&key, &[TWO]).await.is_ok());
        assert!(a.admit(&key, &[TWO]).await.is_ok());
        assert!(b.check(&key, &[TWO]).await.is_err(), "a spent budget shows");
    }

    #[tokio::test]
    async fn in_one_process_a_budget_holds() {
        let budgets = Budgets::default();
        a_spent_budget_refuses_and_counts_nothing(&budgets, &budgets).await;
    }

    /// "20 an hour" is counted over the hour: a refusal asks for up to an hour's wait, not
    /// for the quarter of an hour after which twenty more would be let through.
    async fn an_hour_budget_counts_over_the_hour(budgets: &Budgets) {
        let key = key_of(&[&uuid::Uuid::now_v7().to_string()]);
        let hour = Duration::from_secs(3600);
        for _ in 0..2 {
            assert!(budgets.admit_within(&key, &[TWO], hour).await.is_ok());
        }
        let refused = budgets
            .admit_within(&key, &[TWO], hour)
            .await
            .expect_err("a third in the hour");
        assert!(
            (3590..=3600).contains(&refused.retry_after_secs),
            "{}",
            refused.retry_after_secs
        );
    }

    #[tokio::test]
    async fn in_one_process_an_hour_is_an_hour() {
        an_hour_budget_counts_over_the_hour(&Budgets::default()).await;
    }

    #[tokio::test]
    async fn across_replicas_sharing_redis_a_budget_holds() {
        let Some(url) = std::env::var("REDIS_URL").ok().filter(|u| !u.is_empty()) else {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but REDIS_URL is not set"
            );
            eprintln!("skipped: set REDIS_URL to run the shared budgets on Redis");
            return;
        };
        let prefix = format!("etappe-test-{}", uuid::Uuid::now_v7().simple());
        let a = Budgets::new(
            BudgetSettings::default(),
            RedisLink::open(Some(&url)),
            &prefix,
        );
        let b = Budgets::new(
            BudgetSettings::default(),
            RedisLink::open(Some(&url)),
            &prefix,
        );
        a_spent_budget_refuses_and_counts_nothing(&a, &b).await;
        an_hour_budget_counts_over_the_hour(&a).await;
    }

    #[tokio::test]
    async fn with_redis_down_budgets_count_in_this_replica() {
        let budgets = Budgets::new(
            BudgetSettings::default(),
            RedisLink::open(Some("redis://127.0.0.1:1")),
            "t",
        );
        assert!(budgets.admit("k", &[TWO]).await.is_ok());
        assert!(budgets.admit("k", &[TWO]).await.is_ok());
        assert!(budgets.admit("k", &[TWO]).await.is_err());
    }
}
