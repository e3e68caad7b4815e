//! The PostgreSQL dialect of the store: the append as one statement behind the stream guard,
//! the rebuild's table lock, the fenced read of the global log, and the trip read model with
//! its native uuid, date, timestamp and jsonb columns. The flows around them are in
//! `sql_store`.

use async_trait::async_trait;
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::{PgConnection, PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use super::PostgresStore;
use super::rows::{EVENT_COLUMNS, decode_event};
use crate::sql_store::{self, SqlDialect};
use crate::{
    Cursor, EventLog, ExpectedVersion, NewEvent, Page, RecordedEvent, StoreError, TripFilter,
    TripQueries,
};

#[async_trait]
impl SqlDialect for PostgresStore {
    type Db = Postgres;
    const SYSTEM: &'static str = "postgresql";

    fn pool(&self) -> &PgPool {
        &self.pool
    }

    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }

    async fn insert_events(
        tx: &mut PgConnection,
        stream_id: &str,
        expected: ExpectedVersion,
        events: &[NewEvent],
    ) -> Result<Vec<RecordedEvent>, StoreError> {
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
        let recorded_at = sql_store::now_micros();
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
            .bind(sql_store::stream_type(stream_id))
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
            recorded.push(sql_store::recorded(
                stream_id,
                event,
                *version as u64,
                place,
                recorded_at,
            ));
        }

        Ok(recorded)
    }

    async fn load_view(
        connection: &mut PgConnection,
        trip_id: TripId,
    ) -> Result<Option<TripView>, StoreError> {
        let doc: Option<Value> =
            sqlx::query_scalar("SELECT doc FROM trip_views WHERE trip_id = $1")
                .bind(trip_id.0)
                .fetch_optional(connection)
                .await?;
        doc.map(sql_store::view_from_doc).transpose()
    }

    async fn write_view(
        connection: &mut PgConnection,
        trip_id: TripId,
        view: Option<&TripView>,
    ) -> Result<(), StoreError> {
        let Some(view) = view else {
            sqlx::query("DELETE FROM trip_views WHERE trip_id = $1")
                .bind(trip_id.0)
                .execute(connection)
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
        .execute(connection)
        .await?;
        Ok(())
    }

    async fn stored_places(&self, event_ids: &[Uuid]) -> Result<Vec<(i64, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT version, global_position FROM events WHERE event_id = ANY($1) ORDER BY global_position",
        )
        .bind(event_ids)
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
             WHERE stream_id LIKE 'trip-%' AND ($1::text IS NULL OR stream_id > $1) \
             ORDER BY stream_id LIMIT $2",
        )
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?)
    }

    async fn locked_stream(
        tx: &mut PgConnection,
        stream_id: &str,
    ) -> Result<Vec<RecordedEvent>, StoreError> {
        // The stream's row is what an append updates: holding it, no append slips between
        // the read and the write of the view.
        sqlx::query("SELECT version FROM streams WHERE stream_id = $1 FOR UPDATE")
            .bind(stream_id)
            .fetch_optional(&mut *tx)
            .await?;
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(stream_id)
            .fetch_all(&mut *tx)
            .await?;
        rows.iter().map(decode_event).collect()
    }

    #[cfg(feature = "testing")]
    async fn view_rows(&self) -> Result<Vec<sql_store::ViewRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT trip_id, owner_id, title, start_date, end_date, created_at, updated_at, stream_version, doc \
             FROM trip_views ORDER BY trip_id::text",
        )
        .fetch_all(&self.pool)
        .await?;
        let date = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string());
        rows.iter()
            .map(|r| {
                Ok(sql_store::ViewRow {
                    trip_id: r.try_get::<Uuid, _>("trip_id")?.to_string(),
                    owner_id: r.try_get::<Uuid, _>("owner_id")?.to_string(),
                    title: r.try_get("title")?,
                    start_date: date(r.try_get("start_date")?),
                    end_date: date(r.try_get("end_date")?),
                    created_at: r.try_get("created_at")?,
                    updated_at: r.try_get("updated_at")?,
                    stream_version: r.try_get("stream_version")?,
                    doc: r.try_get("doc")?,
                })
            })
            .collect()
    }
}

#[async_trait]
impl EventLog for PostgresStore {
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
        let v: Option<i64> = sqlx::query_scalar("SELECT version FROM streams WHERE stream_id = $1")
            .bind(stream_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(v.unwrap_or(0) as u64)
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
impl TripQueries for PostgresStore {
    async fn trip_owner(&self, trip_id: TripId) -> Result<Option<UserId>, StoreError> {
        let owner: Option<Uuid> =
            sqlx::query_scalar("SELECT owner_id FROM trip_views WHERE trip_id = $1")
                .bind(trip_id.0)
                .fetch_optional(&self.pool)
                .await?;
        Ok(owner.map(UserId))
    }

    async fn trip_view_by_share(&self, code: &str) -> Result<Option<TripView>, StoreError> {
        let doc: Option<Value> =
            sqlx::query_scalar("SELECT doc FROM trip_views WHERE share_code = $1")
                .bind(code)
                .fetch_optional(&self.pool)
                .await?;
        doc.map(sql_store::view_from_doc).transpose()
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

    async fn stale_open_work(
        &self,
        quiet_since: chrono::DateTime<chrono::Utc>,
        limit: u32,
    ) -> Result<Vec<TripId>, StoreError> {
        // A scan of the read model: the sweeper runs once a minute, on the leader only.
        let ids: Vec<Uuid> = sqlx::query_scalar(
            "SELECT trip_id FROM trip_views \
             WHERE updated_at < $1 \
               AND EXISTS (SELECT 1 FROM jsonb_each_text(doc->'trip'->'computations') c \
                           WHERE c.value IN ('pending', 'running')) \
             ORDER BY updated_at LIMIT $2",
        )
        .bind(quiet_since)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        Ok(ids.into_iter().map(TripId).collect())
    }

    async fn owned_trips(&self, owner: UserId) -> Result<Vec<TripId>, StoreError> {
        let ids: Vec<Uuid> = sqlx::query_scalar(
            "SELECT trip_id FROM ( \
               SELECT substr(stream_id, 6)::uuid AS trip_id FROM events \
               WHERE version = 1 AND stream_id LIKE 'trip-%' \
                 AND event_type IN ('TripCreated', 'TripDuplicated') AND data->>'ownerId' = $1 \
               UNION SELECT trip_id FROM trip_views WHERE owner_id = $2) owned \
             ORDER BY trip_id",
        )
        .bind(owner.to_string())
        .bind(owner.0)
        .fetch_all(&self.pool)
        .await?;
        Ok(ids.into_iter().map(TripId).collect())
    }

    async fn purge_trips(&self, trips: &[TripId]) -> Result<u64, StoreError> {
        if trips.is_empty() {
            return Ok(0);
        }
        let ids: Vec<Uuid> = trips.iter().map(|t| t.0).collect();
        let streams: Vec<String> = trips.iter().map(TripId::stream_id).collect();
        let mut tx = self.pool.begin().await?;
        // The streams' rows first: an append holds its stream's row until it commits, so
        // once the lock is ours every append that got in is committed (and the deletes below,
        // each with a fresh snapshot, see its events), and every later one finds no stream
        // at the version it expects and inserts nothing.
        sqlx::query(
            "SELECT 1 FROM streams WHERE stream_id = ANY($1) ORDER BY stream_id FOR UPDATE",
        )
        .bind(&streams)
        .fetch_all(&mut *tx)
        .await?;
        let events = sqlx::query("DELETE FROM events WHERE stream_id = ANY($1)")
            .bind(&streams)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        sqlx::query("DELETE FROM streams WHERE stream_id = ANY($1)")
            .bind(&streams)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM trip_views WHERE trip_id = ANY($1)")
            .bind(&ids)
            .execute(&mut *tx)
            .await?;
        let texts: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        sqlx::query(
            "DELETE FROM blobs WHERE key = ANY(SELECT 'upload:' || t FROM unnest($1::text[]) t) \
             OR (split_part(key, ':', 1) IN ('track', 'detour') AND split_part(key, ':', 2) = ANY($1::text[]))",
        )
        .bind(&texts)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(events)
    }
}
