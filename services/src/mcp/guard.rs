//! What the agent surface keeps between calls: the per-user-and-client rate limits (60 calls
//! and 20 mutations a minute) and the confirmation tokens (random, single use, 5 minutes,
//! bound to the exact canonical arguments). Both live in this process: a deployment of
//! several API replicas behind a load balancer needs sticky routing for confirmations until
//! they move to Redis (noted in the README).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Calls a user and client may make in a minute.
pub const CALLS_PER_MINUTE: usize = 60;
/// Mutating calls a user and client may make in a minute.
pub const MUTATIONS_PER_MINUTE: usize = 20;
/// How long a confirmation token is valid.
pub const CONFIRMATION_TTL: Duration = Duration::from_secs(300);
const WINDOW: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
struct Windows {
    calls: VecDeque<Instant>,
    mutations: VecDeque<Instant>,
}

/// The rate limits and pending confirmations.
#[derive(Debug, Default)]
pub struct Guards {
    windows: Mutex<HashMap<String, Windows>>,
    confirmations: Mutex<HashMap<String, (String, Instant)>>,
}

fn trim(window: &mut VecDeque<Instant>, now: Instant) {
    while window
        .front()
        .is_some_and(|t| now.duration_since(*t) >= WINDOW)
    {
        window.pop_front();
    }
}

impl Guards {
    /// Counts a call; refuses it (with when to retry) over the budget.
    pub fn admit(
        &self,
        principal: &crate::identity::Principal,
        client: &str,
        mutates: bool,
    ) -> Result<(), String> {
        let now = Instant::now();
        let key = format!("{}|{client}", principal.user_id);
        let Ok(mut all) = self.windows.lock() else {
            return Ok(());
        };
        let windows = all.entry(key).or_default();
        trim(&mut windows.calls, now);
        trim(&mut windows.mutations, now);
        let retry = |window: &VecDeque<Instant>| {
            window
                .front()
                .map_or(60, |t| 60 - now.duration_since(*t).as_secs().min(59))
        };
        if windows.calls.len() >= CALLS_PER_MINUTE {
            return Err(format!(
                "rate_limited: {CALLS_PER_MINUTE} calls a minute. Retry in {} seconds.",
                retry(&windows.calls)
            ));
        }
        if mutates && windows.mutations.len() >= MUTATIONS_PER_MINUTE {
            return Err(format!(
                "rate_limited: {MUTATIONS_PER_MINUTE} changes a minute. Retry in {} seconds.",
                retry(&windows.mutations)
            ));
        }
        windows.calls.push_back(now);
        if mutates {
            windows.mutations.push_back(now);
        }
        Ok(())
    }

    /// Mints a token for `binding` (the digest of user, client, tool and canonical arguments).
    pub fn mint(&self, binding: &str) -> String {
        let token = hex::encode(rand::random::<[u8; 16]>());
        if let Ok(mut pending) = self.confirmations.lock() {
            let now = Instant::now();
            pending.retain(|_, (_, at)| now.duration_since(*at) < CONFIRMATION_TTL);
            pending.insert(token.clone(), (binding.to_owned(), now));
        }
        token
    }

    /// Consumes `token` (even on a mismatch) and says whether it was minted for `binding`
    /// less than five minutes ago.
    pub fn redeem(&self, token: &str, binding: &str) -> bool {
        let Ok(mut pending) = self.confirmations.lock() else {
            return false;
        };
        match pending.remove(token) {
            Some((bound, at)) => bound == binding && at.elapsed() < CONFIRMATION_TTL,
            None => false,
        }
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

    #[test]
    fn the_budgets_hold_per_user_and_client() {
        let guards = Guards::default();
        let alice = principal();
        for _ in 0..MUTATIONS_PER_MINUTE {
            assert!(guards.admit(&alice, "agent", true).is_ok());
        }
        let refused = guards.admit(&alice, "agent", true);
        assert!(refused.is_err_and(|m| m.contains("Retry in")));
        // Reads still pass until the call budget is spent; another client has its own.
        for _ in MUTATIONS_PER_MINUTE..CALLS_PER_MINUTE {
            assert!(guards.admit(&alice, "agent", false).is_ok());
        }
        assert!(guards.admit(&alice, "agent", false).is_err());
        assert!(guards.admit(&alice, "other client", true).is_ok());
    }

    #[test]
    fn a_token_is_single_use_and_bound_to_its_arguments() {
        let guards = Guards::default();
        let token = guards.mint("delete:a");
        assert!(!guards.redeem(&token, "delete:b"), "other arguments");
        assert!(
            !guards.redeem(&token, "delete:a"),
            "consumed by the mismatch"
        );
        let token = guards.mint("delete:a");
        assert!(guards.redeem(&token, "delete:a"));
        assert!(!guards.redeem(&token, "delete:a"), "single use");
        assert_ne!(guards.mint("x"), guards.mint("x"), "random, not derived");
    }
}
