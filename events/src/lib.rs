//! Etappe's storage: the event log, the trip read model and the work tables, on SQLite or
//! PostgreSQL, and the one path every command takes through them.
//!
//! Imports point one way: [`log`] (the event-log port) knows envelopes and streams, never a
//! trip; [`views`] (the read-model port) and [`command`] (the command path) know the trip
//! projection of `etappe-domain`; `sql_store` implements both ports once over an SQL dialect,
//! which each adapter ([`PostgresStore`], [`SqliteStore`]) supplies with its work tables.
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
//!
//! The test-only API (the [`conformance`] suite, appends held open, dumps of the read model)
//! is behind the `testing` feature.

pub mod command;
#[cfg(feature = "testing")]
pub mod conformance;
pub mod log;
mod postgres;
mod sql_store;
mod sqlite;
pub mod upcast;
pub mod views;
pub mod work;

pub use etappe_domain::envelope::{Cursor, EventMetadata, NewEvent, RecordedEvent};

pub use self::command::{CommandMetadata, DecidedOn, EventIds, ExecuteError, Executed};
#[cfg(feature = "testing")]
pub use self::log::PendingAppend;
pub use self::log::{AppendOutcome, EventLog, EventStore, ExpectedVersion, StoreError};
pub use self::postgres::PostgresStore;
pub use self::sqlite::SqliteStore;
pub use self::views::{Page, RebuildReport, TripAppend, TripFilter, TripQueries, TripViews};
pub use self::work::{LEASE_TTL, Lease, WorkStore};

/// Every half of a backend.
pub trait Store: EventStore + TripViews + WorkStore {}
impl<T: EventStore + TripViews + WorkStore> Store for T {}
