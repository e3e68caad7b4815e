//! The rows PostgreSQL hands back: the event columns reads select and how they decode.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgRow;

use crate::{EventMetadata, RecordedEvent, StoreError, upcast};

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
