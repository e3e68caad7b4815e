//! The route's work: a worker starts, records or fails the route job of a pacing generation;
//! an answer about a generation a re-pacing replaced is refused, a redelivered one writes
//! nothing more.

use super::guards::existing_at_generation;
use crate::trip::stage::{ANALYSIS_CATEGORIES, RouteSummary, Stage};
use crate::trip::{Category, ComputationStatus, Trip, TripError, TripEvent};
use uuid::Uuid;

/// A worker starts the route job of `generation`.
pub(super) fn start_route(
    live: Option<&Trip>,
    generation: u64,
    job_id: Uuid,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    // A redelivered job whose route is already done (or running) writes nothing more.
    if trip.status(Category::Route) != ComputationStatus::Pending {
        return Ok(vec![]);
    }
    Ok(vec![TripEvent::RouteComputationStarted {
        generation,
        job_id,
    }])
}

/// The route cut into days: the days appear, and the version moves with them.
pub(super) fn record_route(
    live: Option<&Trip>,
    generation: u64,
    route: RouteSummary,
    stages: Vec<Stage>,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    if trip.status(Category::Route) == ComputationStatus::Done {
        return Ok(vec![]);
    }
    Ok(vec![TripEvent::RouteComputed {
        generation,
        route,
        stages,
        version: trip.version + 1,
    }])
}

/// The route failed for good (unless it is already settled).
pub(super) fn fail_route(
    live: Option<&Trip>,
    generation: u64,
    reason: String,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    if route_settled(trip) {
        return Ok(vec![]);
    }
    Ok(route_failed(trip, generation, reason))
}

/// The route of `generation` failed for good: recorded, and when the change that asked for
/// it replaced days, those days come back (a re-route is applied only when it succeeds),
/// with the failure said beside them.
pub(super) fn route_failed(trip: &Trip, generation: u64, reason: String) -> Vec<TripEvent> {
    let Some(kept) = trip.before_reroute.as_deref() else {
        return vec![TripEvent::RouteFailed { generation, reason }];
    };
    let restored = generation + 1;
    let because = format!(
        "The change after version {} could not be routed, so the days of version {} are kept: {reason}",
        kept.version, kept.version
    );
    vec![
        TripEvent::RouteFailed { generation, reason },
        TripEvent::TripRestored {
            from_version: kept.version,
            source: kept.source.clone(),
            settings: kept.settings.clone(),
            route: kept.route.clone(),
            stages: kept.stages.clone(),
            generation: restored,
            version: trip.version + 1,
            because: Some(because),
        },
        TripEvent::AnalysisRequested {
            generation: restored,
            categories: ANALYSIS_CATEGORIES.to_vec(),
        },
    ]
}

/// Whether the route of the current generation has its answer (done or failed), so a
/// failure arriving later changes nothing.
pub(super) fn route_settled(trip: &Trip) -> bool {
    matches!(
        trip.status(Category::Route),
        ComputationStatus::Done | ComputationStatus::Failed
    )
}
