//! Given events, when a command, then events (or a refusal). No I/O.

use chrono::NaiveDate;
use serde_json::json;

use super::settings::{SettingField, SettingsPatch, TripSettings};
use super::source::SourceUrl;
use super::stage::{StageAlerts, Unavailable};
use super::*;

fn date(s: &str) -> NaiveDate {
    s.parse().expect("test date")
}

fn today() -> NaiveDate {
    date("2030-01-10")
}

fn created(settings: TripSettings) -> Vec<TripEvent> {
    vec![
        TripEvent::TripCreated {
            trip_id: TripId(uuid::Uuid::from_u128(1)),
            owner_id: UserId(uuid::Uuid::from_u128(2)),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings,
            version: 1,
        },
        TripEvent::RouteRequested { generation: 1 },
    ]
}

/// Given `history`, when `command`, then the events (or the refusal).
fn given_when(history: &[TripEvent], command: TripCommand) -> Result<Vec<TripEvent>, TripError> {
    let state = fold(history);
    decide(state.as_ref(), command)
}

fn update(patch: SettingsPatch, expected_version: u64) -> TripCommand {
    TripCommand::UpdateSettings {
        patch,
        plan: None,
        expected_version,
        today: today(),
    }
}

#[test]
fn creating_a_trip_records_it_and_requests_its_route() {
    let events = given_when(
        &[],
        TripCommand::Create {
            trip_id: TripId(uuid::Uuid::from_u128(1)),
            owner_id: UserId(uuid::Uuid::from_u128(2)),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings: SettingsPatch {
                max_distance_per_day: Some(100.0),
                ..Default::default()
            },
        },
    )
    .expect("created");
    assert_eq!(events.len(), 2);
    let trip = fold(&events).expect("a trip");
    assert_eq!(trip.version, 1);
    assert_eq!(trip.generation, 1);
    assert_eq!(trip.settings.max_distance_per_day, 100.0);
    assert_eq!(
        trip.settings.fatigue_factor, 0.9,
        "unset settings take their defaults"
    );
    assert!(
        trip.computations
            .values()
            .all(|s| *s == ComputationStatus::Pending)
    );
}

#[test]
fn creating_with_an_end_before_the_start_is_refused() {
    let refused = given_when(
        &[],
        TripCommand::Create {
            trip_id: TripId::new(),
            owner_id: UserId::new(),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings: SettingsPatch {
                start_date: Some(Some(date("2030-06-05"))),
                end_date: Some(Some(date("2030-06-01"))),
                ..Default::default()
            },
        },
    );
    assert!(matches!(refused, Err(TripError::Invalid(ref e)) if e[0].field == "endDate"));
}

#[test]
fn creating_twice_is_refused() {
    let history = created(TripSettings::default());
    let again = given_when(
        &history,
        TripCommand::Create {
            trip_id: TripId::new(),
            owner_id: UserId::new(),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings: SettingsPatch::default(),
        },
    );
    assert_eq!(again, Err(TripError::AlreadyExists));
}

#[test]
fn a_title_change_moves_the_version_and_recomputes_nothing() {
    let history = created(TripSettings::default());
    let events = given_when(
        &history,
        update(
            SettingsPatch {
                title: Some("Alps".into()),
                ..Default::default()
            },
            1,
        ),
    )
    .expect("updated");
    assert_eq!(events.len(), 1);
    let TripEvent::TripSettingsUpdated {
        version,
        changed,
        invalidated,
        ..
    } = &events[0]
    else {
        panic!("expected a settings update, got {events:?}");
    };
    assert_eq!(*version, 2);
    assert_eq!(changed, &[SettingField::Title]);
    assert!(invalidated.is_empty());
}

#[test]
fn a_pacing_change_moves_the_version_and_requests_a_new_generation() {
    let history = created(TripSettings::default());
    let events = given_when(
        &history,
        update(
            SettingsPatch {
                max_distance_per_day: Some(120.0),
                ..Default::default()
            },
            1,
        ),
    )
    .expect("updated");
    assert!(matches!(
        events[1],
        TripEvent::RouteRequested { generation: 2 }
    ));
    let trip = fold(history.iter().chain(&events)).expect("trip");
    assert_eq!(trip.version, 2);
    assert_eq!(trip.generation, 2);
}

#[test]
fn a_stale_version_is_refused_with_both_versions() {
    let history = created(TripSettings::default());
    let refused = given_when(
        &history,
        update(
            SettingsPatch {
                ebike_mode: Some(true),
                ..Default::default()
            },
            7,
        ),
    );
    assert_eq!(
        refused,
        Err(TripError::StaleVersion {
            expected: 7,
            current: 1
        })
    );
}

#[test]
fn a_locked_trip_refuses_settings_changes_before_checking_the_version() {
    let history = created(TripSettings {
        start_date: Some(date("2030-01-10")),
        ..Default::default()
    });
    let refused = given_when(
        &history,
        update(
            SettingsPatch {
                ebike_mode: Some(true),
                ..Default::default()
            },
            99,
        ),
    );
    assert_eq!(refused, Err(TripError::Locked));
}

#[test]
fn moving_the_start_into_the_future_cannot_unlock_the_trip_being_edited() {
    let history = created(TripSettings {
        start_date: Some(date("2030-01-01")),
        ..Default::default()
    });
    let refused = given_when(
        &history,
        update(
            SettingsPatch {
                start_date: Some(Some(date("2031-01-01"))),
                ..Default::default()
            },
            1,
        ),
    );
    assert_eq!(refused, Err(TripError::Locked));
}

#[test]
fn a_trip_starting_tomorrow_is_not_locked() {
    let history = created(TripSettings {
        start_date: Some(date("2030-01-11")),
        ..Default::default()
    });
    assert!(
        given_when(
            &history,
            update(
                SettingsPatch {
                    ebike_mode: Some(true),
                    ..Default::default()
                },
                1
            )
        )
        .is_ok()
    );
}

#[test]
fn an_update_that_changes_nothing_writes_nothing() {
    let history = created(TripSettings::default());
    let events = given_when(
        &history,
        update(
            SettingsPatch {
                average_speed: Some(15.0),
                ..Default::default()
            },
            1,
        ),
    )
    .expect("no-op");
    assert!(events.is_empty());
}

#[test]
fn an_update_that_breaks_the_dates_is_refused() {
    let history = created(TripSettings {
        end_date: Some(date("2030-06-05")),
        ..Default::default()
    });
    let refused = given_when(
        &history,
        update(
            SettingsPatch {
                start_date: Some(Some(date("2030-06-09"))),
                ..Default::default()
            },
            1,
        ),
    );
    assert!(matches!(refused, Err(TripError::Invalid(_))));
}

#[test]
fn a_locked_trip_can_still_be_deleted_and_a_deleted_one_is_gone() {
    let history = created(TripSettings {
        start_date: Some(date("2020-01-01")),
        ..Default::default()
    });
    let events = given_when(&history, TripCommand::Delete).expect("deleted");
    assert_eq!(events, vec![TripEvent::TripDeleted]);
    let all: Vec<_> = history.iter().chain(&events).cloned().collect();
    assert_eq!(
        given_when(&all, TripCommand::Delete),
        Err(TripError::NotFound)
    );
    assert_eq!(
        given_when(&all, update(SettingsPatch::default(), 1)),
        Err(TripError::NotFound)
    );
}

#[test]
fn commands_on_a_missing_trip_answer_not_found() {
    assert_eq!(
        given_when(&[], TripCommand::Delete),
        Err(TripError::NotFound)
    );
}

#[test]
fn stored_event_shapes_are_stable() {
    // The stored JSON of events is a contract: changing it needs an upcaster.
    let history = created(TripSettings::default());
    let stored: Vec<_> = history
        .iter()
        .map(|e| json!({"type": e.event_type(), "data": e.data()}))
        .collect();
    assert_eq!(
        serde_json::Value::Array(stored),
        json!([
            {"type": "TripCreated", "data": {
                "tripId": "00000000-0000-0000-0000-000000000001",
                "ownerId": "00000000-0000-0000-0000-000000000002",
                "source": {"url": "https://example.org/a.gpx", "sourceType": "gpx_link"},
                "settings": {
                    "title": null, "startDate": null, "endDate": null, "fatigueFactor": 0.9,
                    "elevationPenalty": 50.0, "maxDistancePerDay": 80.0, "averageSpeed": 15.0,
                    "departureHour": 8, "ebikeMode": false,
                    "enabledAccommodationTypes": ["camp_site", "hostel", "alpine_hut", "chalet",
                        "guest_house", "hotel", "wilderness_hut"],
                    "nights": "anywhere"
                },
                "version": 1
            }},
            {"type": "RouteRequested", "data": {"generation": 1}}
        ])
    );
    // Settings stored before `nights` existed read as nights anywhere.
    let mut older = history[0].data();
    older["settings"]
        .as_object_mut()
        .expect("settings")
        .remove("nights");
    let read = TripEvent::from_stored("TripCreated", 1, &older).expect("older settings read");
    assert_eq!(read, history[0]);
    for event in &history {
        let read =
            TripEvent::from_stored(event.event_type(), 1, &event.data()).expect("reads back");
        assert_eq!(&read, event);
    }
    let deleted = TripEvent::from_stored("TripDeleted", 1, &serde_json::Value::Null).expect("unit");
    assert_eq!(deleted, TripEvent::TripDeleted);
    // The stored type is serde's tag, for data variants and unit ones alike.
    for event in history
        .iter()
        .chain([&TripEvent::TripDeleted, &TripEvent::TripUnshared])
    {
        assert_eq!(
            serde_json::to_value(event).expect("serialises")["type"],
            event.event_type()
        );
    }
}

fn route_done(history: &mut Vec<TripEvent>) {
    use super::stage::{Point, RouteSummary, Stage};
    let trip = fold(history.iter()).expect("trip");
    let stage = |i: u32| Stage {
        id: uuid::Uuid::from_u128(100 + u128::from(i)),
        day_number: i,
        distance_km: 80.0,
        ascent_m: Some(500.0),
        descent_m: Some(500.0),
        start: Point {
            lat: 45.0,
            lon: 6.0,
            ele: None,
        },
        end: Point {
            lat: 45.5,
            lon: 6.5,
            ele: None,
        },
        last_point: 1,
        alerts: vec![],
        accommodations: vec![],
        ..Default::default()
    };
    let route = RouteSummary {
        title: Some("From the source".into()),
        total_distance_km: 160.0,
        ascent_m: Some(1000.0),
        descent_m: Some(1000.0),
        point_count: 2,
        track_key: "track:x:1".into(),
        elevation: None,
    };
    let events = decide(
        Some(&trip),
        TripCommand::RecordRoute {
            generation: trip.generation,
            route,
            stages: vec![stage(1), stage(2)],
        },
    )
    .expect("route recorded");
    history.extend(events);
}

#[test]
fn the_days_appearing_move_the_version_and_fill_an_empty_title() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let trip = fold(&history).expect("trip");
    assert_eq!(trip.version, 2);
    assert!(
        trip.is_partial(),
        "the days are in, their analysis is still to come"
    );
    assert_eq!(trip.settings.title.as_deref(), Some("From the source"));
    assert_eq!(trip.computations[&Category::Route], ComputationStatus::Done);
}

#[test]
fn partial_ends_when_every_computation_has_ended_done_or_failed() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let trip = fold(&history).expect("trip");
    let stages = trip
        .stages
        .iter()
        .map(|s| StageAlerts {
            stage_id: s.id,
            alerts: vec![],
            weather: None,
            found: None,
            road: None,
        })
        .collect::<Vec<_>>();
    let record = |trip: &Trip, done: Vec<Category>, unavailable: Vec<Unavailable>| {
        decide(
            Some(trip),
            TripCommand::RecordAnalysis {
                generation: trip.generation,
                stages: stages.clone(),
                done,
                unavailable,
            },
        )
        .expect("recorded")
    };
    // All but the places to sleep: still partial.
    history.extend(record(
        &trip,
        vec![
            Category::PointsOfInterest,
            Category::TerrainSecurity,
            Category::Weather,
        ],
        vec![Unavailable {
            category: Category::Context,
            reason: "no source".into(),
        }],
    ));
    let trip = fold(&history).expect("trip");
    assert!(trip.is_partial(), "{:?}", trip.computations);
    // The last one ends (failed is an end too): the trip is whole.
    history.extend(record(
        &trip,
        vec![],
        vec![Unavailable {
            category: Category::Accommodations,
            reason: "no source".into(),
        }],
    ));
    let trip = fold(&history).expect("trip");
    assert!(!trip.is_partial(), "{:?}", trip.computations);
}

#[test]
fn a_result_for_a_superseded_generation_is_refused() {
    let mut history = created(TripSettings::default());
    let trip = fold(&history).expect("trip");
    history.extend(
        decide(
            Some(&trip),
            update(
                SettingsPatch {
                    max_distance_per_day: Some(120.0),
                    ..Default::default()
                },
                1,
            ),
        )
        .expect("repace"),
    );
    let trip = fold(&history).expect("trip");
    assert_eq!(trip.generation, 2);
    let late = decide(
        Some(&trip),
        TripCommand::FailRoute {
            generation: 1,
            reason: "late".into(),
        },
    );
    assert_eq!(
        late,
        Err(TripError::Superseded {
            generation: 1,
            current: 2
        })
    );
}

#[test]
fn a_setting_that_invalidates_analysis_only_requests_an_analysis_not_a_new_cut() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let trip = fold(&history).expect("trip");
    let events = decide(
        Some(&trip),
        update(
            SettingsPatch {
                ebike_mode: Some(true),
                ..Default::default()
            },
            2,
        ),
    )
    .expect("updated");
    assert!(
        matches!(&events[1], TripEvent::AnalysisRequested { generation: 1, categories } if categories.contains(&Category::TerrainSecurity))
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TripEvent::RouteRequested { .. }))
    );
    let after = fold(history.iter().chain(&events)).expect("trip");
    assert_eq!(after.stages.len(), 2, "the days stay");
    assert_eq!(after.version, 3);
}

#[test]
fn an_analysis_is_refused_while_one_runs_and_without_days() {
    let mut history = created(TripSettings::default());
    let trip = fold(&history).expect("trip");
    assert_eq!(
        decide(Some(&trip), TripCommand::RequestAnalysis { today: today() }),
        Err(TripError::NoStages)
    );
    route_done(&mut history);
    let trip = fold(&history).expect("trip");
    let started = decide(
        Some(&trip),
        TripCommand::StartAnalysis {
            generation: trip.generation,
            categories: vec![Category::TerrainSecurity],
        },
    )
    .expect("started");
    let running = fold(history.iter().chain(&started)).expect("trip");
    assert_eq!(
        decide(
            Some(&running),
            TripCommand::RequestAnalysis { today: today() }
        ),
        Err(TripError::AnalysisRunning)
    );
}

#[test]
fn a_stale_title_edit_is_refused_rather_than_lost() {
    let mut history = created(TripSettings::default());
    let title = |t: &str| SettingsPatch {
        title: Some(t.into()),
        ..Default::default()
    };
    history.extend(given_when(&history, update(title("First"), 1)).expect("first edit"));
    let second = given_when(&history, update(title("Second"), 1));
    assert_eq!(
        second,
        Err(TripError::StaleVersion {
            expected: 1,
            current: 2
        })
    );
}

fn give_up(work: GivenUpWork) -> TripCommand {
    TripCommand::GiveUp {
        generation: 1,
        work,
        reason: "the route could not be fetched after 4 attempts: name resolution failed".into(),
    }
}

#[test]
fn a_given_up_route_job_fails_the_route_and_ends_partial() {
    let mut history = created(TripSettings::default());
    let events = given_when(&history, give_up(GivenUpWork::Route)).expect("given up");
    assert!(
        matches!(&events[..], [TripEvent::RouteFailed { generation: 1, reason }] if reason.contains("4 attempts"))
    );
    history.extend(events);
    let trip = fold(&history).expect("trip");
    assert!(
        !trip.is_partial(),
        "a failed route is an answer: partial ends"
    );
    assert!(trip.route_failed());
    assert_eq!(
        trip.computations[&Category::Route],
        ComputationStatus::Failed
    );
    assert!(trip.unavailable[&Category::Route].contains("name resolution"));
    // Giving up twice (a redelivered give-up) writes nothing more.
    assert_eq!(
        given_when(&history, give_up(GivenUpWork::Route)),
        Ok(vec![])
    );
}

#[test]
fn a_failed_route_is_retried_by_asking_for_the_analysis_again() {
    let mut history = created(TripSettings::default());
    history.extend(given_when(&history, give_up(GivenUpWork::Route)).expect("given up"));
    let retry =
        given_when(&history, TripCommand::RequestAnalysis { today: today() }).expect("retried");
    assert_eq!(retry, vec![TripEvent::RouteRequested { generation: 2 }]);
    history.extend(retry);
    let trip = fold(&history).expect("trip");
    assert!(trip.is_partial(), "the route is coming again");
    assert_eq!(
        trip.computations[&Category::Route],
        ComputationStatus::Pending
    );
}

#[test]
fn a_given_up_job_of_a_superseded_generation_is_refused() {
    let history = created(TripSettings::default());
    let stale = TripCommand::GiveUp {
        generation: 7,
        work: GivenUpWork::Route,
        reason: "x".into(),
    };
    assert!(matches!(
        given_when(&history, stale),
        Err(TripError::Superseded { .. })
    ));
}

/// The trip of `route_done`, starting on `start`, with its weather recorded as `states`.
fn with_weather(start: &str, states: [stage::WeatherState; 2]) -> Vec<TripEvent> {
    let mut history = created(TripSettings {
        start_date: Some(date(start)),
        ..TripSettings::default()
    });
    route_done(&mut history);
    let trip = fold(history.iter()).expect("trip");
    let stages = trip
        .stages
        .iter()
        .zip(states)
        .enumerate()
        .map(|(i, (s, state))| StageAlerts {
            stage_id: s.id,
            alerts: vec![],
            weather: Some(stage::DayWeather::state_only(
                state,
                date(start).checked_add_days(chrono::Days::new(i as u64)),
            )),
            found: None,
            road: None,
        })
        .collect();
    history.extend(
        decide(
            Some(&trip),
            TripCommand::RecordAnalysis {
                generation: trip.generation,
                stages,
                done: vec![Category::Weather],
                unavailable: vec![],
            },
        )
        .expect("recorded"),
    );
    history
}

#[test]
fn the_weather_is_asked_again_once_a_day_comes_within_the_horizon() {
    use stage::WeatherState::{BeyondHorizon, Forecast};
    // Recorded on 2030-01-10: the 25th and 26th were beyond the horizon (after the 25th).
    let history = with_weather("2030-01-25", [Forecast, BeyondHorizon]);
    let trip = fold(&history).expect("trip");
    assert_eq!(
        trip.stages[1].weather.as_ref().map(|w| w.state),
        Some(BeyondHorizon)
    );
    // Read on the 10th: the 26th is still beyond (the horizon ends on the 25th): nothing.
    assert!(!trip.weather_due(date("2030-01-10")));
    assert_eq!(
        given_when(&history, TripCommand::RefreshWeather { today: today() }),
        Ok(vec![])
    );
    // Read on the 11th: the 26th is today + 15, within: the weather alone is asked for.
    let later = date("2030-01-11");
    assert!(trip.weather_due(later));
    let events = given_when(&history, TripCommand::RefreshWeather { today: later }).expect("due");
    assert_eq!(
        events,
        vec![TripEvent::AnalysisRequested {
            generation: 1,
            categories: vec![Category::Weather],
        }]
    );
    // Once asked, the category is pending: a second read asks nothing more.
    let asked = fold(history.iter().chain(&events)).expect("trip");
    assert!(!asked.weather_due(later));
    // A locked trip is never analysed again.
    assert_eq!(
        given_when(
            &history,
            TripCommand::RefreshWeather {
                today: date("2030-01-25")
            }
        ),
        Err(TripError::Locked)
    );
}

#[test]
fn an_analysis_without_the_weather_keeps_the_days_weather() {
    use stage::WeatherState::Forecast;
    let history = with_weather("2030-01-12", [Forecast, Forecast]);
    let trip = fold(&history).expect("trip");
    let stages = trip
        .stages
        .iter()
        .map(|s| StageAlerts {
            stage_id: s.id,
            alerts: vec![],
            weather: None,
            found: None,
            road: None,
        })
        .collect();
    let events = decide(
        Some(&trip),
        TripCommand::RecordAnalysis {
            generation: 1,
            stages,
            done: vec![Category::TerrainSecurity],
            unavailable: vec![],
        },
    )
    .expect("recorded");
    let after = fold(history.iter().chain(&events)).expect("trip");
    assert!(
        after
            .stages
            .iter()
            .all(|s| s.weather.as_ref().is_some_and(|w| w.state == Forecast)),
        "the weather stays until the weather itself is computed again"
    );
}

fn planned(from: &str, to: &str) -> super::plan::RoutePlan {
    use super::plan::{PlanPlace, RideProfile, RoutePlan};
    let place = |name: &str, lat: f64| PlanPlace {
        name: Some(name.into()),
        lat,
        lon: 9.5,
    };
    RoutePlan {
        from: place(from, 47.0),
        via: vec![],
        to: place(to, 47.2),
        profile: RideProfile::Touring,
    }
}

fn created_from_plan() -> Vec<TripEvent> {
    vec![
        TripEvent::TripCreated {
            trip_id: TripId(uuid::Uuid::from_u128(1)),
            owner_id: UserId(uuid::Uuid::from_u128(2)),
            source: SourceUrl::planned(planned("Balzers", "Schaan")),
            settings: TripSettings::default(),
            version: 1,
        },
        TripEvent::RouteRequested { generation: 1 },
    ]
}

#[test]
fn another_plan_moves_the_version_once_and_routes_again() {
    let mut history = created_from_plan();
    route_done(&mut history);
    let mut plan = planned("Balzers", "Vaduz");
    plan.profile = super::plan::RideProfile::Gravel;
    let events = given_when(
        &history,
        TripCommand::UpdateSettings {
            patch: SettingsPatch {
                title: Some("North".into()),
                ..Default::default()
            },
            plan: Some(plan.clone()),
            expected_version: 2,
            today: today(),
        },
    )
    .expect("replanned");
    let versions: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            TripEvent::TripSettingsUpdated { version, .. }
            | TripEvent::TripReplanned { version, .. } => Some(*version),
            _ => None,
        })
        .collect();
    assert_eq!(versions, [3, 3], "one version for one change: {events:?}");
    assert!(matches!(
        events.last(),
        Some(TripEvent::RouteRequested { generation: 2 })
    ));
    history.extend(events);
    let trip = fold(&history).expect("trip");
    assert_eq!(trip.source.plan.as_deref(), Some(&plan));
    assert!(trip.source.url.starts_with("plan:Balzers → Vaduz"));
    assert!(trip.stages.is_empty(), "the old days are gone");

    // The same plan again changes nothing.
    let again = given_when(
        &history,
        TripCommand::UpdateSettings {
            patch: SettingsPatch::default(),
            plan: trip.source.plan.as_deref().cloned(),
            expected_version: 3,
            today: today(),
        },
    );
    assert_eq!(again, Ok(vec![]));
}

#[test]
fn a_plan_is_refused_on_a_trip_from_a_link() {
    let history = created(TripSettings::default());
    let refused = given_when(
        &history,
        TripCommand::UpdateSettings {
            patch: SettingsPatch::default(),
            plan: Some(planned("A", "B")),
            expected_version: 1,
            today: today(),
        },
    );
    assert_eq!(refused, Err(TripError::NotPlanned));
}

fn detour_to(track_key: &str, lat: f64) -> stage::Detour {
    stage::Detour {
        waypoint: stage::Point {
            lat,
            lon: 6.2,
            ele: None,
        },
        track_key: track_key.into(),
        original_distance_km: 80.0,
        estimated: false,
        router: "valhalla".into(),
        original_ascent_m: Some(500.0),
        original_descent_m: Some(500.0),
        junction: None,
        spliced_day: None,
    }
}

fn record(detour: stage::Detour) -> TripCommand {
    TripCommand::RecordDetour {
        generation: 1,
        stage_id: uuid::Uuid::from_u128(101),
        detour,
        measure: edits::Measure {
            distance_km: 81.2,
            ascent_m: Some(540.0),
            descent_m: Some(540.0),
        },
    }
}

#[test]
fn a_detour_is_kept_then_removed_without_moving_the_version() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let day = uuid::Uuid::from_u128(101);
    let detour = detour_to("detour:a", 45.2);
    history.extend(
        given_when(
            &history,
            TripCommand::RequestWaypoint {
                stage_id: day,
                waypoint: detour.waypoint,
                today: today(),
            },
        )
        .expect("asked"),
    );
    history.extend(given_when(&history, record(detour)).expect("recorded"));
    let trip = fold(&history).expect("trip");
    assert_eq!(trip.stages[0].distance_km, 81.2);
    assert_eq!(trip.stages[0].waypoint_pending, None);

    let own = edits::Measure {
        distance_km: 80.004,
        ascent_m: Some(500.2),
        descent_m: None,
    };
    let events = given_when(
        &history,
        TripCommand::RemoveDetour {
            stage_id: day,
            own,
            today: today(),
        },
    )
    .expect("removed");
    assert!(matches!(
        &events[..],
        [
            TripEvent::DetourRemoved { .. },
            TripEvent::AnalysisRequested { .. }
        ]
    ));
    history.extend(events);
    let trip = fold(&history).expect("trip");
    let stage = &trip.stages[0];
    assert_eq!(stage.detour, None);
    assert_eq!(stage.distance_km, 80.0);
    assert_eq!(stage.ascent_m, Some(500.0));
    assert_eq!(stage.descent_m, None, "unknown stays unknown");
    assert_eq!(trip.version, 2, "a detour and its removal move no version");

    // Nothing left to remove.
    assert_eq!(
        given_when(
            &history,
            TripCommand::RemoveDetour {
                stage_id: day,
                own,
                today: today(),
            },
        ),
        Err(TripError::NoDetour)
    );
}

#[test]
fn a_detour_result_arriving_after_its_removal_is_dropped() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let day = uuid::Uuid::from_u128(101);
    let detour = detour_to("detour:late", 45.2);
    history.extend(
        given_when(
            &history,
            TripCommand::RequestWaypoint {
                stage_id: day,
                waypoint: detour.waypoint,
                today: today(),
            },
        )
        .expect("asked"),
    );
    history.extend(
        given_when(
            &history,
            TripCommand::RemoveDetour {
                stage_id: day,
                own: edits::Measure {
                    distance_km: 80.0,
                    ascent_m: Some(500.0),
                    descent_m: Some(500.0),
                },
                today: today(),
            },
        )
        .expect("removed while pending"),
    );
    assert_eq!(
        given_when(&history, record(detour)),
        Err(TripError::NoDetour)
    );
    // A result for an older point, after the day was asked through another one, is dropped.
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    for lat in [45.2, 45.3] {
        history.extend(
            given_when(
                &history,
                TripCommand::RequestWaypoint {
                    stage_id: day,
                    waypoint: detour_to("x", lat).waypoint,
                    today: today(),
                },
            )
            .expect("asked"),
        );
    }
    assert_eq!(
        given_when(&history, record(detour_to("detour:old", 45.2))),
        Err(TripError::NoDetour)
    );
    assert!(given_when(&history, record(detour_to("detour:new", 45.3))).is_ok());
}

#[test]
fn a_past_version_comes_back_under_a_new_version_and_generation() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let at_two = fold(&history).expect("trip");
    assert_eq!(at_two.version, 2);
    history.extend(
        given_when(
            &history,
            update(
                SettingsPatch {
                    max_distance_per_day: Some(120.0),
                    title: Some("Longer days".into()),
                    ..Default::default()
                },
                2,
            ),
        )
        .expect("re-paced"),
    );
    let now = fold(&history).expect("trip");
    assert_eq!((now.version, now.generation, now.stages.len()), (3, 2, 0));
    let restore = |expected_version| TripCommand::Restore {
        past: Box::new(at_two.clone()),
        expected_version,
        today: today(),
    };
    assert_eq!(
        given_when(&history, restore(2)),
        Err(TripError::StaleVersion {
            expected: 2,
            current: 3
        })
    );
    let events = given_when(&history, restore(3)).expect("restored");
    assert!(matches!(
        &events[..],
        [
            TripEvent::TripRestored {
                from_version: 2,
                version: 4,
                generation: 3,
                ..
            },
            TripEvent::AnalysisRequested { generation: 3, .. }
        ]
    ));
    history.extend(events);
    let restored = fold(&history).expect("trip");
    assert_eq!(restored.version, 4);
    assert_eq!(restored.stages, at_two.stages);
    assert_eq!(restored.settings, at_two.settings);
    assert_eq!(restored.route, at_two.route);
    assert!(restored.is_partial(), "its analysis is asked again");
    // A late result of the generation the restore replaced is dropped.
    assert!(matches!(
        decide(
            Some(&restored),
            TripCommand::FailRoute {
                generation: 2,
                reason: "late".into()
            }
        ),
        Err(TripError::Superseded { .. })
    ));
    // A version without days cannot be restored.
    let at_one = fold(&history[..2]).expect("trip");
    let refused = decide(
        Some(&restored),
        TripCommand::Restore {
            past: Box::new(at_one),
            expected_version: 4,
            today: today(),
        },
    );
    assert!(matches!(refused, Err(TripError::Invalid(e)) if e[0].field == "version"));
}

/// A detour's events keep the shape they are stored in: the day's figures at the top of the
/// event's data (`distanceKm`, `ascentM`, `descentM`), read back as they were written, and
/// read from data stored before the figures were one value.
#[test]
fn detour_events_keep_their_stored_shape() {
    let measure = edits::Measure {
        distance_km: 81.2,
        ascent_m: Some(540.0),
        descent_m: None,
    };
    let removed = TripEvent::DetourRemoved {
        generation: 3,
        stage_id: uuid::Uuid::from_u128(9),
        measure,
    };
    let data = removed.data();
    assert_eq!(
        data,
        json!({
            "generation": 3,
            "stageId": "00000000-0000-0000-0000-000000000009",
            "distanceKm": 81.2,
            "ascentM": 540.0,
            "descentM": null,
        })
    );
    let read = TripEvent::from_stored("DetourRemoved", TripEvent::SCHEMA_VERSION, &data)
        .expect("reads back");
    assert_eq!(read, removed);
    // As stored before: whole numbers, and a height absent rather than null.
    let older = json!({
        "generation": 3,
        "stageId": "00000000-0000-0000-0000-000000000009",
        "distanceKm": 81,
        "ascentM": 540,
    });
    let read = TripEvent::from_stored("DetourRemoved", TripEvent::SCHEMA_VERSION, &older)
        .expect("reads the older data");
    let TripEvent::DetourRemoved { measure, .. } = read else {
        panic!("not a DetourRemoved: {read:?}");
    };
    assert_eq!(
        measure,
        edits::Measure {
            distance_km: 81.0,
            ascent_m: Some(540.0),
            descent_m: None,
        }
    );
}

#[test]
fn a_detour_computed_over_a_day_whose_cut_moved_meanwhile_ends_as_a_failure() {
    let mut history = created(TripSettings::default());
    route_done(&mut history);
    let day = uuid::Uuid::from_u128(101);
    let mut detour = detour_to("detour:b", 45.2);
    history.extend(
        given_when(
            &history,
            TripCommand::RequestWaypoint {
                stage_id: day,
                waypoint: detour.waypoint,
                today: today(),
            },
        )
        .expect("asked"),
    );
    // The job worked on the day as it was at points 0..=7; the day is 0..=1 now.
    detour.spliced_day = Some(stage::DaySpan {
        first_point: 0,
        last_point: 7,
    });
    let events = given_when(&history, record(detour)).expect("an answer, not a refusal");
    assert!(
        matches!(&events[..], [TripEvent::DetourFailed { reason, .. }] if reason.contains("ask for the detour again")),
        "{events:?}"
    );
    history.extend(events);
    let trip = fold(&history).expect("trip");
    assert_eq!(
        trip.stages[0].waypoint_pending, None,
        "the job ended visibly"
    );
    assert!(trip.stages[0].detour_failure.is_some());
}

#[test]
fn a_new_plan_that_cannot_be_routed_brings_the_days_back_and_says_why() {
    let mut history = created_from_plan();
    route_done(&mut history);
    let before = fold(&history).expect("trip");
    let events = given_when(
        &history,
        TripCommand::UpdateSettings {
            patch: SettingsPatch::default(),
            plan: Some(planned("Balzers", "Nowhere")),
            expected_version: 2,
            today: today(),
        },
    )
    .expect("replanned");
    history.extend(events);
    let routing = fold(&history).expect("trip");
    assert!(routing.stages.is_empty(), "the new days are being computed");
    assert_eq!(routing.version, 3);
    let failed = given_when(
        &history,
        TripCommand::FailRoute {
            generation: 2,
            reason: "no way to reach 'Nowhere' (leg 1, Balzers → Nowhere)".into(),
        },
    )
    .expect("an answer");
    assert!(
        matches!(
            &failed[..],
            [
                TripEvent::RouteFailed { generation: 2, .. },
                TripEvent::TripRestored {
                    from_version: 2,
                    version: 4,
                    generation: 3,
                    because: Some(_),
                    ..
                },
                TripEvent::AnalysisRequested { generation: 3, .. }
            ]
        ),
        "{failed:?}"
    );
    history.extend(failed);
    let kept = fold(&history).expect("trip");
    assert_eq!(kept.stages, before.stages, "the days of version 2 are back");
    assert_eq!(kept.source, before.source, "with the plan they belong to");
    let notice = kept
        .notice
        .as_deref()
        .expect("the failure is said beside them");
    assert!(
        notice.contains("Nowhere") && notice.contains("version 2"),
        "{notice}"
    );
    assert!(
        kept.unavailable.is_empty(),
        "the failure is not repeated per category"
    );
    // The version the agent's failed change answered (3) is still good for its next one.
    let next = given_when(
        &history,
        TripCommand::UpdateSettings {
            patch: SettingsPatch {
                title: Some("South".into()),
                ..Default::default()
            },
            plan: None,
            expected_version: 3,
            today: today(),
        },
    )
    .expect("only Etappe's work came after version 3");
    history.extend(next);
    assert_eq!(
        fold(&history).expect("trip").notice,
        None,
        "a new change ends the notice"
    );
}

#[test]
fn a_failed_first_route_says_its_reason_once() {
    let mut history = created_from_plan();
    history.extend(
        given_when(
            &history,
            TripCommand::FailRoute {
                generation: 1,
                reason: "the router has no map here".into(),
            },
        )
        .expect("failed"),
    );
    let trip = fold(&history).expect("trip");
    assert!(trip.stages.is_empty(), "no days to keep");
    let reasons: Vec<&String> = trip.unavailable.values().collect();
    assert_eq!(
        reasons.iter().filter(|r| r.contains("no map here")).count(),
        1,
        "{reasons:?}"
    );
}
