//! A caller's changes in the state: the settings, the plan, the days. Each moves the
//! version and marks pending what it made stale.

use chrono::NaiveDate;

use crate::trip::plan::RoutePlan;
use crate::trip::settings::TripSettings;
use crate::trip::source::SourceUrl;
use crate::trip::stage::Stage;
use crate::trip::{Category, ComputationStatus, KeptDays, Trip, TripEvent};

/// Before a caller's change of the settings or the plan (which may route or cut the days
/// again): the days as they are, kept until new ones exist, so a route that fails brings
/// them back. A change made while the days are still being computed keeps the last days
/// there were. Any caller's change ends the notice of an earlier failed one.
pub(super) fn keep_days_before_change(trip: &mut Trip, event: &TripEvent) {
    match event {
        TripEvent::TripSettingsUpdated { .. } | TripEvent::TripReplanned { .. } => {
            if trip.has_days() {
                trip.before_reroute = Some(Box::new(KeptDays {
                    version: trip.version,
                    source: trip.source.clone(),
                    settings: trip.settings.clone(),
                    route: trip.route.clone(),
                    stages: trip.stages.clone(),
                    days_edited: trip.days_edited,
                }));
            }
            trip.notice = None;
        }
        TripEvent::StagesEdited { .. } => trip.notice = None,
        _ => {}
    }
}

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
    trip.days_edited = true;
    trip.settings.end_date = end_date;
    trip.version = version;
    trip.callers_version = Some(version);
    trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
}
