//! `decide`: a command judged against the trip's history, answering the events it causes or
//! the rule it breaks. Pure: no clock (the caller passes `today`), no I/O.

use super::{
    ANALYSIS_CATEGORIES, Category, ComputationStatus, DETOUR_INVALIDATES, FieldError, GivenUpWork,
    Invalidation, SCAN_RADIUS_KM, Trip, TripCommand, TripError, TripEvent, TripSettings,
    Unavailable, duplicate, edits,
};
use chrono::NaiveDate;

fn current_generation(trip: &Trip, generation: u64) -> Result<(), TripError> {
    if generation == trip.generation {
        Ok(())
    } else {
        Err(TripError::Superseded {
            generation,
            current: trip.generation,
        })
    }
}

/// The guard of every command that sets work on the days (analysis, scans, detours): the
/// trip exists, is not locked (judged on the state before the command), and has its days.
fn days_open_to_work(live: Option<&Trip>, today: NaiveDate) -> Result<&Trip, TripError> {
    let trip = live.ok_or(TripError::NotFound)?;
    if trip.is_locked(today) {
        return Err(TripError::Locked);
    }
    if !trip.has_days() {
        return Err(TripError::NoStages);
    }
    Ok(trip)
}

/// Judges a command against the current state and answers the events it causes: the one
/// decision every writer goes through (settings, day edits, duplication, worker results).
pub fn decide(state: Option<&Trip>, command: TripCommand) -> Result<Vec<TripEvent>, TripError> {
    let live = state.filter(|t| !t.deleted);
    match command {
        TripCommand::EditStages {
            edit,
            expected_version,
            generation,
            today,
            route,
        } => {
            if let Some(trip) = live
                && trip.generation != generation
            {
                return Err(TripError::Superseded {
                    generation,
                    current: trip.generation,
                });
            }
            edits::decide_stage_edit_over(
                state,
                edit,
                expected_version,
                today,
                route.geometry(),
                route.beds(),
            )
        }
        TripCommand::Duplicate {
            trip_id,
            owner_id,
            original,
            today,
            renamed_files,
        } => duplicate::decide_duplicate(state, trip_id, owner_id, &original, today)
            .map(|events| duplicate::own_files(events, &renamed_files)),
        TripCommand::Create {
            trip_id,
            owner_id,
            source,
            settings,
        } => {
            if state.is_some() {
                return Err(TripError::AlreadyExists);
            }
            let settings = settings.apply_to(&TripSettings::default());
            let errors = settings.cross_field_errors();
            if !errors.is_empty() {
                return Err(TripError::Invalid(errors));
            }
            Ok(vec![
                TripEvent::TripCreated {
                    trip_id,
                    owner_id,
                    source,
                    settings,
                    version: 1,
                },
                TripEvent::RouteRequested { generation: 1 },
            ])
        }
        TripCommand::UpdateSettings {
            patch,
            plan,
            expected_version,
            today,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            // Guard order: lock, then version. The lock judges the state *before* the edit,
            // so moving the start date into the future cannot unlock the trip being edited.
            if trip.is_locked(today) {
                return Err(TripError::Locked);
            }
            if expected_version != trip.version {
                return Err(TripError::StaleVersion {
                    expected: expected_version,
                    current: trip.version,
                });
            }
            let after = patch.apply_to(&trip.settings);
            let errors = after.cross_field_errors();
            if !errors.is_empty() {
                return Err(TripError::Invalid(errors));
            }
            if plan.is_some() && trip.source.plan.is_none() {
                return Err(TripError::NotPlanned);
            }
            let replanned = plan.filter(|p| trip.source.plan.as_deref() != Some(p));
            let changed = trip.settings.changed_fields(&after);
            if changed.is_empty() && replanned.is_none() {
                return Ok(vec![]);
            }
            let invalidation = Invalidation::between(&trip.settings, &after);
            // Every change a caller makes moves the version, recomputing or not: a title
            // edit made under a stale version must be refused, not silently lost.
            let version = trip.version + 1;
            let mut events = Vec::new();
            if !changed.is_empty() {
                events.push(TripEvent::TripSettingsUpdated {
                    settings: after,
                    changed,
                    invalidated: invalidation.categories.iter().copied().collect(),
                    version,
                });
            }
            if let Some(plan) = replanned {
                // Other places or another profile: another route, so new days.
                events.push(TripEvent::TripReplanned { plan, version });
                events.push(TripEvent::RouteRequested {
                    generation: trip.generation + 1,
                });
            } else if invalidation.repace {
                events.push(TripEvent::RouteRequested {
                    generation: trip.generation + 1,
                });
            } else if !invalidation.categories.is_empty() && trip.has_days() {
                events.push(TripEvent::AnalysisRequested {
                    generation: trip.generation,
                    categories: invalidation.categories.iter().copied().collect(),
                });
            }
            Ok(events)
        }
        TripCommand::Delete => {
            live.ok_or(TripError::NotFound)?;
            Ok(vec![TripEvent::TripDeleted])
        }
        TripCommand::Share { code, at } => {
            let trip = live.ok_or(TripError::NotFound)?;
            if trip.share.is_some() {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::TripShared { code, at }])
        }
        TripCommand::Unshare => {
            let trip = live.ok_or(TripError::NotFound)?;
            Ok(if trip.share.is_some() {
                vec![TripEvent::TripUnshared]
            } else {
                vec![]
            })
        }
        TripCommand::RequestAnalysis { today } => {
            // A route that failed for good is asked again (a source back online, a file
            // fixed): the trip is retried without being recreated.
            if let Some(trip) = live
                && trip.route_failed()
                && !trip.has_days()
            {
                if trip.is_locked(today) {
                    return Err(TripError::Locked);
                }
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
        TripCommand::RefreshWeather { today } => {
            let trip = days_open_to_work(live, today)?;
            if trip.analysis_running() || !trip.weather_due(today) {
                return Ok(Vec::new());
            }
            Ok(vec![TripEvent::AnalysisRequested {
                generation: trip.generation,
                categories: vec![Category::Weather],
            }])
        }
        TripCommand::RequestAccommodationScan {
            radius_km,
            stage_id,
            today,
        } => {
            let trip = days_open_to_work(live, today)?;
            if let Some(id) = stage_id
                && !trip.stages.iter().any(|s| s.id == id)
            {
                return Err(TripError::StageNotFound);
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
        TripCommand::RecordAccommodations { generation, stages } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            Ok(vec![TripEvent::AccommodationsFound { generation, stages }])
        }
        TripCommand::FailAccommodations { generation, reason } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
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
        TripCommand::RequestWaypoint {
            stage_id,
            waypoint,
            today,
        } => {
            let trip = days_open_to_work(live, today)?;
            let stage = trip
                .stages
                .iter()
                .find(|s| s.id == stage_id)
                .ok_or(TripError::StageNotFound)?;
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
        TripCommand::RecordDetour {
            generation,
            stage_id,
            detour,
            distance_km,
            ascent_m,
            descent_m,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            let Some(stage) = trip.stages.iter().find(|s| s.id == stage_id) else {
                // The day was deleted or merged meanwhile: the detour has nowhere to go.
                return Err(TripError::StageNotFound);
            };
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
            // The day's roads changed: what is read off them is asked again. The version does
            // not move (a detour is not a structural edit).
            Ok(vec![
                TripEvent::StageRerouted {
                    generation,
                    stage_id,
                    detour,
                    distance_km,
                    ascent_m,
                    descent_m,
                },
                TripEvent::AnalysisRequested {
                    generation,
                    categories: DETOUR_INVALIDATES.to_vec(),
                },
            ])
        }
        TripCommand::Restore {
            past,
            expected_version,
            today,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            if trip.is_locked(today) {
                return Err(TripError::Locked);
            }
            if expected_version != trip.version {
                return Err(TripError::StaleVersion {
                    expected: expected_version,
                    current: trip.version,
                });
            }
            if past.version >= trip.version {
                return Ok(vec![]);
            }
            if !past.has_days() {
                return Err(TripError::Invalid(vec![FieldError::new(
                    "version",
                    format!(
                        "version {} has no days to restore (they were still being computed); pick a version that has days",
                        past.version
                    ),
                )]));
            }
            let generation = trip.generation + 1;
            Ok(vec![
                TripEvent::TripRestored {
                    from_version: past.version,
                    source: past.source.clone(),
                    settings: past.settings.clone(),
                    route: past.route.clone(),
                    stages: past.stages.clone(),
                    generation,
                    version: trip.version + 1,
                },
                TripEvent::AnalysisRequested {
                    generation,
                    categories: ANALYSIS_CATEGORIES.to_vec(),
                },
            ])
        }
        TripCommand::RemoveDetour {
            stage_id,
            own,
            today,
        } => {
            let trip = days_open_to_work(live, today)?;
            let stage = trip
                .stages
                .iter()
                .find(|s| s.id == stage_id)
                .ok_or(TripError::StageNotFound)?;
            if stage.detour.is_none() && stage.waypoint_pending.is_none() {
                return Err(TripError::NoDetour);
            }
            Ok(vec![
                TripEvent::DetourRemoved {
                    generation: trip.generation,
                    stage_id,
                    distance_km: (own.distance_km * 100.0).round() / 100.0,
                    ascent_m: own.ascent_m.map(f64::round),
                    descent_m: own.descent_m.map(f64::round),
                },
                TripEvent::AnalysisRequested {
                    generation: trip.generation,
                    categories: DETOUR_INVALIDATES.to_vec(),
                },
            ])
        }
        TripCommand::GiveUp {
            generation,
            work,
            reason,
        } => give_up(live.ok_or(TripError::NotFound)?, generation, work, reason),
        TripCommand::StartRoute { generation, job_id } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            // A redelivered job whose route is already done (or running) writes nothing more.
            if trip.status(Category::Route) != ComputationStatus::Pending {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::RouteComputationStarted {
                generation,
                job_id,
            }])
        }
        TripCommand::RecordRoute {
            generation,
            route,
            stages,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
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
        TripCommand::FailRoute { generation, reason } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            if matches!(
                trip.status(Category::Route),
                ComputationStatus::Done | ComputationStatus::Failed
            ) {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::RouteFailed { generation, reason }])
        }
        TripCommand::StartAnalysis {
            generation,
            categories,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
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
        TripCommand::RecordAnalysis {
            generation,
            stages,
            done,
            unavailable,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            if !trip.has_days() {
                return Err(TripError::NoStages);
            }
            Ok(vec![TripEvent::AnalysisCompleted {
                generation,
                stages,
                done,
                unavailable,
            }])
        }
    }
}

/// The events that record a given-up job: the work it did ends as failed with `reason`.
fn give_up(
    trip: &Trip,
    generation: u64,
    work: GivenUpWork,
    reason: String,
) -> Result<Vec<TripEvent>, TripError> {
    current_generation(trip, generation)?;
    let unavailable = |categories: Vec<Category>| {
        let still_open: Vec<Unavailable> = categories
            .into_iter()
            .filter(|c| {
                matches!(
                    trip.status(*c),
                    ComputationStatus::Pending | ComputationStatus::Running
                )
            })
            .map(|category| Unavailable {
                category,
                reason: reason.clone(),
            })
            .collect();
        if still_open.is_empty() || !trip.has_days() {
            return vec![];
        }
        vec![TripEvent::AnalysisCompleted {
            generation,
            stages: Vec::new(),
            done: Vec::new(),
            unavailable: still_open,
        }]
    };
    Ok(match work {
        GivenUpWork::Route => {
            if matches!(
                trip.status(Category::Route),
                ComputationStatus::Done | ComputationStatus::Failed
            ) {
                vec![]
            } else {
                vec![TripEvent::RouteFailed { generation, reason }]
            }
        }
        GivenUpWork::Analysis(categories) => unavailable(categories),
        GivenUpWork::Accommodations => unavailable(vec![Category::Accommodations]),
        GivenUpWork::Detour { stage_id } => {
            if trip.stages.iter().any(|s| s.id == stage_id) {
                vec![TripEvent::DetourFailed {
                    generation,
                    stage_id,
                    reason,
                }]
            } else {
                vec![]
            }
        }
    })
}
