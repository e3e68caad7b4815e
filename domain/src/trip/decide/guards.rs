//! The guards commands share, each refusing with the error its rule names. A command runs
//! them in the order its tests pin (existence, lock, version, then its own rules), so the
//! first broken rule is the one reported.

use chrono::NaiveDate;
use uuid::Uuid;

use crate::trip::stage::Stage;
use crate::trip::{Trip, TripError};

/// The trip as commands see it: a deleted trip is gone for every command but creation.
pub(in crate::trip) fn live(state: Option<&Trip>) -> Option<&Trip> {
    state.filter(|trip| !trip.deleted)
}

/// The stream holds no trip yet (not even a deleted one): what a new trip is born into.
pub(in crate::trip) fn not_yet_created(state: Option<&Trip>) -> Result<(), TripError> {
    match state {
        Some(_) => Err(TripError::AlreadyExists),
        None => Ok(()),
    }
}

/// The trip exists and is not deleted.
pub(in crate::trip) fn existing(live: Option<&Trip>) -> Result<&Trip, TripError> {
    live.ok_or(TripError::NotFound)
}

/// The caller edited the version the trip is at: an edit made against an older one is
/// refused rather than silently undoing what came after it. The version a caller's last
/// change answered stays good while only Etappe's own work moved the trip on (the days of a
/// re-cut landing): nothing a caller made came after it, so nothing can be undone.
fn at_version(trip: &Trip, expected_version: u64) -> Result<(), TripError> {
    if expected_version == trip.version || trip.callers_version == Some(expected_version) {
        Ok(())
    } else {
        Err(TripError::StaleVersion {
            expected: expected_version,
            current: trip.version,
        })
    }
}

/// The guard of every caller's edit of the trip: it exists, is not locked, and is at the
/// version the caller edited — in this order (a locked trip answers "locked" whatever the
/// version).
pub(in crate::trip) fn open_at_version(
    live: Option<&Trip>,
    expected_version: u64,
    today: NaiveDate,
) -> Result<&Trip, TripError> {
    let trip = existing(live)?;
    trip.open_to_change(today)?;
    at_version(trip, expected_version)?;
    Ok(trip)
}

/// A worker's answer is about the trip's current pacing generation; one for a generation a
/// re-pacing replaced is refused, so it is dropped rather than written.
pub(in crate::trip) fn current_generation(trip: &Trip, generation: u64) -> Result<(), TripError> {
    if generation == trip.generation {
        Ok(())
    } else {
        Err(TripError::Superseded {
            generation,
            current: trip.generation,
        })
    }
}

/// The guard of every worker's answer: the trip exists and is at `generation`.
pub(in crate::trip) fn existing_at_generation(
    live: Option<&Trip>,
    generation: u64,
) -> Result<&Trip, TripError> {
    let trip = existing(live)?;
    current_generation(trip, generation)?;
    Ok(trip)
}

/// The guard of every command that sets work on the days (analysis, scans, detours): the
/// trip exists, is not locked (judged on the state before the command), and has its days.
pub(in crate::trip) fn days_open_to_work(
    live: Option<&Trip>,
    today: NaiveDate,
) -> Result<&Trip, TripError> {
    let trip = existing(live)?;
    trip.open_to_change(today)?;
    days_exist(trip)?;
    Ok(trip)
}

/// The trip has its days (the route job of the current generation has cut them): what any
/// work on the days needs.
pub(in crate::trip) fn days_exist(trip: &Trip) -> Result<(), TripError> {
    if trip.has_days() {
        Ok(())
    } else {
        Err(TripError::NoStages)
    }
}

/// The day `stage_id` of the trip.
pub(in crate::trip) fn stage_of(trip: &Trip, stage_id: Uuid) -> Result<&Stage, TripError> {
    trip.stages
        .iter()
        .find(|stage| stage.id == stage_id)
        .ok_or(TripError::StageNotFound)
}
