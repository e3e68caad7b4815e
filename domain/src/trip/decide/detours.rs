//! A day's detour through a waypoint: asked for, removed, and the worker's answer. None moves
//! the version.

use super::guards::{days_open_to_work, existing_at_generation, stage_of};
use crate::trip::edits::{self, Measure};
use crate::trip::stage::{DETOUR_INVALIDATES, Detour, Point};
use crate::trip::{FieldError, Trip, TripError, TripEvent};
use chrono::NaiveDate;
use uuid::Uuid;

/// Re-routes a riding day through `waypoint` (a worker computes the detour).
pub(super) fn request_waypoint(
    live: Option<&Trip>,
    stage_id: Uuid,
    waypoint: Point,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = days_open_to_work(live, today)?;
    let stage = stage_of(trip, stage_id)?;
    if stage.is_rest_day {
        return Err(TripError::Invalid(vec![FieldError::new(
            "stageId",
            "a rest day has no route to re-route; name a riding day",
        )]));
    }
    if !edits::input::coordinates_valid(waypoint.lat, waypoint.lon) {
        return Err(TripError::Invalid(vec![FieldError::new(
            "waypointLat",
            "waypointLat must be -90…90 and waypointLon -180…180",
        )]));
    }
    Ok(vec![TripEvent::WaypointRequested {
        generation: trip.generation,
        stage_id,
        waypoint,
    }])
}

/// Removes a day's detour (or the one still being computed): the day rides its own roads
/// again, measured as `own`, and what is read off them is asked again.
pub(super) fn remove_detour(
    live: Option<&Trip>,
    stage_id: Uuid,
    own: Measure,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = days_open_to_work(live, today)?;
    let stage = stage_of(trip, stage_id)?;
    if stage.detour.is_none() && stage.waypoint_pending.is_none() {
        return Err(TripError::NoDetour);
    }
    Ok(vec![
        TripEvent::DetourRemoved {
            generation: trip.generation,
            stage_id,
            measure: own.rounded(),
        },
        TripEvent::AnalysisRequested {
            generation: trip.generation,
            categories: DETOUR_INVALIDATES.to_vec(),
        },
    ])
}

/// A day re-routed through its waypoint, with the figures of its new roads.
pub(super) fn record_detour(
    live: Option<&Trip>,
    generation: u64,
    stage_id: Uuid,
    detour: Detour,
    measure: Measure,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    // The day was deleted or merged meanwhile: the detour has nowhere to go.
    let stage = stage_of(trip, stage_id)?;
    // The detour was removed, or asked again through another point, meanwhile: this
    // result answers a question nobody asks any more. (A day without a pending
    // point but with this very detour is a redelivery: the store's idempotent
    // append answers it, so it is judged like the first delivery.)
    let asked = stage.waypoint_pending.as_ref() == Some(&detour.waypoint)
        || stage
            .detour
            .as_ref()
            .is_some_and(|d| d.track_key == detour.track_key);
    if !asked {
        return Err(TripError::NoDetour);
    }
    // A cut of the day moved while its detour was computed over the old slice: its figures
    // count other roads. The job ends, visibly; the rider asks again on the day as it is.
    if let Some(span) = detour.spliced_day
        && stage.detour.as_ref().map(|d| &d.track_key) != Some(&detour.track_key)
        && (span.first_point, span.last_point) != (stage.first_point, stage.last_point)
    {
        return Ok(vec![TripEvent::DetourFailed {
            generation,
            stage_id,
            reason: format!(
                "day {} changed while its detour was computed: ask for the detour again",
                stage.day_number
            ),
        }]);
    }
    // The day's roads changed: what is read off them is asked again. The version does
    // not move (a detour is not a structural edit).
    Ok(vec![
        TripEvent::StageRerouted {
            generation,
            stage_id,
            detour,
            measure,
        },
        TripEvent::AnalysisRequested {
            generation,
            categories: DETOUR_INVALIDATES.to_vec(),
        },
    ])
}
