//! The embedded default: the event store in one SQLite file under the data directory.
//!
//! Appends run in `BEGIN IMMEDIATE`, so one writer at a time holds the database: the version
//! check and the insert cannot interleave, and `global_position` order is commit order, which
//! is all a subscriber needs. WAL mode lets readers go on while a writer works, and
//! `synchronous = FULL` makes an acknowledged append survive a power cut. This file is the
//! SQLite dialect; the flows are in `shared`.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, Sqlite, SqlitePool, Transaction};

mod rows;
mod views;
mod work;

use self::rows::{EVENT_COLUMNS, append_in_tx, decode_event, write_view};
use crate::shared::{self, Appended, Backend};
use crate::{
    AppendOutcome, Cursor, EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError,
};

/// The SQLite adapter.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// The leases held on this store. SQLite serves one process, so a lease is a name in
    /// this set; it belongs to the store (and its clones), not to the process, so two stores
    /// in one process never share a lease.
    leases: Arc<Mutex<HashSet<String>>>,
}

const TS_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

/// Fixed-width UTC timestamps, so that text order is time order.
pub(super) fn ts(t: DateTime<Utc>) -> String {
    t.format(TS_FORMAT).to_string()
}

pub(super) fn parse_ts(s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt(format!("timestamp {s:?}: {e}")))
}

/// The database holds every user's trips and tokens' digests: its directory is created
/// 0700 and the file 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm` files the
/// database file's mode), so there is no moment at which another user could read them.
fn private_files(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    drop(options.open(path)?);
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let file = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
        if file.exists() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and applies the migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        private_files(path).map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(30))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        let store = Self {
            pool,
            leases: Arc::default(),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Applies the embedded SQLite migrations.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::migrate!("../migrations/sqlite")
            .run(&self.pool)
            .await?;
        Ok(())
    }

    /// The connection pool, for the tables that are not event-sourced (identity).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

#[async_trait]
impl Backend for SqliteStore {
    type Db = Sqlite;

    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    async fn append_in_tx(
        tx: &mut Transaction<'static, Sqlite>,
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
        let ids: Vec<String> = events.iter().map(|e| e.event_id.to_string()).collect();
        let json = serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let rows = sqlx::query(
            "SELECT version, global_position FROM events \
             WHERE event_id IN (SELECT value FROM json_each(?1)) ORDER BY global_position",
        )
        .bind(json)
        .fetch_all(&self.pool)
        .await?;
        Ok(shared::existing_outcome(
            events.len(),
            rows.iter()
                .map(|r| (r.get::<i64, _>(0), r.get::<i64, _>(1))),
        ))
    }

    async fn current_version(&self, stream_id: &str) -> Result<u64, StoreError> {
        let v: Option<i64> = sqlx::query_scalar("SELECT version FROM streams WHERE stream_id = ?1")
            .bind(stream_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(v.unwrap_or(0) as u64)
    }

    async fn trip_events_in(
        tx: &mut Transaction<'static, Sqlite>,
    ) -> Result<Vec<RecordedEvent>, StoreError> {
        // The transaction began IMMEDIATE: appends wait until the rebuilt rows are in.
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE stream_id LIKE 'trip-%' ORDER BY global_position"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut **tx)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    async fn replace_views(
        tx: &mut Transaction<'static, Sqlite>,
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
impl EventStore for SqliteStore {
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
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = ?1 ORDER BY version");
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
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE global_position > ?1 ORDER BY global_position LIMIT ?2"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(after.position)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    async fn load_checkpoint(&self, subscription: &str) -> Result<Cursor, StoreError> {
        let position: Option<i64> =
            sqlx::query_scalar("SELECT last_position FROM subscriptions WHERE name = ?1")
                .bind(subscription)
                .fetch_optional(&self.pool)
                .await?;
        Ok(Cursor {
            tx_id: 0,
            position: position.unwrap_or(0),
        })
    }

    async fn save_checkpoint(&self, subscription: &str, cursor: Cursor) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO subscriptions (name, last_tx_id, last_position, updated_at) VALUES (?1, 0, ?2, ?3) \
             ON CONFLICT (name) DO UPDATE SET last_position = excluded.last_position, updated_at = excluded.updated_at",
        )
        .bind(subscription)
        .bind(cursor.position)
        .bind(ts(Utc::now()))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}
