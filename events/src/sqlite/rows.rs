//! The rows SQLite hands back: the event columns reads select and how they decode, the
//! stored trip view document and trip ids in text.

use std::str::FromStr;

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use super::parse_ts;
use crate::{EventMetadata, RecordedEvent, StoreError, upcast};

pub(super) fn parse_doc(doc: &str) -> Result<TripView, StoreError> {
    serde_json::from_str(doc).map_err(|e| StoreError::Corrupt(format!("trip view: {e}")))
}

/// Trip ids as SQLite stores them, in text.
pub(super) fn parse_trip_ids(ids: &[String]) -> Result<Vec<TripId>, StoreError> {
    ids.iter()
        .map(|id| {
            id.parse()
                .map_err(|_| StoreError::Corrupt(format!("trip id {id:?}")))
        })
        .collect()
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
