//! The production event store on PostgreSQL: its SQL dialect (see `sql_store` for the flows).
//!
//! The stream row is the concurrency guard: a conditional `UPDATE … WHERE version = $expected`
//! (or an insert for a new stream) takes its row lock until commit, so of two appends at the
//! same version the second finds nothing to update and is refused. Events go in with one
//! `INSERT … SELECT FROM UNNEST`, and the trip projection is updated in the same transaction.
//!
//! Subscribers read below `pg_snapshot_xmin(pg_current_snapshot())` in `(tx_id,
//! global_position)` order: a transaction that took a lower position but commits later has a
//! lower `tx_id` that holds the fence back until it commits or rolls back, so nothing is
//! skipped. Keep writing transactions short: an open one pauses every subscriber.

use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

mod dialect;
mod rows;
mod work;

use crate::StoreError;

/// The PostgreSQL adapter.
#[derive(Clone, Debug)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects and applies the migrations.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Self, StoreError> {
        Self::connect_migrating(url, max_connections, true).await
    }

    /// Connects; applies the migrations when `migrate`, else only checks that one process
    /// (`etappe migrate`) applied every migration this build knows, and refuses to start
    /// on a database behind it.
    pub async fn connect_migrating(
        url: &str,
        max_connections: u32,
        migrate: bool,
    ) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(5))
            .connect(url)
            .await?;
        let store = Self { pool };
        if migrate {
            store.migrate().await?;
        } else {
            store.check_migrated().await?;
        }
        Ok(store)
    }

    /// Whether every migration of this build is applied; the error names the first missing.
    pub async fn check_migrated(&self) -> Result<(), StoreError> {
        let applied: Vec<i64> = sqlx::query_scalar(
            "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version",
        )
        .fetch_all(&self.pool)
        .await
        .unwrap_or_default();
        let missing = sqlx::migrate!("../migrations/postgres")
            .iter()
            .find(|m| !applied.contains(&m.version));
        match missing {
            None => Ok(()),
            Some(m) => Err(StoreError::NotMigrated(format!(
                "the database lacks migration {} ({}): run `etappe migrate` once (this process does not migrate: ETAPPE_MIGRATE_ON_START=false)",
                m.version, m.description
            ))),
        }
    }

    /// Applies the embedded PostgreSQL migrations.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::migrate!("../migrations/postgres")
            .run(&self.pool)
            .await?;
        Ok(())
    }

    /// The connection pool, for the tables that are not event-sourced (identity).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}
