//! The SQLite dialect of the store: every statement of the append (inside `BEGIN IMMEDIATE`),
//! of the rebuild, of the log's reads and of the trip read model, with the text-encoded ids,
//! timestamps and documents SQLite stores. The flows around them are in `sql_store`.

use async_trait::async_trait;
use chrono::{NaiveDate, Utc};
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::TripView;
use sqlx::{Row, Sqlite, SqliteConnection, SqlitePool, Transaction};
use uuid::Uuid;

use super::rows::{EVENT_COLUMNS, decode_event, parse_doc, parse_trip_ids};
use super::{SqliteStore, ts};
use crate::sql_store::{self, SqlDialect};
use crate::{
    Cursor, EventLog, ExpectedVersion, NewEvent, Page, RecordedEvent, StoreError, TripFilter,
    TripQueries,
};

#[async_trait]
impl SqlDialect for SqliteStore {
    type Db = Sqlite;
    const SYSTEM: &'static str = "sqlite";

    fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    async fn insert_events(
        tx: &mut SqliteConnection,
        stream_id: &str,
        expected: ExpectedVersion,
        events: &[NewEvent],
    ) -> Result<Vec<RecordedEvent>, StoreError> {
        // The transaction holds the write lock: the version read here cannot change before
        // the insert.
        let current: Option<i64> =
            sqlx::query_scalar("SELECT version FROM streams WHERE stream_id = ?1")
                .bind(stream_id)
                .fetch_optional(&mut *tx)
                .await?;
        let current = current.map(|v| v as u64);
        if !sql_store::version_matches(expected, current) {
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
        .bind(sql_store::stream_type(stream_id))
        .bind(last as i64)
        .execute(&mut *tx)
        .await?;

        let recorded_at = sql_store::now_micros();
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
            .fetch_one(&mut *tx)
            .await?;
            recorded.push(sql_store::recorded(
                stream_id,
                event,
                version,
                (position, 0),
                recorded_at,
            ));
        }
        Ok(recorded)
    }

    async fn load_view(
        connection: &mut SqliteConnection,
        trip_id: TripId,
    ) -> Result<Option<TripView>, StoreError> {
        let doc: Option<String> =
            sqlx::query_scalar("SELECT doc FROM trip_views WHERE trip_id = ?1")
                .bind(trip_id.to_string())
                .fetch_optional(connection)
                .await?;
        doc.map(|d| parse_doc(&d)).transpose()
    }

    async fn write_view(
        connection: &mut SqliteConnection,
        trip_id: TripId,
        view: Option<&TripView>,
    ) -> Result<(), StoreError> {
        let Some(view) = view else {
            sqlx::query("DELETE FROM trip_views WHERE trip_id = ?1")
                .bind(trip_id.to_string())
                .execute(connection)
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
        .execute(connection)
        .await?;
        Ok(())
    }

    async fn stored_places(&self, event_ids: &[Uuid]) -> Result<Vec<(i64, i64)>, StoreError> {
        let ids: Vec<String> = event_ids.iter().map(Uuid::to_string).collect();
        let json = serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let rows = sqlx::query(
            "SELECT version, global_position FROM events \
             WHERE event_id IN (SELECT value FROM json_each(?1)) ORDER BY global_position",
        )
        .bind(json)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    async fn trip_streams_after(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT stream_id FROM streams \
             WHERE stream_id LIKE 'trip-%' AND (?1 IS NULL OR stream_id > ?1) \
             ORDER BY stream_id LIMIT ?2",
        )
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?)
    }

    async fn locked_stream(
        tx: &mut SqliteConnection,
        stream_id: &str,
    ) -> Result<Vec<RecordedEvent>, StoreError> {
        // The transaction began IMMEDIATE: appends wait the moment it takes.
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = ?1 ORDER BY version");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(stream_id)
            .fetch_all(&mut *tx)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    #[cfg(feature = "testing")]
    async fn view_rows(&self) -> Result<Vec<sql_store::ViewRow>, StoreError> {
        use super::parse_ts;
        let rows = sqlx::query(
            "SELECT trip_id, owner_id, title, start_date, end_date, created_at, updated_at, stream_version, doc \
             FROM trip_views ORDER BY trip_id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(sql_store::ViewRow {
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
                })
            })
            .collect()
    }
}

#[async_trait]
impl EventLog for SqliteStore {
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
        let v: Option<i64> = sqlx::query_scalar("SELECT version FROM streams WHERE stream_id = ?1")
            .bind(stream_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(v.unwrap_or(0) as u64)
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
impl TripQueries for SqliteStore {
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

    async fn stale_open_work(
        &self,
        quiet_since: chrono::DateTime<chrono::Utc>,
        limit: u32,
    ) -> Result<Vec<TripId>, StoreError> {
        // A scan of the read model: the sweeper runs once a minute, on the leader only.
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT trip_id FROM trip_views \
             WHERE updated_at < ?1 \
               AND EXISTS (SELECT 1 FROM json_each(doc, '$.trip.computations') \
                           WHERE value IN ('pending', 'running')) \
             ORDER BY updated_at LIMIT ?2",
        )
        .bind(ts(quiet_since))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        parse_trip_ids(&ids)
    }

    async fn owned_trips(&self, owner: UserId) -> Result<Vec<TripId>, StoreError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT trip_id FROM ( \
               SELECT substr(stream_id, 6) AS trip_id FROM events \
               WHERE version = 1 AND stream_id LIKE 'trip-%' \
                 AND event_type IN ('TripCreated', 'TripDuplicated') AND json_extract(data, '$.ownerId') = ?1 \
               UNION SELECT trip_id FROM trip_views WHERE owner_id = ?1) \
             ORDER BY trip_id",
        )
        .bind(owner.to_string())
        .fetch_all(&self.pool)
        .await?;
        parse_trip_ids(&ids)
    }

    async fn purge_trips(&self, trips: &[TripId]) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        let mut events = 0;
        for trip in trips {
            let id = trip.to_string();
            events += sqlx::query("DELETE FROM events WHERE stream_id = ?1")
                .bind(trip.stream_id())
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query("DELETE FROM streams WHERE stream_id = ?1")
                .bind(trip.stream_id())
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM trip_views WHERE trip_id = ?1")
                .bind(&id)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "DELETE FROM blobs WHERE key = 'upload:' || ?1 OR key LIKE 'track:' || ?1 || ':%' \
                 OR key LIKE 'detour:' || ?1 || ':%'",
            )
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(events)
    }
}
