//! The trip read model on PostgreSQL.

use async_trait::async_trait;
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::Row;
use uuid::Uuid;

use super::PostgresStore;
use super::rows::load_view;
use crate::shared::{self};
use crate::{
    ExpectedVersion, NewEvent, Page, RebuildReport, StoreError, TripAppend, TripFilter, TripViews,
};

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
