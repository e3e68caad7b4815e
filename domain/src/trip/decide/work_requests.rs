//! A caller's requests for work on the days: the analysis (again), the weather once a day
//! comes within the forecast horizon, an accommodation scan, and a day's detour through a
//! waypoint (asked or removed). None is structural: none moves the version.

use chrono::NaiveDate;
use uuid::Uuid;

use crate::trip::edits::{self, Measure};
use crate::trip::stage::{ANALYSIS_CATEGORIES, DETOUR_INVALIDATES, Point};
use crate::trip::{
    Category, ComputationStatus, FieldError, SCAN_RADIUS_KM, Trip, TripError, TripEvent,
};

use super::guards::{days_open_to_work, existing, stage_of};

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
