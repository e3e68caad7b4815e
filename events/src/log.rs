//! The event-log port: streams of versioned events, a global log for subscribers, and their
//! checkpoints. It knows envelopes and stream ids, never what a stream is about.

use std::fmt;

use async_trait::async_trait;

use crate::{Cursor, NewEvent, RecordedEvent};

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
    /// An inline projection refused an event (its reason, as the projection words it).
    #[error("{0}")]
    Projection(String),
    /// An append with no events, or ids repeated within one append.
    #[error("invalid append: {0}")]
    InvalidAppend(&'static str),
    /// The database's schema is behind this build and this process does not migrate.
    #[error("{0}")]
    NotMigrated(String),
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

/// The log as subscribers and rebuilds read it, their checkpoints, and the database's health:
/// the half of the event-log port each backend answers with its own statements.
#[async_trait]
pub trait EventLog: Send + Sync + fmt::Debug {
    /// Every event of one stream in version order (empty when the stream does not exist).
    async fn read_stream(&self, stream_id: &str) -> Result<Vec<RecordedEvent>, StoreError>;

    /// The stream's length, from its guard row (0 when it does not exist): what the next
    /// append must expect, without reading a single event.
    async fn stream_version(&self, stream_id: &str) -> Result<u64, StoreError>;

    /// Up to `limit` events of the global log after `after`, in commit-safe order.
    async fn read_all(&self, after: Cursor, limit: u32) -> Result<Vec<RecordedEvent>, StoreError>;

    /// The saved position of a subscriber (the start when it never saved one).
    async fn load_checkpoint(&self, subscription: &str) -> Result<Cursor, StoreError>;

    /// Saves a subscriber's position.
    async fn save_checkpoint(&self, subscription: &str, cursor: Cursor) -> Result<(), StoreError>;

    /// Answers when the database does.
    async fn ping(&self) -> Result<(), StoreError>;
}

/// The event-log port: the appends, written once for every backend, over the log's reads.
#[async_trait]
pub trait EventStore: EventLog {
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
    #[cfg(feature = "testing")]
    async fn begin_append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<Box<dyn PendingAppend>, StoreError>;
}

/// An append whose transaction is still open.
#[cfg(feature = "testing")]
#[async_trait]
pub trait PendingAppend: Send {
    /// Commits, making the events visible.
    async fn commit(self: Box<Self>) -> Result<AppendOutcome, StoreError>;
    /// Rolls back, as if nothing had been appended.
    async fn rollback(self: Box<Self>) -> Result<(), StoreError>;
}
