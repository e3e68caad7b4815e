//! The trip read model on SQLite.

use async_trait::async_trait;
use chrono::NaiveDate;
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::TripView;

use super::SqliteStore;
use super::rows::{load_view, parse_doc};
use crate::shared::Backend;
use crate::shared::{self};
use crate::{
    ExpectedVersion, NewEvent, Page, RebuildReport, StoreError, TripAppend, TripFilter, TripViews,
};

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
        ids.iter()
            .map(|id| {
                id.parse()
                    .map_err(|_| StoreError::Corrupt(format!("trip id {id:?}")))
            })
            .collect()
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

    async fn rebuild_projections(&self) -> Result<RebuildReport, StoreError> {
        shared::rebuild(self).await
    }

    #[cfg(feature = "testing")]
    async fn dump_trip_views(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        use super::parse_ts;
        use sqlx::Row;
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
