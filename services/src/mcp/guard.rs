//! What the agent surface keeps between calls: the budgets of a credential (60 calls a minute,
//! and the change budget it shares with REST; see `crate::budgets`) and the confirmation
//! tokens (random, single use, 5 minutes, bound to the exact canonical arguments).
//!
//! `/mcp` is stateless so that any API replica answers any call; what the guards keep must be
//! shared the same way. With Redis configured, tokens live there, read and deleted at once
//! (`GETDEL`), so a token minted on one replica is redeemed on another, exactly once. Without
//! Redis (one process), they live in memory. If Redis stops answering, the guards fall back to
//! memory and say so in the log: a confirmation must then come back to the replica that
//! minted it — degraded, never refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::AsyncCommands;

use crate::budgets::Budgets;
use etappe_workers::redis_link::RedisLink;

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

    /// Counts a call of `credential`; refuses it (with when to retry) over a budget. A
    /// change counts against the change budget REST spends from too.
    pub async fn admit(
        &self,
        principal: &crate::identity::Principal,
        credential: &str,
        mutates: bool,
    ) -> Result<(), String> {
        let key = crate::budgets::key_of(&[&principal.user_id.to_string(), credential]);
        let settings = &self.budgets.settings;
        let mut budgets = vec![settings.mcp_calls()];
        if mutates {
            budgets.push(settings.changes());
        }
        self.budgets
            .admit(&key, &budgets)
            .await
            .map_err(|e| e.to_string())
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

    async fn take(&self, token: &str) -> Result<Option<String>, String> {
        let mut connection = self.link.connection().await?;
        let key = format!("{}:confirm:{token}", self.prefix);
        self.link
            .bounded(connection.get_del::<_, Option<String>>(key))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BudgetSettings;
    use crate::identity::{Principal, Scope};

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
