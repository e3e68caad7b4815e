//! The production event store on PostgreSQL: its SQL dialect (see `shared` for the flows).
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

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use sqlx::postgres::PgPoolOptions;
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

mod rows;
mod views;
mod work;

use self::rows::{EVENT_COLUMNS, append_in_tx, decode_event, write_view};
use crate::shared::{self, Appended, Backend};
use crate::{
    AppendOutcome, Cursor, EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError,
};

/// The PostgreSQL adapter.
#[derive(Clone, Debug)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects and applies the migrations.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(5))
            .connect(url)
            .await?;
        let store = Self { pool };
        store.migrate().await?;
        Ok(store)
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

#[async_trait]
impl Backend for PostgresStore {
    type Db = Postgres;

    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }

    async fn append_in_tx(
        tx: &mut Transaction<'static, Postgres>,
        stream_id: &str,
        expected: ExpectedVersion,
        events: &[NewEvent],
    ) -> Result<Appended, StoreError> {
        append_in_tx(tx, stream_id, expected, events).await
    }

    async fn find_existing(
        &self,
        events: &[NewEvent],
    ) -> Result<Option<AppendOutcome>, StoreError> {
        let ids: Vec<Uuid> = events.iter().map(|e| e.event_id).collect();
        let rows = sqlx::query(
            "SELECT version, global_position FROM events WHERE event_id = ANY($1) ORDER BY global_position",
        )
        .bind(&ids)
        .fetch_all(&self.pool)
        .await?;
        Ok(shared::existing_outcome(
            events.len(),
            rows.iter()
                .map(|r| (r.get::<i64, _>(0), r.get::<i64, _>(1))),
        ))
    }

    async fn current_version(&self, stream_id: &str) -> Result<u64, StoreError> {
        let v: Option<i64> = sqlx::query_scalar("SELECT version FROM streams WHERE stream_id = $1")
            .bind(stream_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(v.unwrap_or(0) as u64)
    }

    async fn trip_events_in(
        tx: &mut Transaction<'static, Postgres>,
    ) -> Result<Vec<RecordedEvent>, StoreError> {
        // Appends that land meanwhile wait on this lock, then fold their events onto the
        // rebuilt rows: nothing is lost either way.
        sqlx::query("LOCK TABLE trip_views IN ACCESS EXCLUSIVE MODE")
            .execute(&mut **tx)
            .await?;
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE stream_id LIKE 'trip-%' ORDER BY global_position"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut **tx)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    async fn replace_views(
        tx: &mut Transaction<'static, Postgres>,
        views: &BTreeMap<TripId, TripView>,
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM trip_views")
            .execute(&mut **tx)
            .await?;
        for (trip_id, view) in views {
            write_view(tx, *trip_id, Some(view)).await?;
        }
        Ok(())
    }
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<AppendOutcome, StoreError> {
        Ok(shared::append(self, stream_id, expected, &events).await?.0)
    }

    #[cfg(feature = "testing")]
    async fn begin_append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<Box<dyn crate::PendingAppend>, StoreError> {
        shared::begin_append(self, stream_id, expected, &events).await
    }

    async fn read_stream(&self, stream_id: &str) -> Result<Vec<RecordedEvent>, StoreError> {
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(stream_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    async fn stream_version(&self, stream_id: &str) -> Result<u64, StoreError> {
        self.current_version(stream_id).await
    }

    async fn read_all(&self, after: Cursor, limit: u32) -> Result<Vec<RecordedEvent>, StoreError> {
        // The fence: only transactions older than every one still running are read, in the
        // order they can no longer change.
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events \
             WHERE (tx_id, global_position) > ($1::text::xid8, $2) \
               AND tx_id < pg_snapshot_xmin(pg_current_snapshot()) \
             ORDER BY tx_id, global_position LIMIT $3"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(after.tx_id.to_string())
            .bind(after.position)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    async fn load_checkpoint(&self, subscription: &str) -> Result<Cursor, StoreError> {
        let row = sqlx::query(
            "SELECT (last_tx_id::text)::bigint AS tx, last_position FROM subscriptions WHERE name = $1",
        )
        .bind(subscription)
        .fetch_optional(&self.pool)
        .await?;
        Ok(match row {
            Some(r) => Cursor {
                tx_id: r.try_get::<i64, _>("tx")? as u64,
                position: r.try_get("last_position")?,
            },
            None => Cursor::START,
        })
    }

    async fn save_checkpoint(&self, subscription: &str, cursor: Cursor) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO subscriptions (name, last_tx_id, last_position, updated_at) VALUES ($1, $2::text::xid8, $3, now()) \
             ON CONFLICT (name) DO UPDATE SET last_tx_id = EXCLUDED.last_tx_id, \
               last_position = EXCLUDED.last_position, updated_at = now()",
        )
        .bind(subscription)
        .bind(cursor.tx_id.to_string())
        .bind(cursor.position)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}
