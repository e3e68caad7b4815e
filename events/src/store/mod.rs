//! The event store: one port, two adapters.
//!
//! - Appends carry an expected stream version; of concurrent appends at the same version
//!   exactly one wins and the others get [`StoreError::Conflict`].
//! - Every event has a unique `event_id`: appending the same ids again returns the first
//!   append's outcome and writes nothing, which makes retries safe.
//! - The inline trip projection is updated in the append transaction (read-your-writes), and
//!   can be rebuilt from the log.
//! - Subscribers read the global log after a [`Cursor`]. On PostgreSQL the cursor is
//!   `(tx_id, global_position)` below the `pg_snapshot_xmin` fence, so an event committed late
//!   is never skipped; on SQLite appends are serialized, so position order is commit order.

pub mod conformance;
mod postgres;
mod sqlite;
pub mod upcast;

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, SubsecRound, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

pub use self::postgres::PostgresStore;
pub use self::sqlite::SqliteStore;
use crate::ids::{TripId, UserId};
use crate::projection::{ProjectionError, TripView};

/// What the appender believes the stream's version to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectedVersion {
    /// The stream must not exist yet.
    NoStream,
    /// The stream must be exactly at this version (0 = no stream).
    Exact(u64),
    /// No check (used only where order does not matter, such as tests and benchmarks).
    Any,
}

impl fmt::Display for ExpectedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoStream => f.write_str("no stream"),
            Self::Exact(v) => write!(f, "version {v}"),
            Self::Any => f.write_str("any version"),
        }
    }
}

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

/// What an append did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendOutcome {
    /// Stream version of the first appended event.
    pub first_version: u64,
    /// Stream version after the append.
    pub last_version: u64,
    /// Global positions of the appended events, in order.
    pub positions: Vec<i64>,
    /// True when these event ids were already stored: nothing was written this time.
    pub already_appended: bool,
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

/// Why the store refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another append got to the stream first.
    #[error("stream {stream_id} is at version {actual}, not {expected}")]
    Conflict {
        stream_id: String,
        expected: ExpectedVersion,
        actual: u64,
    },
    /// The database failed or could not be reached.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Migrations could not be applied.
    #[error("migration error: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// A stored row does not read back.
    #[error("stored data does not read back: {0}")]
    Corrupt(String),
    /// The inline projection refused an event.
    #[error(transparent)]
    Projection(#[from] ProjectionError),
    /// An append with no events, or ids repeated within one append.
    #[error("invalid append: {0}")]
    InvalidAppend(&'static str),
}

impl StoreError {
    /// Whether the failure is the database being unreachable or overloaded (worth a 503 and a
    /// retry) rather than a refusal.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Self::Database(
                sqlx::Error::Io(_)
                    | sqlx::Error::PoolTimedOut
                    | sqlx::Error::PoolClosed
                    | sqlx::Error::WorkerCrashed
            )
        )
    }
}

/// What a projection rebuild did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RebuildReport {
    pub events: u64,
    pub trips: u64,
}

/// The port every backend implements.
#[async_trait]
pub trait EventStore: Send + Sync + fmt::Debug {
    /// Appends `events` to `stream_id` if it is at `expected`, updating inline projections in
    /// the same transaction.
    async fn append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<AppendOutcome, StoreError>;

    /// Starts an append and holds its transaction open until the returned handle commits or
    /// rolls back. Used to test that subscribers never skip an event committed late.
    async fn begin_append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<Box<dyn PendingAppend>, StoreError>;

    /// Every event of one stream in version order (empty when the stream does not exist).
    async fn read_stream(&self, stream_id: &str) -> Result<Vec<RecordedEvent>, StoreError>;

    /// Up to `limit` events of the global log after `after`, in commit-safe order.
    async fn read_all(&self, after: Cursor, limit: u32) -> Result<Vec<RecordedEvent>, StoreError>;

    /// The saved position of a subscriber (the start when it never saved one).
    async fn load_checkpoint(&self, subscription: &str) -> Result<Cursor, StoreError>;

    /// Saves a subscriber's position.
    async fn save_checkpoint(&self, subscription: &str, cursor: Cursor) -> Result<(), StoreError>;

    /// Replaces every read model with one folded afresh from the whole log.
    async fn rebuild_projections(&self) -> Result<RebuildReport, StoreError>;

    /// Answers when the database does.
    async fn ping(&self) -> Result<(), StoreError>;
}

/// An append whose transaction is still open.
#[async_trait]
pub trait PendingAppend: Send {
    /// Commits, making the events visible.
    async fn commit(self: Box<Self>) -> Result<AppendOutcome, StoreError>;
    /// Rolls back, as if nothing had been appended.
    async fn rollback(self: Box<Self>) -> Result<(), StoreError>;
}

/// Filters of the trip list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TripFilter {
    /// Case-insensitive part of the title.
    pub title: Option<String>,
    /// Trips starting on or after this date.
    pub start_date: Option<NaiveDate>,
    /// Trips ending on or before this date.
    pub end_date: Option<NaiveDate>,
}

/// A page of a list: `page` counts from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub page: u32,
    pub per_page: u32,
}

/// The trip read models, as the transports query them.
#[async_trait]
pub trait TripViews: Send + Sync + fmt::Debug {
    /// The owner of a trip, looked up before anything else is loaded, so that someone else's
    /// trip and a missing one are refused alike.
    async fn trip_owner(&self, trip_id: TripId) -> Result<Option<UserId>, StoreError>;

    /// The read model of one trip.
    async fn trip_view(&self, trip_id: TripId) -> Result<Option<TripView>, StoreError>;

    /// The read model of the trip whose active public link has this code.
    async fn trip_view_by_share(&self, code: &str) -> Result<Option<TripView>, StoreError>;

    /// One page of a user's trips, newest first, and the total matching the filter.
    async fn list_trip_views(
        &self,
        owner: UserId,
        filter: &TripFilter,
        page: Page,
    ) -> Result<(Vec<TripView>, u64), StoreError>;

    /// Every trip read model as stored, ordered by trip id (to compare a rebuild with the
    /// live projection).
    async fn dump_trip_views(&self) -> Result<Vec<Value>, StoreError>;
}

/// What the worker fleet keeps besides events: blobs, heartbeats, and the lease that lets
/// one dispatcher run at a time across API replicas.
#[async_trait]
pub trait WorkStore: Send + Sync + fmt::Debug {
    /// Stores `data` under `key` (a second put of the same key replaces it).
    async fn put_blob(&self, key: &str, data: &[u8]) -> Result<(), StoreError>;
    /// The blob under `key`.
    async fn get_blob(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Deletes every blob of a trip (its upload, tracks and detours: keys `kind:{trip_id}…`).
    /// Answers how many went.
    async fn delete_trip_blobs(&self, trip_id: TripId) -> Result<u64, StoreError>;
    /// Bytes of uploaded files kept for the live trips of `owner` (the upload quota).
    async fn upload_bytes_of(&self, owner: UserId) -> Result<u64, StoreError>;
    /// Records that `worker_id` is alive now.
    async fn heartbeat(&self, worker_id: &str) -> Result<(), StoreError>;
    /// Workers seen within the last `within`.
    async fn live_workers(&self, within: std::time::Duration) -> Result<u64, StoreError>;
    /// Takes the named lease if nobody holds it; it is held until the handle is dropped (or,
    /// on PostgreSQL, until its connection dies, so a crashed holder frees it).
    async fn try_lease(&self, name: &str) -> Result<Option<Box<dyn Lease>>, StoreError>;
}

/// A held lease.
pub trait Lease: Send + Sync + fmt::Debug {}

/// Every half of a backend.
pub trait Store: EventStore + TripViews + WorkStore {}
impl<T: EventStore + TripViews + WorkStore> Store for T {}

/// Timestamps are stored with microsecond precision on both backends, so that a projection
/// rebuilt from stored events equals the one written live.
pub(crate) fn now_micros() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// The category of a stream (`trip` for `trip-…`), stored with it.
pub(crate) fn stream_type(stream_id: &str) -> &str {
    stream_id
        .split_once('-')
        .map_or(stream_id, |(kind, _)| kind)
}

/// Refuses appends that could never be right.
pub(crate) fn check_append(events: &[NewEvent]) -> Result<(), StoreError> {
    if events.is_empty() {
        return Err(StoreError::InvalidAppend(
            "an append needs at least one event",
        ));
    }
    let mut ids: Vec<Uuid> = events.iter().map(|e| e.event_id).collect();
    ids.sort();
    ids.dedup();
    if ids.len() != events.len() {
        return Err(StoreError::InvalidAppend(
            "event ids repeat within one append",
        ));
    }
    Ok(())
}

/// Folds the new events of a trip stream into its read model. `None` when the stream is not a
/// trip's; `Some(None)` when the trip's view must be removed.
pub(crate) fn project_trip(
    stream_id: &str,
    current: Option<TripView>,
    events: &[RecordedEvent],
) -> Result<Option<Option<TripView>>, StoreError> {
    if TripId::from_stream_id(stream_id).is_none() {
        return Ok(None);
    }
    let mut view = current;
    for event in events {
        view = TripView::apply(view, event)?;
    }
    Ok(Some(view))
}

/// The outcome of an append whose events are all already stored, if they are.
pub(crate) fn existing_outcome(
    expected_count: usize,
    rows: impl Iterator<Item = (i64, i64)>,
) -> Option<AppendOutcome> {
    let rows: Vec<(i64, i64)> = rows.collect();
    if rows.len() != expected_count || rows.is_empty() {
        return None;
    }
    Some(AppendOutcome {
        first_version: rows[0].0 as u64,
        last_version: rows[rows.len() - 1].0 as u64,
        positions: rows.iter().map(|r| r.1).collect(),
        already_appended: true,
    })
}

/// Whether a stream at `current` may take an append expecting `expected`.
pub(crate) fn version_matches(expected: ExpectedVersion, current: Option<u64>) -> bool {
    match expected {
        ExpectedVersion::NoStream | ExpectedVersion::Exact(0) => current.is_none(),
        ExpectedVersion::Exact(v) => current == Some(v),
        ExpectedVersion::Any => true,
    }
}
