//! The analysis's work in the state (accommodation scans included): asked for, started,
//! and its results landing on the days.

use crate::trip::stage::{StageAlerts, Unavailable};
use crate::trip::{Category, ComputationStatus, StageAccommodations, Trip};

/// `categories` wait to be computed again.
pub(super) fn analysis_requested(trip: &mut Trip, categories: &[Category]) {
    trip.set_status(categories.iter().copied(), ComputationStatus::Pending);
}

/// A worker is computing `categories`.
pub(super) fn analysis_started(trip: &mut Trip, categories: &[Category]) {
    trip.set_status(categories.iter().copied(), ComputationStatus::Running);
}

/// The analysis's results on the days; what was `done` is done, what was `unavailable`
/// failed with its reason.
pub(super) fn analysis_completed(
    trip: &mut Trip,
    stages: &[StageAlerts],
    done: &[Category],
    unavailable: &[Unavailable],
) {
    // The weather is replaced only by an analysis that computed it (done or failed).
    let ran = |category: Category| {
        done.contains(&category) || unavailable.iter().any(|u| u.category == category)
    };
    let (weather_ran, osm_ran) = (ran(Category::Weather), ran(Category::PointsOfInterest));
    for stage in &mut trip.stages {
        if let Some(result) = stages.iter().find(|s| s.stage_id == stage.id) {
            stage.alerts = result.alerts.clone();
            if weather_ran {
                stage.weather = result.weather.clone();
            }
            // Likewise what was found along the day, by an analysis that read OSM.
            if osm_ran {
                stage.found = result.found.clone();
                stage.road = result.road;
            }
        }
    }
    trip.set_status(done.iter().copied(), ComputationStatus::Done);
    for item in unavailable {
        trip.set_status([item.category], ComputationStatus::Failed);
        trip.unavailable.insert(item.category, item.reason.clone());
    }
}

/// A scan for places to sleep waits to run.
pub(super) fn accommodation_scan_requested(trip: &mut Trip) {
    trip.set_status([Category::Accommodations], ComputationStatus::Pending);
}

/// The places found around the days' ends.
pub(super) fn accommodations_found(trip: &mut Trip, stages: &[StageAccommodations]) {
    for stage in &mut trip.stages {
        if let Some(found) = stages.iter().find(|s| s.stage_id == stage.id) {
            stage.accommodations = found.accommodations.clone();
        }
    }
    trip.set_status([Category::Accommodations], ComputationStatus::Done);
}
