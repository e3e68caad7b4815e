//! A trip's life as a whole in the state: born (created, or as a copy of another), restored
//! to an earlier version, deleted.

use std::collections::BTreeMap;

use crate::ids::{TripId, UserId};
use crate::trip::settings::TripSettings;
use crate::trip::source::SourceUrl;
use crate::trip::stage::{RouteSummary, Stage};
use crate::trip::{Category, ComputationStatus, Trip, TripEvent};

/// The trip an event brings into being, if it is a birth; before its birth a trip has no
/// state, so any other event leaves it without one.
pub(super) fn born(event: &TripEvent) -> Option<Trip> {
    match event {
        TripEvent::TripCreated {
            trip_id,
            owner_id,
            source,
            settings,
            version,
        } => Some(new_trip(*trip_id, *owner_id, source, settings, *version)),
        TripEvent::TripDuplicated {
            trip_id,
            owner_id,
            source,
            settings,
            generation,
            route,
            stages,
            computations,
            unavailable,
            version,
            ..
        } => {
            let mut trip = new_trip(*trip_id, *owner_id, source, settings, *version);
            trip.generation = *generation;
            trip.computations.extend(computations.clone());
            trip.unavailable = unavailable.clone();
            trip.route = route.clone();
            trip.stages = stages.clone();
            Some(trip)
        }
        _ => None,
    }
}

/// A trip that has nothing computed yet: every category pending, no days, no link.
fn new_trip(
    trip_id: TripId,
    owner_id: UserId,
    source: &SourceUrl,
    settings: &TripSettings,
    version: u64,
) -> Trip {
    Trip {
        id: trip_id,
        owner_id,
        source: source.clone(),
        settings: settings.clone(),
        version,
        callers_version: Some(version),
        generation: 0,
        computations: Category::ALL
            .into_iter()
            .map(|c| (c, ComputationStatus::Pending))
            .collect(),
        unavailable: BTreeMap::new(),
        stages: Vec::new(),
        route: None,
        share: None,
        deleted: false,
        before_reroute: None,
        days_edited: false,
        notice: None,
    }
}

/// The trip is what it was at an earlier version, under a new generation and version;
/// `because` says why when Etappe restored it (a new route that failed).
#[allow(clippy::too_many_arguments)]
pub(super) fn restored(
    trip: &mut Trip,
    source: &SourceUrl,
    settings: &TripSettings,
    route: Option<&RouteSummary>,
    stages: &[Stage],
    generation: u64,
    version: u64,
    because: Option<&str>,
) {
    // Work still running for the generation being replaced is superseded.
    for category in Category::ALL {
        if trip.status(category) == ComputationStatus::Running {
            trip.set_status([category], ComputationStatus::Superseded);
        }
    }
    trip.source = source.clone();
    trip.settings = settings.clone();
    trip.route = route.cloned();
    trip.stages = stages.to_vec();
    trip.generation = generation;
    trip.version = version;
    if because.is_none() {
        trip.callers_version = Some(version);
    }
    trip.set_status([Category::Route], ComputationStatus::Done);
    trip.unavailable.clear();
    // Days Etappe brings back are as edited as they were; a version a caller restores may
    // hold edits: cutting them again asks first.
    trip.days_edited = match because {
        Some(_) => trip.before_reroute.as_ref().is_none_or(|k| k.days_edited),
        None => true,
    };
    trip.before_reroute = None;
    trip.notice = because.map(str::to_owned);
}

/// The trip is deleted (its state stays, marked, so commands can tell it is gone).
pub(super) fn deleted(trip: &mut Trip) {
    trip.deleted = true;
}
