//! The embedded default: the event store in one SQLite file under the data directory.
//!
//! Appends run in `BEGIN IMMEDIATE`, so one writer at a time holds the database: the version
//! check and the insert cannot interleave, and `global_position` order is commit order, which
//! is all a subscriber needs. WAL mode lets readers go on while a writer works, and
//! `synchronous = FULL` makes an acknowledged append survive a power cut. This file is the
//! SQLite dialect; the flows are in `shared`.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, SqlitePool, Transaction};
use uuid::Uuid;

use crate::shared::{self, Appended, Backend};
use crate::{
    AppendOutcome, Cursor, EventMetadata, EventStore, ExpectedVersion, NewEvent, Page,
    RebuildReport, RecordedEvent, StoreError, TripAppend, TripFilter, TripViews, upcast,
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
fn ts(t: DateTime<Utc>) -> String {
    t.format(TS_FORMAT).to_string()
}

fn parse_ts(s: &str) -> Result<DateTime<Utc>, StoreError> {
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

async fn append_in_tx(
    tx: &mut Transaction<'static, Sqlite>,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Appended, StoreError> {
    let current: Option<i64> =
        sqlx::query_scalar("SELECT version FROM streams WHERE stream_id = ?1")
            .bind(stream_id)
            .fetch_optional(&mut **tx)
            .await?;
    let current = current.map(|v| v as u64);
    if !shared::version_matches(expected, current) {
        return Err(StoreError::Conflict {
            stream_id: stream_id.to_owned(),
            expected,
            actual: current.unwrap_or(0),
        });
    }
    let base = current.unwrap_or(0);
    let last = base + events.len() as u64;
    sqlx::query(
        "INSERT INTO streams (stream_id, stream_type, version) VALUES (?1, ?2, ?3) \
         ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version",
    )
    .bind(stream_id)
    .bind(shared::stream_type(stream_id))
    .bind(last as i64)
    .execute(&mut **tx)
    .await?;

    let recorded_at = shared::now_micros();
    let mut recorded = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let version = base + 1 + i as u64;
        let metadata = serde_json::to_string(&event.metadata)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let position: i64 = sqlx::query_scalar(
            "INSERT INTO events (stream_id, version, event_id, event_type, schema_version, data, metadata, recorded_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING global_position",
        )
        .bind(stream_id)
        .bind(version as i64)
        .bind(event.event_id.to_string())
        .bind(&event.event_type)
        .bind(event.schema_version)
        .bind(event.data.to_string())
        .bind(metadata)
        .bind(ts(recorded_at))
        .fetch_one(&mut **tx)
        .await?;
        recorded.push(shared::recorded(
            stream_id,
            event,
            version,
            (position, 0),
            recorded_at,
        ));
    }

    let mut projected = None;
    if let Some(trip_id) = TripId::from_stream_id(stream_id) {
        let current = load_view(&mut **tx, trip_id).await?;
        if let Some(view) = shared::project_trip(stream_id, current, &recorded)? {
            write_view(tx, trip_id, view.as_ref()).await?;
            projected = Some(view);
        }
    }

    let outcome = AppendOutcome {
        first_version: base + 1,
        last_version: last,
        positions: recorded.iter().map(|r| r.global_position).collect(),
        already_appended: false,
    };
    Ok((outcome, projected))
}

async fn load_view<'e, E>(executor: E, trip_id: TripId) -> Result<Option<TripView>, StoreError>
where
    E: sqlx::Executor<'e, Database = Sqlite>,
{
    let doc: Option<String> = sqlx::query_scalar("SELECT doc FROM trip_views WHERE trip_id = ?1")
        .bind(trip_id.to_string())
        .fetch_optional(executor)
        .await?;
    doc.map(|d| parse_doc(&d)).transpose()
}

fn parse_doc(doc: &str) -> Result<TripView, StoreError> {
    serde_json::from_str(doc).map_err(|e| StoreError::Corrupt(format!("trip view: {e}")))
}

async fn write_view(
    tx: &mut Transaction<'static, Sqlite>,
    trip_id: TripId,
    view: Option<&TripView>,
) -> Result<(), StoreError> {
    let Some(view) = view else {
        sqlx::query("DELETE FROM trip_views WHERE trip_id = ?1")
            .bind(trip_id.to_string())
            .execute(&mut **tx)
            .await?;
        return Ok(());
    };
    let doc = serde_json::to_string(view).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let settings = &view.trip.settings;
    sqlx::query(
        "INSERT INTO trip_views (trip_id, owner_id, title, start_date, end_date, created_at, updated_at, stream_version, doc, share_code) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (trip_id) DO UPDATE SET owner_id = excluded.owner_id, title = excluded.title, \
           start_date = excluded.start_date, end_date = excluded.end_date, created_at = excluded.created_at, \
           updated_at = excluded.updated_at, stream_version = excluded.stream_version, doc = excluded.doc, \
           share_code = excluded.share_code",
    )
    .bind(trip_id.to_string())
    .bind(view.trip.owner_id.to_string())
    .bind(settings.title.as_deref())
    .bind(settings.start_date.map(|d| d.to_string()))
    .bind(settings.end_date.map(|d| d.to_string()))
    .bind(ts(view.created_at))
    .bind(ts(view.updated_at))
    .bind(view.stream_version as i64)
    .bind(doc)
    .bind(view.trip.share.as_ref().map(|s| s.code.clone()))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn decode_event(row: &SqliteRow) -> Result<RecordedEvent, StoreError> {
    let corrupt =
        |what: &str, e: &dyn std::fmt::Display| StoreError::Corrupt(format!("{what}: {e}"));
    let event_type: String = row.try_get("event_type")?;
    let stored_version: i32 = row.try_get("schema_version")?;
    let data: Value =
        serde_json::from_str(row.try_get::<&str, _>("data")?).map_err(|e| corrupt("data", &e))?;
    let metadata: EventMetadata = serde_json::from_str(row.try_get::<&str, _>("metadata")?)
        .map_err(|e| corrupt("metadata", &e))?;
    let (schema_version, data) = upcast::upcast(&event_type, stored_version, data);
    Ok(RecordedEvent {
        global_position: row.try_get("global_position")?,
        tx_id: 0,
        stream_id: row.try_get("stream_id")?,
        version: row.try_get::<i64, _>("version")? as u64,
        event_id: Uuid::from_str(row.try_get::<&str, _>("event_id")?)
            .map_err(|e| corrupt("event_id", &e))?,
        event_type,
        schema_version,
        data,
        metadata,
        recorded_at: parse_ts(row.try_get::<&str, _>("recorded_at")?)?,
    })
}

const EVENT_COLUMNS: &str = "global_position, stream_id, version, event_id, event_type, schema_version, data, metadata, recorded_at";

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

#[async_trait]
impl TripViews for SqliteStore {
    async fn trip_owner(&self, trip_id: TripId) -> Result<Option<UserId>, StoreError> {
        let owner: Option<String> =
            sqlx::query_scalar("SELECT owner_id FROM trip_views WHERE trip_id = ?1")
                .bind(trip_id.to_string())
                .fetch_optional(&self.pool)
                .await?;
        owner
            .map(|o| {
                o.parse()
                    .map_err(|e| StoreError::Corrupt(format!("owner id: {e}")))
            })
            .transpose()
    }

    async fn trip_view(&self, trip_id: TripId) -> Result<Option<TripView>, StoreError> {
        load_view(&self.pool, trip_id).await
    }

    async fn trip_view_by_share(&self, code: &str) -> Result<Option<TripView>, StoreError> {
        let doc: Option<String> =
            sqlx::query_scalar("SELECT doc FROM trip_views WHERE share_code = ?1")
                .bind(code)
                .fetch_optional(&self.pool)
                .await?;
        doc.map(|d| parse_doc(&d)).transpose()
    }

    async fn list_trip_views(
        &self,
        owner: UserId,
        filter: &TripFilter,
        page: Page,
    ) -> Result<(Vec<TripView>, u64), StoreError> {
        const WHERE: &str = "WHERE owner_id = ?1 \
            AND (?2 IS NULL OR instr(lower(coalesce(title, '')), lower(?2)) > 0) \
            AND (?3 IS NULL OR start_date >= ?3) AND (?4 IS NULL OR end_date <= ?4)";
        let date = |d: Option<NaiveDate>| d.map(|d| d.to_string());
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM trip_views {WHERE}"
        )))
        .bind(owner.to_string())
        .bind(filter.title.as_deref())
        .bind(date(filter.start_date))
        .bind(date(filter.end_date))
        .fetch_one(&self.pool)
        .await?;
        let docs: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT doc FROM trip_views {WHERE} ORDER BY created_at DESC, trip_id DESC LIMIT ?5 OFFSET ?6"
        )))
        .bind(owner.to_string())
        .bind(filter.title.as_deref())
        .bind(date(filter.start_date))
        .bind(date(filter.end_date))
        .bind(i64::from(page.per_page))
        .bind(i64::from(page.page.saturating_sub(1)) * i64::from(page.per_page))
        .fetch_all(&self.pool)
        .await?;
        let views = docs
            .iter()
            .map(|d| parse_doc(d))
            .collect::<Result<Vec<TripView>, _>>()?;
        Ok((views, total as u64))
    }

    async fn append_to_trip(
        &self,
        trip_id: TripId,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<TripAppend, StoreError> {
        let (outcome, view) = shared::append(self, &trip_id.stream_id(), expected, &events).await?;
        Ok(TripAppend {
            outcome,
            view: view.flatten(),
        })
    }

    async fn rebuild_projections(&self) -> Result<RebuildReport, StoreError> {
        shared::rebuild(self).await
    }

    #[cfg(feature = "testing")]
    async fn dump_trip_views(&self) -> Result<Vec<Value>, StoreError> {
        let rows = sqlx::query(
            "SELECT trip_id, owner_id, title, start_date, end_date, created_at, updated_at, stream_version, doc \
             FROM trip_views ORDER BY trip_id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(shared::ViewRow {
                    trip_id: r.try_get("trip_id")?,
                    owner_id: r.try_get("owner_id")?,
                    title: r.try_get("title")?,
                    start_date: r.try_get("start_date")?,
                    end_date: r.try_get("end_date")?,
                    created_at: parse_ts(r.try_get::<&str, _>("created_at")?)?,
                    updated_at: parse_ts(r.try_get::<&str, _>("updated_at")?)?,
                    stream_version: r.try_get("stream_version")?,
                    doc: serde_json::from_str(r.try_get::<&str, _>("doc")?)
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                }
                .dump())
            })
            .collect()
    }
}

/// A lease held on one SQLite store: a name in that store's set, removed when dropped.
#[derive(Debug)]
struct LocalLease {
    name: String,
    held: Arc<Mutex<HashSet<String>>>,
}

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
    use super::*;
    use crate::WorkStore;

    fn temp_path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir()
            .join(format!("etappe-lease-{}", Uuid::now_v7()))
            .join(name)
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
