//! The read-model port: the trip views the transports query, and the append that answers
//! the view it projected in its own transaction (what the command path writes through).

use std::fmt;

use async_trait::async_trait;
use chrono::NaiveDate;
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::projection::{ProjectionError, TripView};

use crate::{AppendOutcome, ExpectedVersion, NewEvent, StoreError};

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

/// What a projection rebuild did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RebuildReport {
    pub events: u64,
    pub trips: u64,
}

/// What an append to a trip's stream did, and the trip's view as that same transaction
/// projected it (`None` once the trip is deleted, or when the events were already stored
/// and nothing was projected).
#[derive(Clone, Debug, PartialEq)]
pub struct TripAppend {
    pub outcome: AppendOutcome,
    pub view: Option<TripView>,
}

impl From<ProjectionError> for StoreError {
    fn from(error: ProjectionError) -> Self {
        StoreError::Projection(error.to_string())
    }
}

/// The trip read model's lookups, the sweeper's and an account deletion's: the half of the
/// read-model port each backend answers with its own statements.
#[async_trait]
pub trait TripQueries: Send + Sync + fmt::Debug {
    /// The owner of a trip, looked up before anything else is loaded, so that someone else's
    /// trip and a missing one are refused alike.
    async fn trip_owner(&self, trip_id: TripId) -> Result<Option<UserId>, StoreError>;

    /// The read model of the trip whose active public link has this code.
    async fn trip_view_by_share(&self, code: &str) -> Result<Option<TripView>, StoreError>;

    /// One page of a user's trips, newest first, and the total matching the filter.
    async fn list_trip_views(
        &self,
        owner: UserId,
        filter: &TripFilter,
        page: Page,
    ) -> Result<(Vec<TripView>, u64), StoreError>;

    /// Trips whose work has not ended (a category waiting or running) and that nothing has
    /// touched since `quiet_since`: work a dead worker or a lost job left behind, for the
    /// sweeper to ask again. At most `limit`, the longest quiet first.
    async fn stale_open_work(
        &self,
        quiet_since: chrono::DateTime<chrono::Utc>,
        limit: u32,
    ) -> Result<Vec<TripId>, StoreError>;

    /// Every trip `owner` ever had, deleted ones included (their streams outlive the read
    /// model): the trips whose first event names `owner`, and those the read model lists.
    /// Ordered by trip id.
    async fn owned_trips(&self, owner: UserId) -> Result<Vec<TripId>, StoreError>;

    /// Erases `trips` entirely, in one transaction: their events, streams, read models
    /// (and with them their share links) and files. For an account's deletion: the log is
    /// append-only for everything else. Answers how many events were removed.
    async fn purge_trips(&self, trips: &[TripId]) -> Result<u64, StoreError>;
}

/// The read-model port: one trip's view and the append that projects it, written once for
/// every backend, over its lookups.
#[async_trait]
pub trait TripViews: TripQueries {
    /// The read model of one trip.
    async fn trip_view(&self, trip_id: TripId) -> Result<Option<TripView>, StoreError>;

    /// Appends to the trip's stream like [`crate::EventStore::append`] and answers the view
    /// the append projected, so a writer never reads back what it just wrote.
    async fn append_to_trip(
        &self,
        trip_id: TripId,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<TripAppend, StoreError>;

    /// Replaces every read model with one folded afresh from the whole log.
    async fn rebuild_projections(&self) -> Result<RebuildReport, StoreError>;

    /// Every trip read model as stored, ordered by trip id (to compare a rebuild with the
    /// live projection).
    #[cfg(feature = "testing")]
    async fn dump_trip_views(&self) -> Result<Vec<serde_json::Value>, StoreError>;
}
