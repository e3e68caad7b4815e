//! What the agent surface keeps between calls: the budgets of a credential (60 calls a minute,
//! and the change budget it shares with REST; see `etappe_app::budgets`) and the confirmation
//! tokens (random, single use, 5 minutes, bound to the exact canonical arguments).
//!
//! `/mcp` is stateless so that any API replica answers any call; what the guards keep must be
//! shared the same way. With Redis configured, tokens live there, read and deleted at once
//! (a compare-and-delete script), so a token minted on one replica is redeemed on another, exactly once, and only with its own arguments. Without
//! Redis (one process), they live in memory. If Redis stops answering, the guards fall back to
//! memory and say so in the log: a confirmation must then come back to the replica that
//! minted it — degraded, never refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::AsyncCommands;

use etappe_app::budgets::{Budgets, CallKind};
use etappe_infra::redis_link::RedisLink;

/// How long a confirmation token is valid.
pub const CONFIRMATION_TTL: Duration = Duration::from_secs(300);

/// The budgets and pending confirmations.
#[derive(Default)]
pub struct Guards {
    budgets: Arc<Budgets>,
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

impl Guards {
    /// Guards shared through Redis when `redis_url` is set (keys under `{prefix}:mcp:`),
    /// counting calls in `budgets`.
    pub fn new(budgets: Arc<Budgets>, redis: Option<Arc<RedisLink>>, prefix: &str) -> Self {
        let redis = redis.map(|link| RedisGuards {
            link,
            prefix: format!("{prefix}:mcp"),
        });
        Self {
            budgets,
            memory: MemoryGuards::default(),
            redis,
        }
    }

    /// Counts a call of `credential` against the call budget (60 a minute: refused calls
    /// included, which bounds them); refuses it (with when to retry) over a budget. A tool that
    /// changes trips must also find room in the change budget REST spends from too, but is
    /// counted there only once it is admitted ([`Guards::settle`]): an agent correcting its
    /// own mistakes is not locked out of the write it then gets right.
    pub async fn admit(
        &self,
        principal: &etappe_app::identity::Principal,
        credential: &str,
        mutates: bool,
    ) -> Result<(), String> {
        let key = Self::key(principal, credential);
        let settings = &self.budgets.settings;
        if mutates {
            self.budgets
                .check(&key, &[settings.changes()])
                .await
                .map_err(|e| e.to_string())?;
        }
        self.budgets
            .admit(&key, &[settings.mcp_calls()])
            .await
            .map_err(|e| e.to_string())
    }

    /// Counts an admitted change of `credential` (a call the tool answered without refusing).
    pub async fn settle(&self, principal: &etappe_app::identity::Principal, credential: &str) {
        // The check before the call found room; a race with a parallel call may fill the
        // window meanwhile, which the next call's check then sees.
        let _ = self
            .budgets
            .admit_call(&principal.user_id, credential, CallKind::Change)
            .await;
    }

    fn key(principal: &etappe_app::identity::Principal, credential: &str) -> String {
        etappe_app::budgets::caller_key(&principal.user_id, credential)
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

    /// Consumes `token` when it was minted for `binding` less than five minutes ago, and
    /// says so. A call with other arguments leaves it for its own (a retry with a corrected
    /// value must not cost the agent the confirmation it has already shown its person).
    pub async fn redeem(&self, token: &str, binding: &str) -> bool {
        if let Some(redis) = &self.redis {
            match redis.take_if(token, binding).await {
                Ok(true) => return true,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "confirmations: Redis does not answer; looking in this replica");
                }
            }
        }
        self.memory.take_if(token, binding)
    }
}

/// One process's confirmations.
#[derive(Debug, Default)]
struct MemoryGuards {
    confirmations: Mutex<HashMap<String, (String, Instant)>>,
}

impl MemoryGuards {
    fn put(&self, token: &str, binding: &str) {
        if let Ok(mut pending) = self.confirmations.lock() {
            let now = Instant::now();
            pending.retain(|_, (_, at)| now.duration_since(*at) < CONFIRMATION_TTL);
            pending.insert(token.to_owned(), (binding.to_owned(), now));
        }
    }

    fn take_if(&self, token: &str, binding: &str) -> bool {
        let Ok(mut pending) = self.confirmations.lock() else {
            return false;
        };
        let matches = pending
            .get(token)
            .is_some_and(|(bound, at)| bound == binding && at.elapsed() < CONFIRMATION_TTL);
        if matches {
            pending.remove(token);
        }
        matches
    }
}

/// The guards of every replica, in Redis.
struct RedisGuards {
    link: Arc<RedisLink>,
    prefix: String,
}

impl RedisGuards {
    async fn put(&self, token: &str, binding: &str) -> Result<(), String> {
        let mut connection = self.link.connection().await?;
        let key = format!("{}:confirm:{token}", self.prefix);
        self.link
            .bounded(connection.set_ex::<_, _, ()>(key, binding, CONFIRMATION_TTL.as_secs()))
            .await
    }

    /// Deletes the token when it is bound to `binding`, in one step (two replicas cannot both
    /// redeem it), and says whether it did.
    async fn take_if(&self, token: &str, binding: &str) -> Result<bool, String> {
        let mut connection = self.link.connection().await?;
        let key = format!("{}:confirm:{token}", self.prefix);
        let script = redis::Script::new(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
        );
        let deleted: Result<i64, String> = self
            .link
            .bounded(script.key(key).arg(binding).invoke_async(&mut connection))
            .await;
        deleted.map(|n| n == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BudgetSettings;
    use etappe_app::identity::{Principal, Scope};

    const CALLS_PER_MINUTE: usize = 60;
    const MUTATIONS_PER_MINUTE: usize = 20;

    fn principal() -> Principal {
        Principal {
            user_id: etappe_domain::ids::UserId(uuid::Uuid::now_v7()),
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
        let budgets = || {
            Arc::new(Budgets::new(
                BudgetSettings::default(),
                RedisLink::open(Some(&url)),
                &prefix,
            ))
        };
        Some((
            Guards::new(budgets(), RedisLink::open(Some(&url)), &prefix),
            Guards::new(budgets(), RedisLink::open(Some(&url)), &prefix),
        ))
    }

    async fn budgets_hold_per_user_and_client(a: &Guards, b: &Guards) {
        let alice = principal();
        for i in 0..MUTATIONS_PER_MINUTE {
            let replica = if i % 2 == 0 { a } else { b };
            assert!(replica.admit(&alice, "agent", true).await.is_ok(), "{i}");
            replica.settle(&alice, "agent").await;
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
            a.redeem(&token, "delete:a").await,
            "a mismatch leaves the token for its own arguments"
        );
        assert!(!b.redeem(&token, "delete:a").await, "spent once used");
        let token = a.mint("delete:a").await;
        assert!(
            b.redeem(&token, "delete:a").await,
            "redeemed on another replica"
        );
        assert!(!a.redeem(&token, "delete:a").await, "single use");
        assert_ne!(a.mint("x").await, a.mint("x").await, "random, not derived");
    }

    async fn refused_changes_do_not_spend_the_change_budget(a: &Guards, b: &Guards) {
        let bob = principal();
        // Twice the change budget in refused writes (never settled)...
        for _ in 0..2 * MUTATIONS_PER_MINUTE {
            assert!(a.admit(&bob, "agent", true).await.is_ok());
        }
        // ...and the write it then gets right still goes through.
        assert!(b.admit(&bob, "agent", true).await.is_ok());
        b.settle(&bob, "agent").await;
        // Refusals stay bounded by the call budget (60 a minute).
        for _ in 2 * MUTATIONS_PER_MINUTE + 1..CALLS_PER_MINUTE {
            assert!(a.admit(&bob, "agent", true).await.is_ok());
        }
        assert!(b.admit(&bob, "agent", true).await.is_err());
    }

    #[tokio::test]
    async fn in_one_process_refusals_are_bounded_by_calls_not_changes() {
        let guards = Guards::default();
        refused_changes_do_not_spend_the_change_budget(&guards, &guards).await;
    }

    #[tokio::test]
    async fn across_replicas_refusals_are_bounded_by_calls_not_changes() {
        let Some((a, b)) = replicas() else { return };
        refused_changes_do_not_spend_the_change_budget(&a, &b).await;
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

    #[tokio::test]
    async fn with_redis_down_the_guards_fall_back_to_this_replica() {
        let url = Some("redis://127.0.0.1:1");
        let budgets = Arc::new(Budgets::new(
            BudgetSettings::default(),
            RedisLink::open(url),
            "etappe-test",
        ));
        let guards = Guards::new(budgets, RedisLink::open(url), "etappe-test");
        let alice = principal();
        assert!(guards.admit(&alice, "agent", true).await.is_ok());
        let token = guards.mint("delete:a").await;
        assert!(guards.redeem(&token, "delete:a").await);
    }
}
