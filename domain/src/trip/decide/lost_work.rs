//! Work lost or given up: work of the current version that has not ended is asked for again
//! (a lost job, found by the sweeper); work the fleet gave up (retries exhausted, a delivery
//! limit met, a payload no worker could finish) ends as failed, with a reason a person can
//! act on.

use super::guards::{existing, existing_at_generation};
use super::route::{route_failed, route_settled};
use crate::trip::stage::Unavailable;
use crate::trip::{Category, ComputationStatus, GivenUpWork, Trip, TripError, TripEvent};
use uuid::Uuid;

/// Asks again for the work of the current version that has not ended: the route under a new
/// generation (the lost job's late answer is then superseded), else the analysis categories
/// still open. Nothing when everything has ended.
pub(super) fn resume_work(live: Option<&Trip>) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing(live)?;
    if matches!(
        trip.status(Category::Route),
        ComputationStatus::Pending | ComputationStatus::Running
    ) {
        return Ok(vec![TripEvent::RouteRequested {
            generation: trip.generation + 1,
        }]);
    }
    let open = trip.open_analysis();
    if open.is_empty() || !trip.has_days() {
        return Ok(vec![]);
    }
    Ok(vec![TripEvent::AnalysisRequested {
        generation: trip.generation,
        categories: open,
    }])
}

/// The events that record a given-up job: the work it did ends as failed with `reason`.
/// Work that already has its answer (or whose day is gone) records nothing.
pub(super) fn give_up(
    live: Option<&Trip>,
    generation: u64,
    work: GivenUpWork,
    reason: String,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    Ok(match work {
        GivenUpWork::Route => {
            if route_settled(trip) {
                vec![]
            } else {
                route_failed(trip, generation, reason)
            }
        }
        GivenUpWork::Analysis(categories) => {
            categories_unavailable(trip, generation, categories, &reason)
        }
        GivenUpWork::Accommodations => {
            categories_unavailable(trip, generation, vec![Category::Accommodations], &reason)
        }
        GivenUpWork::Detour { stage_id } => detour_failed(trip, generation, stage_id, reason),
    })
}

/// The categories still open (pending or running) end as unavailable with `reason`; the
/// settled ones keep their answer.
fn categories_unavailable(
    trip: &Trip,
    generation: u64,
    categories: Vec<Category>,
    reason: &str,
) -> Vec<TripEvent> {
    let still_open: Vec<Unavailable> = categories
        .into_iter()
        .filter(|c| {
            matches!(
                trip.status(*c),
                ComputationStatus::Pending | ComputationStatus::Running
            )
        })
        .map(|category| Unavailable {
            category,
            reason: reason.to_owned(),
        })
        .collect();
    if still_open.is_empty() || !trip.has_days() {
        return vec![];
    }
    vec![TripEvent::AnalysisCompleted {
        generation,
        stages: Vec::new(),
        done: Vec::new(),
        unavailable: still_open,
    }]
}

/// The day keeps its roads and says why its detour failed (unless the day is gone).
fn detour_failed(trip: &Trip, generation: u64, stage_id: Uuid, reason: String) -> Vec<TripEvent> {
    if trip.stages.iter().any(|s| s.id == stage_id) {
        vec![TripEvent::DetourFailed {
            generation,
            stage_id,
            reason,
        }]
    } else {
        vec![]
    }
}
