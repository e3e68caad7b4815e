//! Blobs, heartbeats and expiring leases on PostgreSQL.

use async_trait::async_trait;
use etappe_domain::ids::{TripId, UserId};

use super::PostgresStore;
use crate::StoreError;

/// A row of `leases` naming its holder until `expires_at`: renewed by the holder, taken over
/// by another once it expired (a hung holder's connection may stay open for minutes, so a
/// lock tied to it would never free), given back when dropped.
#[derive(Debug)]
struct PgLease {
    pool: sqlx::PgPool,
    name: String,
    holder: String,
}

#[async_trait]
impl crate::Lease for PgLease {
    async fn renew(&self) -> Result<bool, StoreError> {
        let renewed = sqlx::query(
            "UPDATE leases SET expires_at = now() + make_interval(secs => $3) \
             WHERE name = $1 AND holder = $2",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(crate::LEASE_TTL.as_secs_f64())
        .execute(&self.pool)
        .await?;
        Ok(renewed.rows_affected() == 1)
    }
}

impl Drop for PgLease {
    fn drop(&mut self) {
        // Given back at once (best effort): otherwise it frees when it expires.
        let (pool, name, holder) = (self.pool.clone(), self.name.clone(), self.holder.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = sqlx::query("DELETE FROM leases WHERE name = $1 AND holder = $2")
                    .bind(name)
                    .bind(holder)
                    .execute(&pool)
                    .await;
            });
        }
    }
}

#[async_trait]
impl crate::WorkStore for PostgresStore {
    async fn put_blob(&self, key: &str, data: &[u8]) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO blobs (key, data) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data",
        )
        .bind(key)
        .bind(data)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn get_blob(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(sqlx::query_scalar("SELECT data FROM blobs WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    async fn delete_trip_blobs(&self, trip_id: TripId) -> Result<u64, StoreError> {
        let id = trip_id.to_string();
        let done = sqlx::query(
            "DELETE FROM blobs WHERE key = 'upload:' || $1 OR key LIKE 'track:' || $1 || ':%' \
             OR key LIKE 'detour:' || $1 || ':%'",
        )
        .bind(&id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn upload_bytes_of(&self, owner: UserId) -> Result<u64, StoreError> {
        let total: Option<i64> = sqlx::query_scalar(
            "SELECT SUM(OCTET_LENGTH(b.data))::BIGINT FROM blobs b JOIN trip_views v \
             ON b.key = 'upload:' || v.trip_id::text WHERE v.owner_id = $1",
        )
        .bind(owner.0)
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(total.unwrap_or(0)).unwrap_or(0))
    }

    async fn heartbeat(&self, worker_id: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO worker_heartbeats (worker_id) VALUES ($1) \
             ON CONFLICT (worker_id) DO UPDATE SET last_seen = now()",
        )
        .bind(worker_id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn live_workers(&self, within: std::time::Duration) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM worker_heartbeats WHERE last_seen >= now() - make_interval(secs => $1)",
        )
        .bind(within.as_secs_f64())
        .fetch_one(&self.pool)
        .await?;
        Ok(n as u64)
    }

    async fn forget_worker(&self, worker_id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM worker_heartbeats WHERE worker_id = $1")
            .bind(worker_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn forget_silent_workers(
        &self,
        silent_for: std::time::Duration,
    ) -> Result<u64, StoreError> {
        let gone = sqlx::query(
            "DELETE FROM worker_heartbeats WHERE last_seen < now() - make_interval(secs => $1)",
        )
        .bind(silent_for.as_secs_f64())
        .execute(&self.pool)
        .await?;
        Ok(gone.rows_affected())
    }

    async fn try_lease(&self, name: &str) -> Result<Option<Box<dyn crate::Lease>>, StoreError> {
        let holder = uuid::Uuid::now_v7().to_string();
        let taken: Option<String> = sqlx::query_scalar(
            "INSERT INTO leases (name, holder, expires_at) \
             VALUES ($1, $2, now() + make_interval(secs => $3)) \
             ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
             WHERE leases.expires_at < now() \
             RETURNING holder",
        )
        .bind(name)
        .bind(&holder)
        .bind(crate::LEASE_TTL.as_secs_f64())
        .fetch_optional(&self.pool)
        .await?;
        if taken.as_deref() != Some(holder.as_str()) {
            return Ok(None);
        }
        Ok(Some(Box::new(PgLease {
            pool: self.pool.clone(),
            name: name.to_owned(),
            holder,
        })))
    }
}
