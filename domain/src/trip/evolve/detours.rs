//! A day's detour through a waypoint in the state: asked for, computed, failed, removed. A
//! day that is gone meanwhile (deleted, merged) takes none of it.

use uuid::Uuid;

use crate::trip::Trip;
use crate::trip::edits::Measure;
use crate::trip::stage::{Detour, Point, Stage};

/// The day `stage_id`, to change.
fn stage_mut(trip: &mut Trip, stage_id: Uuid) -> Option<&mut Stage> {
    trip.stages.iter_mut().find(|s| s.id == stage_id)
}

/// The day's distance and climbing, as its roads measure now.
fn remeasure(stage: &mut Stage, measure: Measure) {
    stage.distance_km = measure.distance_km;
    stage.ascent_m = measure.ascent_m;
    stage.descent_m = measure.descent_m;
}

/// The day waits for its detour through `waypoint`.
pub(super) fn waypoint_requested(trip: &mut Trip, stage_id: Uuid, waypoint: Point) {
    if let Some(stage) = stage_mut(trip, stage_id) {
        stage.waypoint_pending = Some(waypoint);
    }
}

/// The day rides its detour, measured as `measure`.
pub(super) fn stage_rerouted(trip: &mut Trip, stage_id: Uuid, detour: &Detour, measure: Measure) {
    if let Some(stage) = stage_mut(trip, stage_id) {
        stage.detour = Some(detour.clone());
        stage.detour_failure = None;
        stage.waypoint_pending = None;
        remeasure(stage, measure);
    }
}

/// The day keeps its roads and says why its detour failed.
pub(super) fn detour_failed(trip: &mut Trip, stage_id: Uuid, reason: &str) {
    if let Some(stage) = stage_mut(trip, stage_id) {
        stage.detour_failure = Some(reason.to_owned());
        stage.waypoint_pending = None;
    }
}

/// The day rides its own roads again, measured as `own`.
pub(super) fn detour_removed(trip: &mut Trip, stage_id: Uuid, own: Measure) {
    if let Some(stage) = stage_mut(trip, stage_id) {
        stage.detour = None;
        stage.detour_failure = None;
        stage.waypoint_pending = None;
        remeasure(stage, own);
    }
}
