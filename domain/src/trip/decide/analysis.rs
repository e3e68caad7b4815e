//! The analysis's work: a caller asks for it again (or for the weather once a day comes within
//! the forecast horizon, or an accommodation scan), a worker starts, records or fails it. None
//! moves the version; an answer about a replaced generation is refused.

use super::guards::{days_exist, days_open_to_work, existing_at_generation, stage_of};
use crate::trip::stage::{ANALYSIS_CATEGORIES, StageAlerts, Unavailable};
use crate::trip::{
    Category, ComputationStatus, FieldError, SCAN_RADIUS_KM, StageAccommodations, Trip, TripError,
    TripEvent,
};
use chrono::NaiveDate;
use uuid::Uuid;

/// Runs the whole analysis of the current days again; on a trip whose route failed for good,
/// asks for the route again instead.
pub(super) fn request_analysis(
    live: Option<&Trip>,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    // A route that failed for good is asked again (a source back online, a file
    // fixed): the trip is retried without being recreated.
    if let Some(trip) = live
        && trip.route_failed()
        && !trip.has_days()
    {
        trip.open_to_change(today)?;
        return Ok(vec![TripEvent::RouteRequested {
            generation: trip.generation + 1,
        }]);
    }
    let trip = days_open_to_work(live, today)?;
    if trip.analysis_running() {
        return Err(TripError::AnalysisRunning);
    }
    Ok(vec![TripEvent::AnalysisRequested {
        generation: trip.generation,
        categories: ANALYSIS_CATEGORIES.to_vec(),
    }])
}

/// Asks for the weather again when a day came within the forecast horizon (asked on read, so
/// it is quietly nothing otherwise, or while an analysis runs).
pub(super) fn refresh_weather(
    live: Option<&Trip>,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = days_open_to_work(live, today)?;
    if trip.analysis_running() || !trip.weather_due(today) {
        return Ok(Vec::new());
    }
    Ok(vec![TripEvent::AnalysisRequested {
        generation: trip.generation,
        categories: vec![Category::Weather],
    }])
}

/// Looks for places to sleep within `radius_km` of the days' ends (every day, or one).
pub(super) fn request_accommodation_scan(
    live: Option<&Trip>,
    radius_km: f64,
    stage_id: Option<Uuid>,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = days_open_to_work(live, today)?;
    if let Some(id) = stage_id {
        stage_of(trip, id)?;
    }
    if !(SCAN_RADIUS_KM.0..=SCAN_RADIUS_KM.1).contains(&radius_km) {
        return Err(TripError::Invalid(vec![FieldError::new(
            "radiusKm",
            format!(
                "radiusKm must be a number from {} to {} (km around each day's end)",
                SCAN_RADIUS_KM.0, SCAN_RADIUS_KM.1
            ),
        )]));
    }
    Ok(vec![TripEvent::AccommodationScanRequested {
        generation: trip.generation,
        radius_km,
        stage_id,
    }])
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
