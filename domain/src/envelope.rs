//! The envelope of an event: what an append carries and what a read answers, whatever the
//! stream. The trip's events are serialized into it ([`crate::trip::TripEvent::to_new_event`])
//! and read out of it ([`crate::trip::TripEvent::from_stored`]); the store keeps it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// Who caused an event and in answer to what: carried with every event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventMetadata {
    /// `user:{id}`, `worker`, `system`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// The request or job this event is part of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<Uuid>,
    /// The event or command that caused this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causation_id: Option<Uuid>,
    /// W3C trace context of the request that appended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// Digest of the canonical request body of an idempotent creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_digest: Option<String>,
}

/// An event to append.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEvent {
    pub event_id: Uuid,
    pub event_type: String,
    pub schema_version: i32,
    pub data: Value,
    pub metadata: EventMetadata,
}

/// An event as stored, upcast to the current shape of its type.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedEvent {
    pub global_position: i64,
    pub tx_id: u64,
    pub stream_id: String,
    pub version: u64,
    pub event_id: Uuid,
    pub event_type: String,
    pub schema_version: i32,
    pub data: Value,
    pub metadata: EventMetadata,
    pub recorded_at: DateTime<Utc>,
}

impl RecordedEvent {
    /// The cursor just past this event.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            tx_id: self.tx_id,
            position: self.global_position,
        }
    }
}

/// A position in the global log, for subscribers. Ordered by `(tx_id, position)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cursor {
    pub tx_id: u64,
    pub position: i64,
}

impl Cursor {
    /// The beginning of the log.
    pub const START: Cursor = Cursor {
        tx_id: 0,
        position: 0,
    };
}
