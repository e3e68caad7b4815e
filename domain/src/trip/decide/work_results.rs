//! A worker's answers: a job started, its result, or its failure, for the route, the
//! analysis, an accommodation scan or a detour. Each is about one pacing generation and is
//! refused once a re-pacing replaced it. A redelivered answer writes nothing more.

use crate::trip::stage::ANALYSIS_CATEGORIES;
use uuid::Uuid;

use crate::trip::edits::Measure;

use crate::trip::stage::{
    DETOUR_INVALIDATES, Detour, RouteSummary, Stage, StageAlerts, Unavailable,
};
use crate::trip::{Category, ComputationStatus, StageAccommodations, Trip, TripError, TripEvent};

use super::guards::{days_exist, existing_at_generation, stage_of};

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

/// A worker starts analysing `categories`; only those still pending are recorded.
pub(super) fn start_analysis(
    live: Option<&Trip>,
    generation: u64,
    categories: Vec<Category>,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    let pending: Vec<Category> = categories
        .into_iter()
        .filter(|c| trip.status(*c) == ComputationStatus::Pending)
        .collect();
    if pending.is_empty() || !trip.has_days() {
        return Ok(vec![]);
    }
    Ok(vec![TripEvent::AnalysisStarted {
        generation,
        categories: pending,
    }])
}

/// The analysis's results: alerts per day, what was computed, what could not be.
pub(super) fn record_analysis(
    live: Option<&Trip>,
    generation: u64,
    stages: Vec<StageAlerts>,
    done: Vec<Category>,
    unavailable: Vec<Unavailable>,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing_at_generation(live, generation)?;
    days_exist(trip)?;
    Ok(vec![TripEvent::AnalysisCompleted {
        generation,
        stages,
        done,
        unavailable,
    }])
}

/// A scan's results, per day.
pub(super) fn record_accommodations(
    live: Option<&Trip>,
    generation: u64,
    stages: Vec<StageAccommodations>,
) -> Result<Vec<TripEvent>, TripError> {
    existing_at_generation(live, generation)?;
    Ok(vec![TripEvent::AccommodationsFound { generation, stages }])
}

/// A scan that could not run: the category is failed, with the reason.
pub(super) fn fail_accommodations(
    live: Option<&Trip>,
    generation: u64,
    reason: String,
) -> Result<Vec<TripEvent>, TripError> {
    existing_at_generation(live, generation)?;
    Ok(vec![TripEvent::AnalysisCompleted {
        generation,
        stages: Vec::new(),
        done: Vec::new(),
        unavailable: vec![Unavailable {
            category: Category::Accommodations,
            reason,
        }],
    }])
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
