//! The trip read model: what the transports serve, folded from the trip's events by the same
//! `evolve` the aggregate uses, plus what only a reader needs (when it was created and last
//! changed). Written inline in the append transaction; rebuilt from the log on demand.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::envelope::RecordedEvent;
use crate::trip::{Trip, TripEvent, TripEventError, evolve};

/// One trip as readers see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TripView {
    pub trip: Trip,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The stream version folded so far (every event, enrichments included).
    pub stream_version: u64,
}

/// A stored event the projection cannot read.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    #[error(transparent)]
    Event(#[from] TripEventError),
}

impl TripView {
    /// Folds one recorded trip event into the view; `None` once the trip is deleted.
    pub fn apply(
        view: Option<TripView>,
        event: &RecordedEvent,
    ) -> Result<Option<TripView>, ProjectionError> {
        let trip_event =
            TripEvent::from_stored(&event.event_type, event.schema_version, &event.data)?;
        let (trip, created_at) = match view {
            Some(v) => (Some(v.trip), v.created_at),
            None => (None, event.recorded_at),
        };
        // A deleted trip has no view; whatever lands on its stream afterwards leaves it gone.
        let Some(trip) = evolve(trip, &trip_event).filter(|t| !t.deleted) else {
            return Ok(None);
        };
        Ok(Some(TripView {
            trip,
            created_at,
            updated_at: event.recorded_at,
            stream_version: event.version,
        }))
    }
}
