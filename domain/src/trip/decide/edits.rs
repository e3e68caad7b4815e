//! A caller's change of the settings (and, for a planned trip, of its plan): judged, then
//! answered with the change and the work it makes stale.

use chrono::NaiveDate;

use crate::trip::plan::RoutePlan;
use crate::trip::settings::{Invalidation, SettingsPatch};
use crate::trip::{Trip, TripError, TripEvent};

use super::guards::open_at_version;

/// Applies `patch` (and a new `plan`) to the settings. Guard order: existence, lock, version,
/// then the settings' own rules.
pub(super) fn update_settings(
    live: Option<&Trip>,
    patch: &SettingsPatch,
    plan: Option<RoutePlan>,
    expected_version: u64,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = open_at_version(live, expected_version, today)?;
    let after = patch.apply_to(&trip.settings);
    let errors = after.cross_field_errors();
    if !errors.is_empty() {
        return Err(TripError::Invalid(errors));
    }
    if plan.is_some() && trip.source.plan.is_none() {
        return Err(TripError::NotPlanned);
    }
    let replanned = plan.filter(|p| trip.source.plan.as_deref() != Some(p));
    let changed = trip.settings.changed_fields(&after);
    if changed.is_empty() && replanned.is_none() {
        return Ok(vec![]);
    }
    let invalidation = Invalidation::between(&trip.settings, &after);
    // Every change a caller makes moves the version, recomputing or not: a title
    // edit made under a stale version must be refused, not silently lost.
    let version = trip.version + 1;
    let mut events = Vec::new();
    if !changed.is_empty() {
        events.push(TripEvent::TripSettingsUpdated {
            settings: after,
            changed,
            invalidated: invalidation.categories.iter().copied().collect(),
            version,
        });
    }
    let replanning = replanned.is_some();
    if let Some(plan) = replanned {
        events.push(TripEvent::TripReplanned { plan, version });
    }
    events.extend(work_made_stale(trip, replanning, &invalidation));
    Ok(events)
}

/// The work a change makes stale: other places or another profile (a new plan) mean another
/// route, and so does another pacing: new days, under a new generation. A change the days
/// survive asks again only the analysis it invalidated, and only when there are days.
fn work_made_stale(
    trip: &Trip,
    replanning: bool,
    invalidation: &Invalidation,
) -> Option<TripEvent> {
    if replanning || invalidation.repace {
        Some(TripEvent::RouteRequested {
            generation: trip.generation + 1,
        })
    } else if !invalidation.categories.is_empty() && trip.has_days() {
        Some(TripEvent::AnalysisRequested {
            generation: trip.generation,
            categories: invalidation.categories.iter().copied().collect(),
        })
    } else {
        None
    }
}
