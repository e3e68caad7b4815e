//! The route's work in the state: a new generation asked for, its job started, its days cut,
//! or its failure.

use crate::trip::stage::{RouteSummary, Stage};
use crate::trip::{Category, ComputationStatus, Trip};

/// A new generation: work still running for the old one is superseded; the days of the old
/// one are gone (a re-pacing mints new stage ids on purpose).
pub(super) fn route_requested(trip: &mut Trip, generation: u64) {
    trip.generation = generation;
    for category in Category::ALL {
        let next = if trip.status(category) == ComputationStatus::Running {
            ComputationStatus::Superseded
        } else {
            ComputationStatus::Pending
        };
        trip.set_status([category], next);
    }
    trip.stages.clear();
    trip.route = None;
}

/// A worker is computing the route.
pub(super) fn route_started(trip: &mut Trip) {
    trip.set_status([Category::Route], ComputationStatus::Running);
}

/// The route and its days; a trip without a title takes the route's.
pub(super) fn route_computed(
    trip: &mut Trip,
    route: &RouteSummary,
    stages: &[Stage],
    version: u64,
) {
    if trip.settings.title.is_none() {
        trip.settings.title = route.title.clone();
    }
    trip.route = Some(route.clone());
    trip.stages = stages.to_vec();
    trip.version = version;
    // New days: those kept in case the route failed are not needed any more, and nobody has
    // edited these yet.
    trip.before_reroute = None;
    trip.days_edited = false;
    trip.set_status([Category::Route], ComputationStatus::Done);
}

/// The route failed for good, and with it everything after it: the reason is said once,
/// on the route; each other category says only that it needs the route.
pub(super) fn route_failed(trip: &mut Trip, reason: &str) {
    // Nothing after the route can run without it.
    trip.set_status(Category::ALL, ComputationStatus::Failed);
    for category in Category::ALL {
        let said = if category == Category::Route {
            reason
        } else {
            NEEDS_THE_ROUTE
        };
        trip.unavailable.insert(category, said.to_owned());
    }
}

/// What a category says when the route it needs failed (the route says why).
const NEEDS_THE_ROUTE: &str = "not computed: it needs the route, which failed (see route)";
