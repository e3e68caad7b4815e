//! The agents a person authorized (their grants), revoking one, and the audit trail the
//! grants write.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use etappe_domain::ids::UserId;
use uuid::Uuid;

use super::{AgentGrant, AuthorizationService, OAuthError};

impl AuthorizationService {
    /// The agents `user` authorized (live grants).
    pub async fn agents(&self, user: UserId) -> Result<Vec<AgentGrant>, OAuthError> {
        Ok(self
            .store
            .grants_of(user)
            .await?
            .into_iter()
            .map(AgentGrant::from)
            .collect())
    }

    /// Revokes `user`'s grant `grant_id` and every token of it; false: no such live grant.
    pub async fn revoke_agent(&self, user: UserId, grant_id: Uuid) -> Result<bool, OAuthError> {
        let revoked = self.store.revoke_grant(grant_id, Some(user)).await?;
        if revoked {
            self.audit(
                user,
                "agent_revoked",
                &format!("grant {grant_id} revoked by its person"),
            )
            .await;
        }
        Ok(revoked)
    }

    /// Whether `key` is due (not seen within `every`), and marks it seen.
    pub(super) fn due(
        &self,
        seen: &Mutex<HashMap<Uuid, Instant>>,
        key: Uuid,
        every: Duration,
    ) -> bool {
        let Ok(mut seen) = seen.lock() else {
            return true;
        };
        let now = Instant::now();
        if seen.len() > 10_000 {
            seen.retain(|_, at| now.duration_since(*at) < every);
        }
        match seen.get(&key) {
            Some(at) if now.duration_since(*at) < every => false,
            _ => {
                seen.insert(key, now);
                true
            }
        }
    }

    pub(super) async fn audit(&self, user: UserId, kind: &str, detail: &str) {
        if let Err(e) = self.identity.audit(user, kind, detail).await {
            tracing::warn!(error = %e, kind, "oauth: the audit row could not be written");
        }
    }
}
