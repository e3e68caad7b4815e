//! Given a trip, when it is duplicated, then the copy's events. No I/O.

use chrono::NaiveDate;
use uuid::Uuid;

use super::*;
use crate::trip::settings::TripSettings;
use crate::trip::source::SourceUrl;
use crate::trip::stage::{Accommodation, Point, RouteSummary, Stage};
use crate::trip::{ShareLink, evolve, fold};

fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

fn today() -> NaiveDate {
    "2030-01-10".parse().expect("date")
}

const COPY: TripId = TripId(Uuid::from_u128(900));
const RIDER: UserId = UserId(Uuid::from_u128(901));

fn point(lat: f64) -> Point {
    Point {
        lat,
        lon: 6.0,
        ele: None,
    }
}

fn stage(n: u32) -> Stage {
    Stage {
        id: id(100 + u128::from(n)),
        day_number: n,
        distance_km: 50.0,
        ascent_m: Some(300.0),
        descent_m: Some(200.0),
        start: point(45.0 + f64::from(n - 1) * 0.4),
        end: point(45.0 + f64::from(n) * 0.4),
        start_label: Some(format!("Town {}", n - 1)),
        end_label: Some(format!("Town {n}")),
        start_country: Some("FR".into()),
        end_country: Some("FR".into()),
        label: (n == 1).then(|| "Warm-up".to_owned()),
        first_point: (n as usize - 1) * 50,
        last_point: n as usize * 50,
        accommodation: (n == 1).then(|| Accommodation {
            name: Some("Camping du Lac".into()),
            kind: "camp_site".into(),
            lat: 45.4,
            lon: 6.0,
            distance_to_end_m: Some(400.0),
            price_min_eur: Some(10.0),
            price_max_eur: Some(25.0),
            exact_price: false,
            url: None,
            phone: None,
            address: None,
            source: "osm".into(),
            chosen_by: None,
        }),
        ..Default::default()
    }
}

/// A trip with two days computed; the analysis is whatever `analysed` says.
fn original(settings: TripSettings, analysed: bool) -> Trip {
    let mut history = vec![
        TripEvent::TripCreated {
            trip_id: TripId(id(1)),
            owner_id: UserId(id(2)),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings,
            version: 1,
        },
        TripEvent::RouteRequested { generation: 1 },
        TripEvent::RouteComputed {
            generation: 1,
            route: RouteSummary {
                title: Some("Along the lake".into()),
                total_distance_km: 100.0,
                ascent_m: Some(600.0),
                descent_m: Some(400.0),
                point_count: 101,
                track_key: "track:1:1".into(),
                elevation: None,
            },
            stages: vec![stage(1), stage(2)],
            version: 2,
        },
    ];
    if analysed {
        history.push(TripEvent::AnalysisCompleted {
            generation: 1,
            stages: Vec::new(),
            done: crate::trip::stage::ANALYSIS_CATEGORIES.to_vec(),
            unavailable: Vec::new(),
        });
    }
    let mut trip = fold(&history).expect("a trip");
    trip.share = Some(ShareLink {
        code: "abcdefghij".into(),
        created_at: chrono::Utc::now(),
    });
    trip
}

fn copy_of(original: &Trip) -> (Trip, Vec<TripEvent>) {
    let events = decide_duplicate(None, COPY, RIDER, original, today()).expect("duplicated");
    let mut state = None;
    for event in &events {
        state = evolve(state, event);
    }
    (state.expect("the copy exists"), events)
}

#[test]
fn a_copy_keeps_days_choices_and_settings_under_new_ids_without_the_public_link() {
    let original = original(TripSettings::default(), true);
    let (copy, events) = copy_of(&original);
    assert_eq!(events.len(), 1, "nothing left to compute: {events:?}");
    assert_eq!(copy.id, COPY);
    assert_eq!(copy.owner_id, RIDER);
    assert_eq!(copy.version, 1);
    assert_eq!(copy.share, None);
    assert_eq!(
        copy.settings.title.as_deref(),
        Some("Along the lake (copy)")
    );
    assert_eq!(copy.route, original.route);
    assert_eq!(copy.computations, original.computations);
    assert_eq!(copy.stages.len(), 2);
    for (copied, was) in copy.stages.iter().zip(&original.stages) {
        assert_ne!(copied.id, was.id, "a day of the copy has its own id");
        let mut same = copied.clone();
        same.id = was.id;
        assert_eq!(&same, was, "everything else is the same");
    }
    let again = decide_duplicate(None, COPY, RIDER, &original, today()).expect("again");
    assert_eq!(again, events, "deciding again gives the same ids");
}

#[test]
fn a_copy_of_a_trip_without_days_computes_its_own() {
    let mut original = original(TripSettings::default(), false);
    original.stages.clear();
    original.route = None;
    original
        .computations
        .insert(Category::Route, ComputationStatus::Running);
    let (copy, events) = copy_of(&original);
    assert!(matches!(
        events.last(),
        Some(TripEvent::RouteRequested { generation: 1 })
    ));
    assert!(copy.is_partial());
    assert_eq!(copy.generation, 1);
    assert!(
        copy.computations
            .values()
            .all(|s| *s == ComputationStatus::Pending)
    );
}

#[test]
fn analysis_the_original_had_not_finished_is_requested_for_the_copy() {
    let original = original(TripSettings::default(), false);
    let (copy, events) = copy_of(&original);
    match events.last() {
        Some(TripEvent::AnalysisRequested {
            generation,
            categories,
        }) => {
            assert_eq!(*generation, 1);
            assert_eq!(
                categories,
                &crate::trip::stage::ANALYSIS_CATEGORIES.to_vec()
            );
        }
        other => panic!("expected an analysis request, got {other:?}"),
    }
    for category in crate::trip::stage::ANALYSIS_CATEGORIES {
        assert_eq!(copy.computations[&category], ComputationStatus::Pending);
    }
}

#[test]
fn a_copy_of_a_started_trip_drops_its_dates_and_recomputes_what_depends_on_them() {
    let settings = TripSettings {
        start_date: Some("2030-01-05".parse().expect("date")),
        end_date: Some("2030-01-06".parse().expect("date")),
        ..TripSettings::default()
    };
    let original = original(settings, true);
    assert!(original.is_locked(today()));
    let (copy, events) = copy_of(&original);
    assert!(!copy.is_locked(today()), "the copy can be edited");
    assert_eq!(copy.settings.start_date, None);
    assert_eq!(copy.settings.end_date, None);
    assert_eq!(copy.stages.len(), 2, "the days stay");
    match events.last() {
        Some(TripEvent::AnalysisRequested { categories, .. }) => {
            assert_eq!(categories, &vec![Category::Weather, Category::Context]);
        }
        other => panic!("expected an analysis request, got {other:?}"),
    }
    assert_eq!(
        copy.computations[&Category::Weather],
        ComputationStatus::Pending
    );
    assert_eq!(
        copy.computations[&Category::TerrainSecurity],
        ComputationStatus::Done
    );
}

#[test]
fn a_long_title_stays_within_its_limit() {
    let settings = TripSettings {
        title: Some("é".repeat(TITLE_MAX_CHARS)),
        ..TripSettings::default()
    };
    let (copy, _) = copy_of(&original(settings, true));
    let title = copy.settings.title.expect("a title");
    assert_eq!(title.chars().count(), TITLE_MAX_CHARS);
    assert!(title.ends_with(" (copy)"));
}

#[test]
fn a_deleted_trip_or_an_existing_copy_is_refused() {
    let mut gone = original(TripSettings::default(), true);
    gone.deleted = true;
    assert_eq!(
        decide_duplicate(None, COPY, RIDER, &gone, today()),
        Err(TripError::NotFound)
    );
    let original = original(TripSettings::default(), true);
    assert_eq!(
        decide_duplicate(Some(&original), COPY, RIDER, &original, today()),
        Err(TripError::AlreadyExists)
    );
}

#[test]
fn decide_duplicates_and_points_the_copy_at_the_files_copied_for_it() {
    let original = original(TripSettings::default(), true);
    let renamed = BTreeMap::from([("track:1:1".to_owned(), "track:copy:1".to_owned())]);
    let events = crate::trip::decide(
        None,
        crate::trip::TripCommand::Duplicate {
            trip_id: COPY,
            owner_id: RIDER,
            original: Box::new(original.clone()),
            today: today(),
            renamed_files: renamed,
        },
    )
    .expect("duplicated");
    let copy = fold(&events).expect("the copy exists");
    assert_eq!(
        copy.route.as_ref().map(|r| r.track_key.as_str()),
        Some("track:copy:1"),
        "the copy's route reads the file copied for it"
    );
    let (plain, _) = copy_of(&original);
    assert_eq!(copy.stages, plain.stages, "everything else as duplicated");
}
