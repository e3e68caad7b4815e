//! Blobs, heartbeats and per-store leases on SQLite.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::Utc;
use etappe_domain::ids::{TripId, UserId};

use super::{SqliteStore, ts};
use crate::StoreError;

/// A lease held on one SQLite store: a name in that store's set, removed when dropped.
#[derive(Debug)]
struct LocalLease {
    name: String,
    held: Arc<Mutex<HashSet<String>>>,
}

#[async_trait]
impl crate::Lease for LocalLease {}

impl Drop for LocalLease {
    fn drop(&mut self) {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.name);
    }
}

#[async_trait]
impl crate::WorkStore for SqliteStore {
    async fn put_blob(&self, key: &str, data: &[u8]) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO blobs (key, data, created_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (key) DO UPDATE SET data = excluded.data",
        )
        .bind(key)
        .bind(data)
        .bind(ts(Utc::now()))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn get_blob(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(sqlx::query_scalar("SELECT data FROM blobs WHERE key = ?1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    async fn delete_trip_blobs(&self, trip_id: TripId) -> Result<u64, StoreError> {
        let id = trip_id.to_string();
        let done = sqlx::query(
            "DELETE FROM blobs WHERE key IN ('upload:' || ?1) OR key LIKE 'track:' || ?1 || ':%' \
             OR key LIKE 'detour:' || ?1 || ':%'",
        )
        .bind(&id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn upload_bytes_of(&self, owner: UserId) -> Result<u64, StoreError> {
        let total: Option<i64> = sqlx::query_scalar(
            "SELECT SUM(LENGTH(b.data)) FROM blobs b JOIN trip_views v \
             ON b.key = 'upload:' || v.trip_id WHERE v.owner_id = ?1",
        )
        .bind(owner.to_string())
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(total.unwrap_or(0)).unwrap_or(0))
    }

    async fn heartbeat(&self, worker_id: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO worker_heartbeats (worker_id, started_at, last_seen) VALUES (?1, ?2, ?3) \
             ON CONFLICT (worker_id) DO UPDATE SET last_seen = excluded.last_seen",
        )
        .bind(worker_id)
        .bind(ts(Utc::now()))
        .bind(Utc::now().timestamp_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn live_workers(&self, within: std::time::Duration) -> Result<u64, StoreError> {
        let since = Utc::now().timestamp_millis() - within.as_millis() as i64;
        let n: i64 =
            sqlx::query_scalar("SELECT count(*) FROM worker_heartbeats WHERE last_seen >= ?1")
                .bind(since)
                .fetch_one(&self.pool)
                .await?;
        Ok(n as u64)
    }

    async fn forget_worker(&self, worker_id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM worker_heartbeats WHERE worker_id = ?1")
            .bind(worker_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn forget_silent_workers(
        &self,
        silent_for: std::time::Duration,
    ) -> Result<u64, StoreError> {
        let since = Utc::now().timestamp_millis() - silent_for.as_millis() as i64;
        let gone = sqlx::query("DELETE FROM worker_heartbeats WHERE last_seen < ?1")
            .bind(since)
            .execute(&self.pool)
            .await?;
        Ok(gone.rows_affected())
    }

    async fn try_lease(&self, name: &str) -> Result<Option<Box<dyn crate::Lease>>, StoreError> {
        let mut held = self.leases.lock().unwrap_or_else(|e| e.into_inner());
        if !held.insert(name.to_owned()) {
            return Ok(None);
        }
        Ok(Some(Box::new(LocalLease {
            name: name.to_owned(),
            held: Arc::clone(&self.leases),
        })))
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;
    use crate::WorkStore;

    fn temp_path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir()
            .join(format!("etappe-lease-{}", Uuid::now_v7()))
            .join(name)
    }

    #[tokio::test]
    async fn a_stopped_worker_is_forgotten_at_once_and_a_silent_one_a_day_on() {
        let path = temp_path("beats.db");
        let store = SqliteStore::open(&path).await.expect("open");
        let minute = std::time::Duration::from_secs(60);
        store.heartbeat("stopping").await.expect("beat");
        store.heartbeat("killed").await.expect("beat");
        assert_eq!(store.live_workers(minute).await.expect("count"), 2);
        store.forget_worker("stopping").await.expect("forget");
        assert_eq!(store.live_workers(minute).await.expect("count"), 1);
        let day = std::time::Duration::from_secs(24 * 3600);
        assert_eq!(store.forget_silent_workers(day).await.expect("sweep"), 0);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let none = std::time::Duration::from_millis(10);
        assert_eq!(store.forget_silent_workers(none).await.expect("sweep"), 1);
        assert_eq!(store.live_workers(minute).await.expect("count"), 0);
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[tokio::test]
    async fn two_stores_in_one_process_each_hold_their_own_lease() {
        let (a_path, b_path) = (temp_path("a.db"), temp_path("b.db"));
        let a = SqliteStore::open(&a_path).await.expect("open a");
        let b = SqliteStore::open(&b_path).await.expect("open b");

        let held_a = a.try_lease("dispatcher").await.expect("lease a");
        assert!(held_a.is_some(), "the first store takes its lease");
        let held_b = b.try_lease("dispatcher").await.expect("lease b");
        assert!(
            held_b.is_some(),
            "another store in the same process has a lease of its own"
        );
        // Within one store the lease is still exclusive, clones included, until dropped.
        assert!(
            a.clone()
                .try_lease("dispatcher")
                .await
                .expect("again")
                .is_none()
        );
        drop(held_a);
        assert!(a.try_lease("dispatcher").await.expect("after").is_some());

        for path in [a_path, b_path] {
            if let Some(dir) = path.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}
