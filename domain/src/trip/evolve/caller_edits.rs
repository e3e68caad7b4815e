//! A caller's changes in the state: the settings, the plan, the days. Each moves the
//! version and marks pending what it made stale.

use chrono::NaiveDate;

use crate::trip::plan::RoutePlan;
use crate::trip::settings::TripSettings;
use crate::trip::source::SourceUrl;
use crate::trip::stage::Stage;
use crate::trip::{Category, ComputationStatus, Trip};

/// The settings are `settings` now; what they `invalidated` waits to be computed again.
pub(super) fn settings_updated(
    trip: &mut Trip,
    settings: &TripSettings,
    invalidated: &[Category],
    version: u64,
) {
    trip.settings = settings.clone();
    trip.version = version;
    trip.callers_version = Some(version);
    trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
}

/// A planned trip follows another plan (its route is asked for by the event that follows).
pub(super) fn replanned(trip: &mut Trip, plan: &RoutePlan, version: u64) {
    trip.source = SourceUrl::planned(plan.clone());
    trip.version = version;
    trip.callers_version = Some(version);
}

/// The days are `stages` now, and the trip ends on `end_date`; what the edit `invalidated`
/// waits to be computed again.
pub(super) fn stages_edited(
    trip: &mut Trip,
    stages: &[Stage],
    end_date: Option<NaiveDate>,
    invalidated: &[Category],
    version: u64,
) {
    trip.stages = stages.to_vec();
    trip.settings.end_date = end_date;
    trip.version = version;
    trip.callers_version = Some(version);
    trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
}
