//! `evolve`: the trip's state after one more event, and `fold`, the state after a history.
//! Pure and total: it never fails, since an event is a fact already accepted.

use std::collections::BTreeMap;

use crate::ids::{TripId, UserId};

use super::{Category, ComputationStatus, ShareLink, SourceUrl, Trip, TripEvent, TripSettings};

/// Folds one event into the state. Never fails: an event is a fact already accepted.
pub fn evolve(state: Option<Trip>, event: &TripEvent) -> Option<Trip> {
    let created = |trip_id: &TripId,
                   owner_id: &UserId,
                   source: &SourceUrl,
                   settings: &TripSettings,
                   version: &u64| Trip {
        id: *trip_id,
        owner_id: *owner_id,
        source: source.clone(),
        settings: settings.clone(),
        version: *version,
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
    };
    match (state, event) {
        (
            None,
            TripEvent::TripCreated {
                trip_id,
                owner_id,
                source,
                settings,
                version,
            },
        ) => Some(created(trip_id, owner_id, source, settings, version)),
        (
            None,
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
            },
        ) => {
            let mut trip = created(trip_id, owner_id, source, settings, version);
            trip.generation = *generation;
            trip.computations.extend(computations.clone());
            trip.unavailable = unavailable.clone();
            trip.route = route.clone();
            trip.stages = stages.clone();
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::TripSettingsUpdated {
                settings,
                invalidated,
                version,
                ..
            },
        ) => {
            trip.settings = settings.clone();
            trip.version = *version;
            trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteRequested { generation }) => {
            // A new generation: work still running for the old one is superseded; the days
            // of the old one are gone (a re-pacing mints new stage ids on purpose).
            trip.generation = *generation;
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
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteComputationStarted { generation, .. })
            if *generation == trip.generation =>
        {
            trip.set_status([Category::Route], ComputationStatus::Running);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::RouteComputed {
                generation,
                route,
                stages,
                version,
            },
        ) if *generation == trip.generation => {
            if trip.settings.title.is_none() {
                trip.settings.title = route.title.clone();
            }
            trip.route = Some(route.clone());
            trip.stages = stages.clone();
            trip.version = *version;
            trip.set_status([Category::Route], ComputationStatus::Done);
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteFailed { generation, reason })
            if *generation == trip.generation =>
        {
            // Nothing after the route can run without it.
            trip.set_status(Category::ALL, ComputationStatus::Failed);
            for category in Category::ALL {
                trip.unavailable.insert(category, reason.clone());
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::AnalysisRequested {
                generation,
                categories,
            },
        ) if *generation == trip.generation => {
            trip.set_status(categories.iter().copied(), ComputationStatus::Pending);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::AnalysisStarted {
                generation,
                categories,
            },
        ) if *generation == trip.generation => {
            trip.set_status(categories.iter().copied(), ComputationStatus::Running);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::AnalysisCompleted {
                generation,
                stages,
                done,
                unavailable,
            },
        ) if *generation == trip.generation => {
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
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::StagesEdited {
                stages,
                end_date,
                invalidated,
                version,
                ..
            },
        ) => {
            trip.stages = stages.clone();
            trip.settings.end_date = *end_date;
            trip.version = *version;
            trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
            Some(trip)
        }
        (Some(mut trip), TripEvent::AccommodationScanRequested { generation, .. })
            if *generation == trip.generation =>
        {
            trip.set_status([Category::Accommodations], ComputationStatus::Pending);
            Some(trip)
        }
        (Some(mut trip), TripEvent::AccommodationsFound { generation, stages })
            if *generation == trip.generation =>
        {
            for stage in &mut trip.stages {
                if let Some(found) = stages.iter().find(|s| s.stage_id == stage.id) {
                    stage.accommodations = found.accommodations.clone();
                }
            }
            trip.set_status([Category::Accommodations], ComputationStatus::Done);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::StageRerouted {
                generation,
                stage_id,
                detour,
                distance_km,
                ascent_m,
                descent_m,
            },
        ) if *generation == trip.generation => {
            if let Some(stage) = trip.stages.iter_mut().find(|s| s.id == *stage_id) {
                stage.detour = Some(detour.clone());
                stage.detour_failure = None;
                stage.waypoint_pending = None;
                stage.distance_km = *distance_km;
                stage.ascent_m = *ascent_m;
                stage.descent_m = *descent_m;
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::DetourFailed {
                generation,
                stage_id,
                reason,
            },
        ) if *generation == trip.generation => {
            if let Some(stage) = trip.stages.iter_mut().find(|s| s.id == *stage_id) {
                stage.detour_failure = Some(reason.clone());
                stage.waypoint_pending = None;
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::WaypointRequested {
                generation,
                stage_id,
                waypoint,
            },
        ) if *generation == trip.generation => {
            if let Some(stage) = trip.stages.iter_mut().find(|s| s.id == *stage_id) {
                stage.waypoint_pending = Some(*waypoint);
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::DetourRemoved {
                generation,
                stage_id,
                distance_km,
                ascent_m,
                descent_m,
            },
        ) if *generation == trip.generation => {
            if let Some(stage) = trip.stages.iter_mut().find(|s| s.id == *stage_id) {
                stage.detour = None;
                stage.detour_failure = None;
                stage.waypoint_pending = None;
                stage.distance_km = *distance_km;
                stage.ascent_m = *ascent_m;
                stage.descent_m = *descent_m;
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::TripRestored {
                source,
                settings,
                route,
                stages,
                generation,
                version,
                ..
            },
        ) => {
            // Work still running for the generation being replaced is superseded.
            for category in Category::ALL {
                if trip.status(category) == ComputationStatus::Running {
                    trip.set_status([category], ComputationStatus::Superseded);
                }
            }
            trip.source = source.clone();
            trip.settings = settings.clone();
            trip.route = route.clone();
            trip.stages = stages.clone();
            trip.generation = *generation;
            trip.version = *version;
            trip.set_status([Category::Route], ComputationStatus::Done);
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripReplanned { plan, version }) => {
            trip.source = super::source::SourceUrl::planned(plan.clone());
            trip.version = *version;
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripShared { code, at }) => {
            trip.share = Some(ShareLink {
                code: code.clone(),
                created_at: *at,
            });
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripUnshared) => {
            trip.share = None;
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripDeleted) => {
            trip.deleted = true;
            Some(trip)
        }
        (state, _) => state,
    }
}

/// Folds a whole history.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a TripEvent>) -> Option<Trip> {
    events.into_iter().fold(None, evolve)
}
