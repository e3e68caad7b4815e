//! Blobs, heartbeats and advisory-lock leases on PostgreSQL.

use async_trait::async_trait;
use etappe_domain::ids::{TripId, UserId};

use super::PostgresStore;
use crate::StoreError;

/// A session-level advisory lock, held by a connection detached from the pool: dropping the
/// lease closes the connection, which ends the session and releases the lock.
#[derive(Debug)]
struct PgLease {
    _connection: sqlx::PgConnection,
}

impl crate::Lease for PgLease {}

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

    async fn try_lease(&self, name: &str) -> Result<Option<Box<dyn crate::Lease>>, StoreError> {
        let mut connection = self.pool.acquire().await?;
        let taken: bool =
            sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
                .bind(name)
                .fetch_one(&mut *connection)
                .await?;
        if !taken {
            return Ok(None);
        }
        Ok(Some(Box::new(PgLease {
            _connection: connection.detach(),
        })))
    }
}
