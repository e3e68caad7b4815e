//! The SQL of an append on SQLite (inside `BEGIN IMMEDIATE`), the trip view rows it writes,
//! and the event rows reads decode.

use std::str::FromStr;

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use uuid::Uuid;

use super::{parse_ts, ts};
use crate::shared::{self, Appended};
use crate::{
    AppendOutcome, EventMetadata, ExpectedVersion, NewEvent, RecordedEvent, StoreError, upcast,
};

pub(super) async fn append_in_tx(
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

pub(super) async fn load_view<'e, E>(
    executor: E,
    trip_id: TripId,
) -> Result<Option<TripView>, StoreError>
where
    E: sqlx::Executor<'e, Database = Sqlite>,
{
    let doc: Option<String> = sqlx::query_scalar("SELECT doc FROM trip_views WHERE trip_id = ?1")
        .bind(trip_id.to_string())
        .fetch_optional(executor)
        .await?;
    doc.map(|d| parse_doc(&d)).transpose()
}

pub(super) fn parse_doc(doc: &str) -> Result<TripView, StoreError> {
    serde_json::from_str(doc).map_err(|e| StoreError::Corrupt(format!("trip view: {e}")))
}

pub(super) async fn write_view(
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

pub(super) fn decode_event(row: &SqliteRow) -> Result<RecordedEvent, StoreError> {
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

pub(super) const EVENT_COLUMNS: &str = "global_position, stream_id, version, event_id, event_type, schema_version, data, metadata, recorded_at";
