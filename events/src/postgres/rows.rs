//! The SQL of an append on PostgreSQL (one statement behind the stream guard), the trip
//! view rows it writes, and the event rows reads decode.

use chrono::{DateTime, Utc};
use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::postgres::PgRow;
use sqlx::{Postgres, Row};
use uuid::Uuid;

use crate::shared::{self, Appended};
use crate::{
    AppendOutcome, EventMetadata, ExpectedVersion, NewEvent, RecordedEvent, StoreError, upcast,
};

pub(super) async fn append_in_tx(
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

pub(super) async fn load_view<'e, E>(
    executor: E,
    trip_id: TripId,
) -> Result<Option<TripView>, StoreError>
where
    E: sqlx::Executor<'e, Database = Postgres>,
{
    let doc: Option<Value> = sqlx::query_scalar("SELECT doc FROM trip_views WHERE trip_id = $1")
        .bind(trip_id.0)
        .fetch_optional(executor)
        .await?;
    doc.map(shared::view_from_doc).transpose()
}

pub(super) async fn write_view(
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

pub(super) const EVENT_COLUMNS: &str = "global_position, (tx_id::text)::bigint AS tx, stream_id, version, event_id, \
    event_type, schema_version, data, metadata, recorded_at";

pub(super) fn decode_event(row: &PgRow) -> Result<RecordedEvent, StoreError> {
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
