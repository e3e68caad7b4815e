//! Given a trip with days, when an edit, then the days after it (or the refusal). No I/O: the
//! route is a straight line due north with one point per kilometre.

use chrono::NaiveDate;
use uuid::Uuid;

use super::apply::remeasure;
use super::*;
use crate::ids::{TripId, UserId};
use crate::trip::nights::{BedOnRoute, ChosenBy};
use crate::trip::settings::NightsMode;
use crate::trip::settings::TripSettings;
use crate::trip::source::SourceUrl;
use crate::trip::stage::RouteSummary;
use crate::trip::{ComputationStatus, fold};

const KM_IN_DEGREES: f64 = 1.0 / 111.195;

/// A line due north, one point a kilometre, named after its index.
struct Line(usize);

impl RouteGeometry for Line {
    fn point_count(&self) -> usize {
        self.0
    }
    fn point(&self, index: usize) -> Option<Point> {
        (index < self.0).then_some(Point {
            lat: 45.0 + index as f64 * KM_IN_DEGREES,
            lon: 6.0,
            ele: None,
        })
    }
    fn measure(&self, first: usize, last: usize) -> Measure {
        Measure {
            distance_km: last.saturating_sub(first) as f64,
            ascent_m: Some(10.0 * last.saturating_sub(first) as f64),
            descent_m: Some(0.0),
        }
    }
    fn nearest(&self, target: Point, first: usize, last: usize) -> usize {
        let index = ((target.lat - 45.0) / KM_IN_DEGREES).round().max(0.0) as usize;
        index.clamp(first, last)
    }
    fn index_at_km(&self, first: usize, last: usize, km: f64) -> usize {
        (first + km.ceil() as usize).min(last)
    }
    fn place(&self, point: Point) -> (Option<String>, Option<String>) {
        let index = ((point.lat - 45.0) / KM_IN_DEGREES).round() as i64;
        (Some(format!("km {index}")), Some("FR".into()))
    }
}

fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

fn date(s: &str) -> NaiveDate {
    s.parse().expect("test date")
}

fn today() -> NaiveDate {
    date("2030-01-10")
}

fn stage(n: u128, first: usize, last: usize) -> Stage {
    let line = Line(100);
    let mut stage = Stage {
        id: id(n),
        day_number: n as u32,
        distance_km: 0.0,
        ascent_m: Some(0.0),
        descent_m: Some(0.0),
        start: Point {
            lat: 0.0,
            lon: 0.0,
            ele: None,
        },
        end: Point {
            lat: 0.0,
            lon: 0.0,
            ele: None,
        },
        first_point: first,
        last_point: last,
        ..Default::default()
    };
    remeasure(&mut stage, &line);
    stage
}

/// A 99 km trip of three 33 km days (ids 1, 2, 3), structural version 2.
fn history(settings: TripSettings) -> Vec<TripEvent> {
    vec![
        TripEvent::TripCreated {
            trip_id: TripId(id(100)),
            owner_id: UserId(id(200)),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings,
            version: 1,
        },
        TripEvent::RouteRequested { generation: 1 },
        TripEvent::RouteComputed {
            generation: 1,
            route: RouteSummary {
                title: None,
                total_distance_km: 99.0,
                ascent_m: Some(990.0),
                descent_m: Some(0.0),
                point_count: 100,
                track_key: "track".into(),
                elevation: None,
            },
            stages: vec![stage(1, 0, 33), stage(2, 33, 66), stage(3, 66, 99)],
            version: 2,
        },
    ]
}

fn trip() -> Trip {
    fold(&history(TripSettings::default())).expect("a trip")
}

fn edit(trip: &Trip, edit: StageEdit) -> Result<Vec<TripEvent>, TripError> {
    decide_stage_edit(Some(trip), edit, trip.version, today(), &Line(100))
}

/// The days after a successful edit, checked to be a contiguous cover of the route.
fn days_after(trip: &Trip, change: StageEdit) -> (Trip, Vec<TripEvent>) {
    let events = edit(trip, change).expect("the edit is accepted");
    let mut after = trip.clone();
    for event in &events {
        after = crate::trip::evolve(Some(after), event).expect("still a trip");
    }
    for (i, stage) in after.stages.iter().enumerate() {
        assert_eq!(stage.day_number as usize, i + 1, "days are renumbered");
    }
    (after, events)
}

fn spans(trip: &Trip) -> Vec<(u128, usize, usize, bool)> {
    trip.stages
        .iter()
        .map(|s| (s.id.as_u128(), s.first_point, s.last_point, s.is_rest_day))
        .collect()
}

#[test]
fn adding_a_day_splits_one_in_two_and_keeps_every_other_id() {
    let trip = trip();
    let (after, events) = days_after(
        &trip,
        StageEdit::Add {
            stage_id: id(2),
            new_stage_id: id(9),
            split: Some(Boundary::AtKm(10.0)),
            label: LabelChange::Set("Lac".into()),
        },
    );
    assert_eq!(
        spans(&after),
        vec![
            (1, 0, 33, false),
            (2, 33, 43, false),
            (9, 43, 66, false),
            (3, 66, 99, false)
        ]
    );
    assert_eq!(after.stages[1].distance_km, 10.0);
    assert_eq!(after.stages[2].distance_km, 23.0);
    assert_eq!(after.stages[2].label.as_deref(), Some("Lac"));
    assert_eq!(after.stages[1].end_label.as_deref(), Some("km 43"));
    assert_eq!(after.version, trip.version + 1);
    assert!(matches!(
        events.last(),
        Some(TripEvent::AnalysisRequested { categories, .. }) if categories.len() == 5
    ));
}

#[test]
fn adding_without_a_split_point_cuts_the_day_in_half() {
    let (after, _) = days_after(
        &trip(),
        StageEdit::Add {
            stage_id: id(1),
            new_stage_id: id(9),
            split: None,
            label: LabelChange::Keep,
        },
    );
    assert_eq!(after.stages[0].last_point, 17);
    assert_eq!(after.stages[1].first_point, 17);
}

#[test]
fn moving_a_days_end_moves_the_next_days_start() {
    let trip = trip();
    let (after, events) = days_after(
        &trip,
        StageEdit::Update {
            stage_id: id(1),
            end: Some(Boundary::AtKm(40.0)),
            label: LabelChange::Keep,
        },
    );
    assert_eq!(
        spans(&after),
        vec![(1, 0, 40, false), (2, 40, 66, false), (3, 66, 99, false)]
    );
    assert_eq!(after.stages[1].distance_km, 26.0);
    assert_eq!(after.stages[1].ascent_m, Some(260.0));
    assert_eq!(after.stages[1].start_label.as_deref(), Some("km 40"));
    assert_eq!(
        after.computations.get(&Category::TerrainSecurity),
        Some(&ComputationStatus::Pending)
    );
    assert_eq!(events.len(), 2);
}

#[test]
fn a_day_can_end_at_the_route_point_nearest_a_place() {
    let line = Line(100);
    let place = line.point(50).expect("point");
    let (after, _) = days_after(
        &trip(),
        StageEdit::Update {
            stage_id: id(2),
            end: Some(Boundary::Near(Point {
                lat: place.lat,
                lon: 6.01,
                ele: None,
            })),
            label: LabelChange::Keep,
        },
    );
    assert_eq!(after.stages[1].last_point, 50);
    assert_eq!(after.stages[2].first_point, 50);
}

#[test]
fn relabelling_a_day_moves_the_version_but_recomputes_nothing() {
    let trip = trip();
    let (after, events) = days_after(
        &trip,
        StageEdit::Update {
            stage_id: id(3),
            end: None,
            label: LabelChange::Set("  Summit\u{0007} day ".into()),
        },
    );
    assert_eq!(after.stages[2].label.as_deref(), Some("Summit day"));
    assert_eq!(after.version, trip.version + 1);
    assert_eq!(events.len(), 1, "no analysis is requested for a label");
    let (cleared, _) = days_after(
        &after,
        StageEdit::Update {
            stage_id: id(3),
            end: None,
            label: LabelChange::Clear,
        },
    );
    assert_eq!(cleared.stages[2].label, None);
}

#[test]
fn the_last_days_end_cannot_move_and_a_boundary_must_stay_inside_the_two_days() {
    let trip = trip();
    let last = edit(
        &trip,
        StageEdit::Update {
            stage_id: id(3),
            end: Some(Boundary::AtKm(10.0)),
            label: LabelChange::Keep,
        },
    );
    assert!(matches!(last, Err(TripError::Invalid(e)) if e[0].field == "stageId"));
    for km in [0.0, -3.0, 66.0, 500.0, f64::NAN] {
        let outside = edit(
            &trip,
            StageEdit::Update {
                stage_id: id(1),
                end: Some(Boundary::AtKm(km)),
                label: LabelChange::Keep,
            },
        );
        assert!(
            matches!(&outside, Err(TripError::Invalid(e)) if e[0].field == "distance" && e[0].message.contains("66.0")),
            "{km}: {outside:?}"
        );
    }
}

#[test]
fn a_rest_day_moves_and_is_spent_where_the_day_before_it_ends() {
    let (with_rest, _) = days_after(
        &trip(),
        StageEdit::RestDay {
            stage_id: id(1),
            new_stage_id: id(9),
        },
    );
    let (after, events) = days_after(
        &with_rest,
        StageEdit::Move {
            stage_id: id(9),
            to_index: 3,
        },
    );
    assert_eq!(
        spans(&after),
        vec![
            (1, 0, 33, false),
            (2, 33, 66, false),
            (3, 66, 99, false),
            (9, 99, 99, true)
        ],
        "the rest day is spent where the day before it now ends"
    );
    assert_eq!(after.stages[3].start, after.stages[2].end);
    assert_eq!(after.stages[3].end_label, after.stages[2].end_label);
    assert!(matches!(
        events.last(),
        Some(TripEvent::AnalysisRequested { categories, .. })
            if categories == &vec![Category::Weather, Category::Context]
    ));
    // ...and the rest day at the end can be removed.
    let (removed, _) = days_after(&after, StageEdit::Delete { stage_id: id(9) });
    assert_eq!(removed.stages.len(), 3);
}

#[test]
fn riding_days_keep_the_routes_order_and_a_rest_day_never_comes_first() {
    let refused = edit(
        &trip(),
        StageEdit::Move {
            stage_id: id(1),
            to_index: 2,
        },
    );
    assert!(
        matches!(&refused, Err(TripError::Invalid(e)) if e[0].field == "toIndex" && e[0].message.contains("only a rest day moves")),
        "{refused:?}"
    );
    let (with_rest, _) = days_after(
        &trip(),
        StageEdit::RestDay {
            stage_id: id(2),
            new_stage_id: id(9),
        },
    );
    let first = edit(
        &with_rest,
        StageEdit::Move {
            stage_id: id(9),
            to_index: 0,
        },
    );
    assert!(
        matches!(&first, Err(TripError::Invalid(e)) if e[0].message.contains("after a riding day")),
        "{first:?}"
    );
    // Moving a riding day across a rest day keeps the riding order: allowed, and the rest
    // day follows the day now before it.
    let (swapped, _) = days_after(
        &with_rest,
        StageEdit::Move {
            stage_id: id(3),
            to_index: 2,
        },
    );
    assert_eq!(
        spans(&swapped),
        vec![
            (1, 0, 33, false),
            (2, 33, 66, false),
            (3, 66, 99, false),
            (9, 99, 99, true)
        ]
    );
}

#[test]
fn merging_into_the_next_day_says_so_and_does_it() {
    let (after, _) = days_after(&trip(), StageEdit::MergeNext { stage_id: id(2) });
    assert_eq!(spans(&after), vec![(1, 0, 33, false), (3, 33, 99, false)]);
    let (previous, _) = days_after(&trip(), StageEdit::Delete { stage_id: id(2) });
    assert_eq!(
        spans(&previous),
        vec![(1, 0, 66, false), (3, 66, 99, false)]
    );
    let last = edit(&trip(), StageEdit::MergeNext { stage_id: id(3) });
    assert!(
        matches!(&last, Err(TripError::Invalid(e)) if e[0].message.contains("no next day")),
        "{last:?}"
    );
    // A rest day that sat after the merged day follows the day it now comes after.
    let (with_rest, _) = days_after(
        &trip(),
        StageEdit::RestDay {
            stage_id: id(2),
            new_stage_id: id(9),
        },
    );
    let (merged, _) = days_after(&with_rest, StageEdit::MergeNext { stage_id: id(2) });
    assert_eq!(
        spans(&merged),
        vec![(1, 0, 33, false), (9, 33, 33, true), (3, 33, 99, false)]
    );
}

#[test]
fn a_move_out_of_range_names_the_valid_range() {
    let refused = edit(
        &trip(),
        StageEdit::Move {
            stage_id: id(1),
            to_index: 3,
        },
    );
    assert!(
        matches!(&refused, Err(TripError::Invalid(e)) if e[0].field == "toIndex" && e[0].message.contains("between 0 and 2")),
        "{refused:?}"
    );
}

#[test]
fn deleting_a_day_merges_it_into_the_previous_one() {
    let (after, _) = days_after(&trip(), StageEdit::Delete { stage_id: id(2) });
    assert_eq!(spans(&after), vec![(1, 0, 66, false), (3, 66, 99, false)]);
    assert_eq!(after.stages[0].distance_km, 66.0);
}

#[test]
fn deleting_the_first_day_merges_it_into_the_next_one() {
    let (after, _) = days_after(&trip(), StageEdit::Delete { stage_id: id(1) });
    assert_eq!(spans(&after), vec![(2, 0, 66, false), (3, 66, 99, false)]);
    assert_eq!(after.stages[0].start_label.as_deref(), Some("km 0"));
}

#[test]
fn the_last_riding_day_cannot_be_deleted() {
    let mut trip = trip();
    trip.stages.truncate(1);
    let refused = edit(&trip, StageEdit::Delete { stage_id: id(1) });
    assert!(matches!(refused, Err(TripError::Invalid(e)) if e[0].message.contains("at least one")));
}

#[test]
fn a_rest_day_sits_on_the_previous_end_and_shifts_the_dates() {
    let settings = TripSettings {
        start_date: Some(date("2030-06-01")),
        end_date: Some(date("2030-06-03")),
        ..TripSettings::default()
    };
    let trip = fold(&history(settings)).expect("trip");
    let (after, _) = days_after(
        &trip,
        StageEdit::RestDay {
            stage_id: id(1),
            new_stage_id: id(9),
        },
    );
    assert_eq!(
        spans(&after),
        vec![
            (1, 0, 33, false),
            (9, 33, 33, true),
            (2, 33, 66, false),
            (3, 66, 99, false)
        ]
    );
    assert_eq!(after.stages[1].distance_km, 0.0);
    assert_eq!(after.stages[1].start, after.stages[0].end);
    assert_eq!(after.settings.end_date, Some(date("2030-06-04")));
    // Moving the day's end carries the rest day along with it.
    let (moved, _) = days_after(
        &after,
        StageEdit::Update {
            stage_id: id(1),
            end: Some(Boundary::AtKm(30.0)),
            label: LabelChange::Keep,
        },
    );
    assert_eq!(
        spans(&moved),
        vec![
            (1, 0, 30, false),
            (9, 30, 30, true),
            (2, 30, 66, false),
            (3, 66, 99, false)
        ]
    );
    // Deleting the rest day brings the end date back.
    let (deleted, _) = days_after(&moved, StageEdit::Delete { stage_id: id(9) });
    assert_eq!(deleted.settings.end_date, Some(date("2030-06-03")));
    assert_eq!(deleted.stages.len(), 3);
}

#[test]
fn choosing_a_place_to_sleep_moves_the_days_end_to_it() {
    let line = Line(100);
    let near = line.point(36).expect("point");
    let place = Accommodation {
        name: Some("Camping du Lac".into()),
        kind: "camp_site".into(),
        lat: near.lat,
        lon: 6.002,
        distance_to_end_m: None,
        price_min_eur: Some(8.0),
        price_max_eur: Some(25.0),
        exact_price: false,
        url: None,
        phone: None,
        address: None,
        source: "osm".into(),
        chosen_by: None,
    };
    let trip = trip();
    let (after, _) = days_after(
        &trip,
        StageEdit::ChooseAccommodation {
            stage_id: id(1),
            accommodation: place,
        },
    );
    assert_eq!(after.stages[0].last_point, 36);
    assert_eq!(after.stages[1].first_point, 36);
    let chosen = after.stages[0].accommodation.as_ref().expect("chosen");
    let off_route = chosen.distance_to_end_m.expect("distance");
    assert!((150.0..170.0).contains(&off_route), "{off_route}");
    assert_eq!(after.version, trip.version + 1);
    let (cleared, _) = days_after(&after, StageEdit::ClearAccommodation { stage_id: id(1) });
    assert_eq!(cleared.stages[0].accommodation, None);
    assert_eq!(
        cleared.stages[0].last_point, 36,
        "clearing keeps the day's end"
    );
}

#[test]
fn guards_come_in_order_lock_version_days_stage() {
    let locked = fold(&history(TripSettings {
        start_date: Some(today()),
        ..TripSettings::default()
    }))
    .expect("trip");
    let delete = |n| StageEdit::Delete { stage_id: id(n) };
    // A locked trip is refused before its version is even looked at.
    assert_eq!(
        decide_stage_edit(Some(&locked), delete(99), 1, today(), &Line(100)),
        Err(TripError::Locked)
    );
    let trip = trip();
    assert_eq!(
        decide_stage_edit(Some(&trip), delete(99), 0, today(), &Line(100)),
        Err(TripError::StaleVersion {
            expected: 0,
            current: 2
        })
    );
    assert_eq!(edit(&trip, delete(99)), Err(TripError::StageNotFound));
    let partial = fold(&history(TripSettings::default())[..2]).expect("trip");
    assert_eq!(
        decide_stage_edit(Some(&partial), delete(1), 1, today(), &Line(100)),
        Err(TripError::NoStages)
    );
    assert_eq!(
        decide_stage_edit(None, delete(1), 1, today(), &Line(100)),
        Err(TripError::NotFound)
    );
}

#[test]
fn a_label_longer_than_the_limit_is_refused() {
    let refused = edit(
        &trip(),
        StageEdit::Update {
            stage_id: id(1),
            end: None,
            label: LabelChange::Set("x".repeat(LABEL_MAX_CHARS + 1)),
        },
    );
    assert!(matches!(refused, Err(TripError::Invalid(e)) if e[0].field == "label"));
}

#[test]
fn random_edit_sequences_keep_the_days_a_cover_of_the_route() {
    // A small deterministic generator: no dependency, reproducible.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound.max(1)
    };
    let mut trip = trip();
    let mut minted = 1000;
    for _ in 0..400 {
        let pick = trip.stages[next(trip.stages.len() as u64) as usize].id;
        minted += 1;
        let change = match next(7) {
            0 => StageEdit::Add {
                stage_id: pick,
                new_stage_id: id(minted),
                split: None,
                label: LabelChange::Keep,
            },
            1 => StageEdit::Update {
                stage_id: pick,
                end: Some(Boundary::AtKm(1.0 + next(40) as f64)),
                label: LabelChange::Keep,
            },
            2 => StageEdit::Delete { stage_id: pick },
            3 => StageEdit::RestDay {
                stage_id: pick,
                new_stage_id: id(minted),
            },
            5 => StageEdit::MergeNext { stage_id: pick },
            6 => StageEdit::Move {
                stage_id: pick,
                to_index: next(trip.stages.len() as u64) as usize,
            },
            _ => StageEdit::Update {
                stage_id: pick,
                end: None,
                label: LabelChange::Set(format!("day {minted}")),
            },
        };
        if let Ok(events) = edit(&trip, change) {
            for event in &events {
                trip = crate::trip::evolve(Some(trip), event).expect("trip");
            }
        }
        let riding: Vec<&Stage> = trip.stages.iter().filter(|s| !s.is_rest_day).collect();
        assert!(!trip.stages[0].is_rest_day, "a rest day never comes first");
        for pair in trip.stages.windows(2) {
            if pair[1].is_rest_day {
                assert_eq!(
                    pair[1].first_point,
                    pair[0].last_point,
                    "{:?}",
                    spans(&trip)
                );
            }
        }
        assert_eq!(riding.first().map(|s| s.first_point), Some(0));
        assert_eq!(riding.last().map(|s| s.last_point), Some(99));
        for pair in riding.windows(2) {
            assert_eq!(
                pair[0].last_point,
                pair[1].first_point,
                "{:?}",
                spans(&trip)
            );
            assert!(pair[0].first_point < pair[0].last_point);
        }
        let total: f64 = riding.iter().map(|s| s.distance_km).sum();
        assert!((total - 99.0).abs() < 1e-9, "{total}");
        let mut ids: Vec<Uuid> = trip.stages.iter().map(|s| s.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), trip.stages.len(), "ids stay unique");
    }
}

#[test]
fn decide_takes_day_edits_and_refuses_one_made_over_a_superseded_route() {
    let trip = trip();
    let delete = |n| StageEdit::Delete { stage_id: id(n) };
    let route = RouteSnapshot::new(Line(100));
    let command = |generation| crate::trip::TripCommand::EditStages {
        edit: delete(2),
        expected_version: trip.version,
        generation,
        today: today(),
        route: route.clone(),
    };
    assert_eq!(
        crate::trip::decide(Some(&trip), command(trip.generation)),
        edit(&trip, delete(2)),
        "the one entry point decides a day edit as the edit rules do"
    );
    assert_eq!(
        crate::trip::decide(Some(&trip), command(trip.generation + 1)),
        Err(TripError::Superseded {
            generation: trip.generation + 1,
            current: trip.generation,
        }),
        "an edit measured on another generation's route is refused"
    );
}

/// A place to sleep on the line at kilometre `km`, of `kind`.
fn bed_at(km: usize, name: &str) -> BedOnRoute {
    let at = Line(100).point(km).expect("on the line");
    BedOnRoute {
        accommodation: Accommodation {
            name: Some(name.into()),
            kind: "camp_site".into(),
            lat: at.lat,
            lon: at.lon,
            distance_to_end_m: None,
            price_min_eur: None,
            price_max_eur: None,
            exact_price: false,
            url: None,
            phone: None,
            address: None,
            source: "osm".into(),
            chosen_by: None,
        },
        point_index: km,
        along_m: km as f64 * 1000.0,
        off_route_m: 0.0,
    }
}

/// A 99 km trip paced at accommodation: four days ending at the camp sites at 25, 50 and
/// 75 km that Etappe chose (night 3's by `night_3` instead, when given), and the beds found.
fn paced_at_beds(night_3: ChosenBy) -> (Trip, Vec<BedOnRoute>) {
    let beds = [25, 30, 50, 53, 75, 80].map(|km| bed_at(km, &format!("Camping km {km}")));
    let mut events = history(TripSettings {
        nights: NightsMode::AtAccommodation,
        ..TripSettings::default()
    });
    let TripEvent::RouteComputed { stages, .. } = &mut events[2] else {
        unreachable!("the third event computes the route")
    };
    *stages = vec![
        stage(1, 0, 25),
        stage(2, 25, 50),
        stage(3, 50, 75),
        stage(4, 75, 99),
    ];
    for (i, stage) in stages.iter_mut().take(3).enumerate() {
        let mut place = beds[[0, 2, 4][i]].accommodation.clone();
        place.chosen_by = Some(if i == 2 { night_3 } else { ChosenBy::Etappe });
        stage.accommodation = Some(place);
        stage.planned_km = Some(25.0);
    }
    stages[3].planned_km = Some(24.0);
    (fold(&events).expect("a trip"), beds.to_vec())
}

fn choose_over(trip: &Trip, stage: u128, bed: &BedOnRoute, beds: &[BedOnRoute]) -> Trip {
    let events = decide_stage_edit_over(
        Some(trip),
        StageEdit::ChooseAccommodation {
            stage_id: id(stage),
            accommodation: bed.accommodation.clone(),
        },
        trip.version,
        today(),
        &Line(100),
        beds,
    )
    .expect("the choice is accepted");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, TripEvent::StagesEdited { .. }))
            .count(),
        1,
        "one edit: {events:?}"
    );
    let mut after = trip.clone();
    for event in &events {
        after = crate::trip::evolve(Some(after), event).expect("still a trip");
    }
    assert_eq!(after.version, trip.version + 1, "one version");
    after
}

#[test]
fn choosing_another_bed_reflows_the_nights_after_it_in_one_version() {
    let (trip, beds) = paced_at_beds(ChosenBy::Etappe);
    let events = decide_stage_edit_over(
        Some(&trip),
        StageEdit::ChooseAccommodation {
            stage_id: id(1),
            accommodation: beds[1].accommodation.clone(),
        },
        trip.version,
        today(),
        &Line(100),
        &beds,
    )
    .expect("accepted");
    let Some(TripEvent::StagesEdited { reflow, .. }) = events.first() else {
        panic!("a day edit first: {events:?}")
    };
    let reflow = reflow.clone().expect("the nights re-flowed");
    assert_eq!(reflow.chosen, "Camping km 30");
    assert!(reflow.moved.contains(&2), "night 2 moved: {reflow:?}");
    assert_eq!(reflow.kept, None);
    let after = choose_over(&trip, 1, &beds[1], &beds);
    // 69 km left for three days from km 30: night 2 at the bed nearest 23 km on (53),
    // night 3 at the bed nearest 23 km on from there (75); the last day ends at the route's end.
    let ends: Vec<usize> = after.stages.iter().map(|s| s.last_point).collect();
    assert_eq!(ends, [30, 53, 75, 99]);
    let nights: Vec<_> = after.stages[..3]
        .iter()
        .map(|s| {
            let place = s.accommodation.as_ref().expect("a place each night");
            (place.name.clone().unwrap_or_default(), place.chosen_by)
        })
        .collect();
    assert_eq!(
        nights,
        [
            ("Camping km 30".to_string(), Some(ChosenBy::Rider)),
            ("Camping km 53".to_string(), Some(ChosenBy::Etappe)),
            ("Camping km 75".to_string(), Some(ChosenBy::Etappe)),
        ]
    );
    assert_eq!(
        after.stages[0].first_point, 0,
        "the day before is untouched"
    );
    assert!(
        after.stages[1].night.is_some(),
        "night 2 says why it is there"
    );
}

#[test]
fn a_reflow_stops_at_a_night_the_rider_chose_and_says_so() {
    let (trip, beds) = paced_at_beds(ChosenBy::Rider);
    let events = decide_stage_edit_over(
        Some(&trip),
        StageEdit::ChooseAccommodation {
            stage_id: id(1),
            accommodation: beds[1].accommodation.clone(),
        },
        trip.version,
        today(),
        &Line(100),
        &beds,
    )
    .expect("accepted");
    let Some(TripEvent::StagesEdited {
        reflow: Some(reflow),
        ..
    }) = events.first()
    else {
        panic!("a re-flow: {events:?}")
    };
    assert_eq!(
        reflow.kept,
        Some(KeptNight {
            night: 3,
            place: Some("Camping km 75".into())
        })
    );
    let after = choose_over(&trip, 1, &beds[1], &beds);
    let ends: Vec<usize> = after.stages.iter().map(|s| s.last_point).collect();
    assert_eq!(
        ends,
        [30, 53, 75, 99],
        "night 3 stays where the rider chose"
    );
    assert_eq!(after.stages[2].accommodation, trip.stages[2].accommodation);
    assert_eq!(
        after.stages[3], trip.stages[3],
        "the days after it are untouched"
    );
}

#[test]
fn with_nights_anywhere_a_choice_moves_only_its_own_night() {
    let (mut trip, beds) = paced_at_beds(ChosenBy::Etappe);
    trip.settings.nights = NightsMode::Anywhere;
    let after = choose_over(&trip, 1, &beds[1], &beds);
    let ends: Vec<usize> = after.stages.iter().map(|s| s.last_point).collect();
    assert_eq!(ends, [30, 50, 75, 99]);
}

mod kept;

#[test]
fn the_version_a_caller_holds_stays_good_while_only_etappes_work_moved_the_trip_on() {
    // Created at version 1; the route job's days moved it to 2. The creator's 1 still edits.
    let trip = trip();
    assert_eq!(trip.version, 2);
    let relabel = |n| StageEdit::Update {
        stage_id: id(n),
        end: None,
        label: LabelChange::Set("Along the lake".into()),
    };
    let events = decide_stage_edit(Some(&trip), relabel(1), 1, today(), &Line(100))
        .expect("nothing a caller made came after version 1");
    let mut after = trip;
    for event in &events {
        after = crate::trip::evolve(Some(after), event).expect("a trip");
    }
    assert_eq!(after.version, 3);
    // Now a caller's change came after 1 and after 2: both are stale, 3 is good.
    for stale in [1, 2] {
        assert_eq!(
            decide_stage_edit(Some(&after), relabel(2), stale, today(), &Line(100)),
            Err(TripError::StaleVersion {
                expected: stale,
                current: 3
            })
        );
    }
    assert!(decide_stage_edit(Some(&after), relabel(2), 3, today(), &Line(100)).is_ok());
}
