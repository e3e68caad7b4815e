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
use chrono::{DateTime, Utc};
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::postgres::{PgPoolOptions, PgRow};
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use crate::shared::{self, Appended, Backend};
use crate::{
    AppendOutcome, Cursor, EventMetadata, EventStore, ExpectedVersion, NewEvent, Page,
    RebuildReport, RecordedEvent, StoreError, TripAppend, TripFilter, TripViews, upcast,
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

async fn append_in_tx(
    tx: &mut sqlx::PgConnection,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Appended, StoreError> {
    let n = events.len() as i64;
    // One statement: the stream guard (which answers the new last version, or nothing when the
    // expected version does not hold) feeds the insert, so a lost race inserts no row.
    let guard = match expected {
        ExpectedVersion::NoStream | ExpectedVersion::Exact(0) => {
            "INSERT INTO streams (stream_id, stream_type, version) VALUES ($1, $10, $2) \
             ON CONFLICT DO NOTHING RETURNING version"
        }
        ExpectedVersion::Exact(_) => {
            "UPDATE streams SET version = version + $2 WHERE stream_id = $1 AND version = $9 RETURNING version"
        }
        ExpectedVersion::Any => {
            "INSERT INTO streams (stream_id, stream_type, version) VALUES ($1, $10, $2) \
             ON CONFLICT (stream_id) DO UPDATE SET version = streams.version + EXCLUDED.version RETURNING version"
        }
    };
    let expected_version = match expected {
        ExpectedVersion::Exact(v) => v as i64,
        _ => 0,
    };
    let sql = format!(
        "WITH guard AS ({guard}) \
         INSERT INTO events (stream_id, version, event_id, event_type, schema_version, data, metadata, recorded_at) \
         SELECT $1, guard.version - $2 + u.ord, u.event_id, u.event_type, u.schema_version, u.data, u.metadata, $8 \
         FROM guard CROSS JOIN UNNEST($3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::jsonb[]) \
           WITH ORDINALITY AS u(event_id, event_type, schema_version, data, metadata, ord) \
         ORDER BY u.ord \
         RETURNING global_position, (tx_id::text)::bigint AS tx, version"
    );
    let recorded_at = shared::now_micros();
    let ids: Vec<Uuid> = events.iter().map(|e| e.event_id).collect();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    let schemas: Vec<i32> = events.iter().map(|e| e.schema_version).collect();
    let data: Vec<Value> = events.iter().map(|e| e.data.clone()).collect();
    let metadata = events
        .iter()
        .map(|e| serde_json::to_value(&e.metadata))
        .collect::<Result<Vec<Value>, _>>()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(stream_id)
        .bind(n)
        .bind(&ids)
        .bind(&types)
        .bind(&schemas)
        .bind(&data)
        .bind(&metadata)
        .bind(recorded_at)
        .bind(expected_version)
        .bind(shared::stream_type(stream_id))
        .fetch_all(&mut *tx)
        .await?;
    if rows.len() != events.len() {
        return Err(StoreError::Conflict {
            stream_id: stream_id.to_owned(),
            expected,
            actual: 0,
        });
    }
    let mut rows_by_version = Vec::with_capacity(rows.len());
    for row in &rows {
        rows_by_version.push((row.try_get::<i64, _>("version")?, row));
    }
    rows_by_version.sort_by_key(|(version, _)| *version);

    let mut recorded = Vec::with_capacity(events.len());
    for (event, (version, row)) in events.iter().zip(&rows_by_version) {
        let place = (
            row.try_get("global_position")?,
            row.try_get::<i64, _>("tx")? as u64,
        );
        recorded.push(shared::recorded(
            stream_id,
            event,
            *version as u64,
            place,
            recorded_at,
        ));
    }

    let mut projected = None;
    if let Some(trip_id) = TripId::from_stream_id(stream_id) {
        let current = load_view(&mut *tx, trip_id).await?;
        if let Some(view) = shared::project_trip(stream_id, current, &recorded)? {
            write_view(&mut *tx, trip_id, view.as_ref()).await?;
            projected = Some(view);
        }
    }

    let outcome = AppendOutcome {
        first_version: recorded[0].version,
        last_version: recorded[recorded.len() - 1].version,
        positions: recorded.iter().map(|r| r.global_position).collect(),
        already_appended: false,
    };
    Ok((outcome, projected))
}

async fn load_view<'e, E>(executor: E, trip_id: TripId) -> Result<Option<TripView>, StoreError>
where
    E: sqlx::Executor<'e, Database = Postgres>,
{
    let doc: Option<Value> = sqlx::query_scalar("SELECT doc FROM trip_views WHERE trip_id = $1")
        .bind(trip_id.0)
        .fetch_optional(executor)
        .await?;
    doc.map(shared::view_from_doc).transpose()
}

async fn write_view(
    tx: &mut sqlx::PgConnection,
    trip_id: TripId,
    view: Option<&TripView>,
) -> Result<(), StoreError> {
    let Some(view) = view else {
        sqlx::query("DELETE FROM trip_views WHERE trip_id = $1")
            .bind(trip_id.0)
            .execute(&mut *tx)
            .await?;
        return Ok(());
    };
    let doc = serde_json::to_value(view).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let settings = &view.trip.settings;
    sqlx::query(
        "INSERT INTO trip_views (trip_id, owner_id, title, start_date, end_date, created_at, updated_at, stream_version, doc, share_code) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (trip_id) DO UPDATE SET owner_id = EXCLUDED.owner_id, title = EXCLUDED.title, \
           start_date = EXCLUDED.start_date, end_date = EXCLUDED.end_date, created_at = EXCLUDED.created_at, \
           updated_at = EXCLUDED.updated_at, stream_version = EXCLUDED.stream_version, doc = EXCLUDED.doc, \
           share_code = EXCLUDED.share_code",
    )
    .bind(trip_id.0)
    .bind(view.trip.owner_id.0)
    .bind(settings.title.as_deref())
    .bind(settings.start_date)
    .bind(settings.end_date)
    .bind(view.created_at)
    .bind(view.updated_at)
    .bind(view.stream_version as i64)
    .bind(doc)
    .bind(view.trip.share.as_ref().map(|s| s.code.clone()))
    .execute(&mut *tx)
    .await?;
    Ok(())
}

const EVENT_COLUMNS: &str = "global_position, (tx_id::text)::bigint AS tx, stream_id, version, event_id, \
    event_type, schema_version, data, metadata, recorded_at";

fn decode_event(row: &PgRow) -> Result<RecordedEvent, StoreError> {
    let event_type: String = row.try_get("event_type")?;
    let stored_version: i32 = row.try_get("schema_version")?;
    let data: Value = row.try_get("data")?;
    let metadata: EventMetadata = serde_json::from_value(row.try_get("metadata")?)
        .map_err(|e| StoreError::Corrupt(format!("metadata: {e}")))?;
    let (schema_version, data) = upcast::upcast(&event_type, stored_version, data);
    Ok(RecordedEvent {
        global_position: row.try_get("global_position")?,
        tx_id: row.try_get::<i64, _>("tx")? as u64,
        stream_id: row.try_get("stream_id")?,
        version: row.try_get::<i64, _>("version")? as u64,
        event_id: row.try_get("event_id")?,
        event_type,
        schema_version,
        data,
        metadata,
        recorded_at: row.try_get::<DateTime<Utc>, _>("recorded_at")?,
    })
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

#[async_trait]
impl TripViews for PostgresStore {
    async fn trip_owner(&self, trip_id: TripId) -> Result<Option<UserId>, StoreError> {
        let owner: Option<Uuid> =
            sqlx::query_scalar("SELECT owner_id FROM trip_views WHERE trip_id = $1")
                .bind(trip_id.0)
                .fetch_optional(&self.pool)
                .await?;
        Ok(owner.map(UserId))
    }

    async fn trip_view(&self, trip_id: TripId) -> Result<Option<TripView>, StoreError> {
        load_view(&self.pool, trip_id).await
    }

    async fn trip_view_by_share(&self, code: &str) -> Result<Option<TripView>, StoreError> {
        let doc: Option<Value> =
            sqlx::query_scalar("SELECT doc FROM trip_views WHERE share_code = $1")
                .bind(code)
                .fetch_optional(&self.pool)
                .await?;
        doc.map(shared::view_from_doc).transpose()
    }

    async fn list_trip_views(
        &self,
        owner: UserId,
        filter: &TripFilter,
        page: Page,
    ) -> Result<(Vec<TripView>, u64), StoreError> {
        let row = sqlx::query(
            "WITH matching AS ( \
               SELECT created_at, trip_id, doc FROM trip_views \
               WHERE owner_id = $1 \
                 AND ($2::text IS NULL OR strpos(lower(coalesce(title, '')), lower($2::text)) > 0) \
                 AND ($3::date IS NULL OR start_date >= $3::date) \
                 AND ($4::date IS NULL OR end_date <= $4::date)) \
             SELECT (SELECT count(*) FROM matching) AS total, \
                    coalesce((SELECT jsonb_agg(doc ORDER BY created_at DESC, trip_id DESC) FROM \
                      (SELECT * FROM matching ORDER BY created_at DESC, trip_id DESC LIMIT $5 OFFSET $6) page), '[]') AS docs",
        )
        .bind(owner.0)
        .bind(filter.title.as_deref())
        .bind(filter.start_date)
        .bind(filter.end_date)
        .bind(i64::from(page.per_page))
        .bind(i64::from(page.page.saturating_sub(1)) * i64::from(page.per_page))
        .fetch_one(&self.pool)
        .await?;
        let total: i64 = row.try_get("total")?;
        let docs: Value = row.try_get("docs")?;
        let views: Vec<TripView> = serde_json::from_value(docs)
            .map_err(|e| StoreError::Corrupt(format!("trip views: {e}")))?;
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
             FROM trip_views ORDER BY trip_id::text",
        )
        .fetch_all(&self.pool)
        .await?;
        let date = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string());
        rows.iter()
            .map(|r| {
                Ok(shared::ViewRow {
                    trip_id: r.try_get::<Uuid, _>("trip_id")?.to_string(),
                    owner_id: r.try_get::<Uuid, _>("owner_id")?.to_string(),
                    title: r.try_get("title")?,
                    start_date: date(r.try_get("start_date")?),
                    end_date: date(r.try_get("end_date")?),
                    created_at: r.try_get("created_at")?,
                    updated_at: r.try_get("updated_at")?,
                    stream_version: r.try_get("stream_version")?,
                    doc: r.try_get("doc")?,
                }
                .dump())
            })
            .collect()
    }
}

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
