//! Days coming within the forecast horizon, noticed on read. A day beyond the horizon when
//! the weather was computed reads `beyond_horizon`; once its date is within today + 15, the
//! next read of the trip (its detail, `get_trip`, a day's detail) asks for the weather alone
//! to be computed again, at most once per trip every [`REFRESH_EVERY`] in a process.
//!
//! On read rather than a scheduled job: only trips someone looks at cost a forecast request
//! (a rider planning months ahead reads the trip far less often than a daily sweep would
//! ask), no scheduler or clock has to run beside the dispatcher, and the event log stays
//! the one outbox (the refresh is an `AnalysisRequested` event like any other). The cost is
//! that a trip nobody reads keeps its `beyond_horizon` days until it is read.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::TripCommand;
use etappe_events::{CommandMetadata, DecidedOn, EventIds, EventMetadata};

use super::TripService;
use crate::views::today;

/// How often one trip may ask for its weather again on read, per process.
pub(super) const REFRESH_EVERY: Duration = Duration::from_secs(600);
/// Trips remembered before the old ones are forgotten (a bound on memory, not a policy).
const REMEMBERED: usize = 10_000;

/// When each trip last asked, in this process.
#[derive(Debug, Default)]
pub(super) struct Refreshes {
    asked: Mutex<HashMap<TripId, Instant>>,
}

impl Refreshes {
    /// Whether `trip` may ask now (and, if so, that it asked).
    pub(super) fn admit(&self, trip: TripId, now: Instant) -> bool {
        let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
        if asked
            .get(&trip)
            .is_some_and(|at| now.saturating_duration_since(*at) < REFRESH_EVERY)
        {
            return false;
        }
        if asked.len() >= REMEMBERED {
            asked.retain(|_, at| now.saturating_duration_since(*at) < REFRESH_EVERY);
        }
        asked.insert(trip, now);
        true
    }
}

impl TripService {
    /// Asks for the weather again when a day of `view` came within the horizon. A failure is
    /// logged, never the reader's: the read answers either way.
    pub(crate) async fn refresh_weather_if_due(&self, view: &TripView) {
        let today = today();
        let trip = &view.trip;
        if trip.is_locked(today)
            || !trip.weather_due(today)
            || !self.weather_refreshes.admit(trip.id, Instant::now())
        {
            return;
        }
        let meta = CommandMetadata {
            metadata: EventMetadata {
                actor: Some("system:weather-horizon".into()),
                ..Default::default()
            },
            ids: EventIds::Fresh,
        };
        match self
            .store
            .execute(trip.id, DecidedOn::Current, &meta, |_| {
                TripCommand::RefreshWeather { today }
            })
            .await
        {
            Ok(_) => {
                tracing::info!(trip = %trip.id, "a day came within the forecast horizon: weather asked again");
            }
            Err(error) => {
                tracing::warn!(trip = %trip.id, %error, "could not ask for the weather again");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trip_asks_once_per_period() {
        let refreshes = Refreshes::default();
        let (a, b) = (
            TripId(uuid::Uuid::from_u128(1)),
            TripId(uuid::Uuid::from_u128(2)),
        );
        let now = Instant::now();
        assert!(refreshes.admit(a, now));
        assert!(!refreshes.admit(a, now + Duration::from_secs(599)));
        assert!(refreshes.admit(b, now), "another trip is not held back");
        assert!(refreshes.admit(a, now + REFRESH_EVERY));
    }
}
