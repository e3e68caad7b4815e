//! `evolve`: the trip's state after one more event, and `fold`, the state after a history.
//! Pure and total: it never fails, since an event is a fact already accepted.
//!
//! This file only dispatches: each group of events is folded in a module of its own, as
//! `decide` judges the commands that cause them: the trip's life as a whole
//! ([`lifecycle`]), its public link ([`sharing`]), a caller's changes ([`edits`]),
//! and the work on the days ([`route`], [`analysis`], [`detours`]).

mod analysis;
mod detours;
mod edits;
mod lifecycle;
mod route;
mod sharing;

use crate::trip::{Trip, TripEvent};

/// Folds one event into the state. Never fails: an event is a fact already accepted.
pub fn evolve(state: Option<Trip>, event: &TripEvent) -> Option<Trip> {
    let Some(mut trip) = state else {
        return lifecycle::born(event);
    };
    evolve_existing(&mut trip, event);
    Some(trip)
}

/// Whether work reported for `generation` is about the trip's current days: work of a
/// generation a re-pacing (or a restore) replaced changes nothing.
fn current(trip: &Trip, generation: u64) -> bool {
    generation == trip.generation
}

/// Folds one event into an existing trip.
fn evolve_existing(trip: &mut Trip, event: &TripEvent) {
    edits::keep_days_before_change(trip, event);
    match event {
        TripEvent::TripRestored {
            source,
            settings,
            route,
            stages,
            generation,
            version,
            because,
            ..
        } => lifecycle::restored(
            trip,
            source,
            settings,
            route.as_ref(),
            stages,
            *generation,
            *version,
            because.as_deref(),
        ),
        TripEvent::TripDeleted => lifecycle::deleted(trip),
        TripEvent::TripShared { code, at } => sharing::shared(trip, code, *at),
        TripEvent::TripUnshared => sharing::unshared(trip),
        TripEvent::TripSettingsUpdated {
            settings,
            invalidated,
            version,
            ..
        } => edits::settings_updated(trip, settings, invalidated, *version),
        TripEvent::TripReplanned { plan, version } => edits::replanned(trip, plan, *version),
        TripEvent::StagesEdited {
            stages,
            end_date,
            invalidated,
            version,
            ..
        } => edits::stages_edited(trip, stages, *end_date, invalidated, *version),
        TripEvent::RouteRequested { generation } => route::route_requested(trip, *generation),
        TripEvent::RouteComputationStarted { generation, .. } if current(trip, *generation) => {
            route::route_started(trip);
        }
        TripEvent::RouteComputed {
            generation,
            route,
            stages,
            version,
        } if current(trip, *generation) => {
            route::route_computed(trip, route, stages, *version);
        }
        TripEvent::RouteFailed { generation, reason } if current(trip, *generation) => {
            route::route_failed(trip, reason);
        }
        TripEvent::AnalysisRequested {
            generation,
            categories,
        } if current(trip, *generation) => analysis::analysis_requested(trip, categories),
        TripEvent::AnalysisStarted {
            generation,
            categories,
        } if current(trip, *generation) => analysis::analysis_started(trip, categories),
        TripEvent::AnalysisCompleted {
            generation,
            stages,
            done,
            unavailable,
        } if current(trip, *generation) => {
            analysis::analysis_completed(trip, stages, done, unavailable);
        }
        TripEvent::AccommodationScanRequested { generation, .. } if current(trip, *generation) => {
            analysis::accommodation_scan_requested(trip);
        }
        TripEvent::AccommodationsFound { generation, stages } if current(trip, *generation) => {
            analysis::accommodations_found(trip, stages);
        }
        TripEvent::WaypointRequested {
            generation,
            stage_id,
            waypoint,
        } if current(trip, *generation) => {
            detours::waypoint_requested(trip, *stage_id, *waypoint);
        }
        TripEvent::StageRerouted {
            generation,
            stage_id,
            detour,
            measure,
        } if current(trip, *generation) => {
            detours::stage_rerouted(trip, *stage_id, detour, *measure);
        }
        TripEvent::DetourFailed {
            generation,
            stage_id,
            reason,
        } if current(trip, *generation) => detours::detour_failed(trip, *stage_id, reason),
        TripEvent::DetourRemoved {
            generation,
            stage_id,
            measure,
        } if current(trip, *generation) => {
            detours::detour_removed(trip, *stage_id, *measure);
        }
        // A trip is born once (a second birth changes nothing), and work of a replaced
        // generation is dropped.
        _ => {}
    }
}

/// Folds a whole history.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a TripEvent>) -> Option<Trip> {
    events.into_iter().fold(None, evolve)
}
