//! The pipeline's pure parts, tested without I/O.

use std::collections::HashMap;

use etappe_domain::ids::UserId;
use etappe_domain::trip::settings::TripSettings;
use etappe_domain::trip::source::SourceUrl;
use etappe_domain::trip::stage::{Detour, RouteSummary, Stage, StageAlerts};
use etappe_domain::trip::{Trip, TripEvent, fold};
use etappe_route::gpx::TrackPoint;

use etappe_track::stored;

use super::route::{CollectionBudget, RouteFailure};
use super::*;

fn terminal_reason(result: Result<(), RouteFailure>) -> Option<String> {
    match result {
        Err(RouteFailure::Terminal(reason)) => Some(reason),
        _ => None,
    }
}

#[test]
fn a_komoot_collection_is_capped_in_tours_and_bytes_and_says_so() {
    let mut budget = CollectionBudget::default();
    assert!(budget.check_tour_count(MAX_COLLECTION_TOURS).is_ok());
    let reason =
        terminal_reason(budget.check_tour_count(MAX_COLLECTION_TOURS + 1)).expect("too many tours");
    assert!(
        reason.contains("101 tours") && reason.contains("at most 100"),
        "{reason}"
    );

    assert!(budget.spend(MAX_COLLECTION_BYTES - 1).is_ok());
    assert!(budget.spend(1).is_ok());
    let reason = terminal_reason(budget.spend(1)).expect("too many bytes");
    assert!(reason.contains("64 MB"), "{reason}");
}

/// `km` kilometres due north from 45°N 6°E, a point every 100 m, rising by `grade`.
fn line(km: f64, grade: f64, lon: f64) -> Vec<TrackPoint> {
    let steps = (km * 10.0) as usize;
    (0..=steps)
        .map(|i| TrackPoint {
            lat: 45.0 + i as f64 * 0.1 / 111.195,
            lon,
            ele: Some(200.0 + i as f64 * 100.0 * grade),
        })
        .collect()
}

fn one_day_trip(points: &[TrackPoint]) -> Trip {
    let end = points.len() - 1;
    let at = |p: &TrackPoint| Point {
        lat: p.lat,
        lon: p.lon,
        ele: p.ele,
    };
    let stage = Stage {
        id: Uuid::from_u128(7),
        day_number: 1,
        distance_km: 10.0,
        ascent_m: Some(0.0),
        descent_m: Some(0.0),
        start: at(&points[0]),
        end: at(&points[end]),
        last_point: end,
        ..Default::default()
    };
    fold(&[
        TripEvent::TripCreated {
            trip_id: TripId(Uuid::from_u128(1)),
            owner_id: UserId(Uuid::from_u128(2)),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings: TripSettings::default(),
            version: 1,
        },
        TripEvent::RouteRequested { generation: 1 },
        TripEvent::RouteComputed {
            generation: 1,
            route: RouteSummary {
                title: None,
                total_distance_km: 10.0,
                ascent_m: Some(0.0),
                descent_m: Some(0.0),
                point_count: points.len(),
                track_key: "track".into(),
                elevation: None,
            },
            stages: vec![stage],
            version: 2,
        },
    ])
    .expect("a trip")
}

fn codes(alerts: &[StageAlerts]) -> Vec<String> {
    alerts
        .iter()
        .flat_map(|s| s.alerts.iter().map(|a| a.code.clone()))
        .collect()
}

#[test]
fn a_detoured_day_is_read_off_its_own_roads() {
    let flat = line(10.0, 0.0, 6.0);
    let mut trip = one_day_trip(&flat);
    let stored = stored::StoredTrack {
        points: flat,
        ..Default::default()
    };
    let plain = analyse_trip(&trip, &stored, &HashMap::new());
    assert!(
        !codes(&plain).contains(&"steep_gradient".to_owned()),
        "{plain:?}"
    );

    // The detour climbs at 10 % for 3 km: the day's alerts must say so.
    let climb = line(3.0, 0.10, 6.01);
    trip.stages[0].detour = Some(Detour {
        waypoint: Point {
            lat: 45.01,
            lon: 6.01,
            ele: None,
        },
        track_key: "detour".into(),
        original_distance_km: 10.0,
        estimated: false,
        router: "valhalla".into(),
        original_ascent_m: None,
        original_descent_m: None,
        junction: None,
        spliced_day: None,
    });
    let detoured = HashMap::from([(trip.stages[0].id, climb)]);
    let alerts = analyse_trip(&trip, &stored, &detoured);
    assert!(
        codes(&alerts).contains(&"steep_gradient".to_owned()),
        "{alerts:?}"
    );
}

#[test]
fn a_break_in_the_stored_track_is_a_critical_alert_on_its_day() {
    // Two 5 km pieces, the second 3 km east of the first's end.
    let mut points = line(5.0, 0.0, 6.0);
    let index = points.len();
    points.extend(line(5.0, 0.0, 6.04));
    let trip = one_day_trip(&points);
    let stored = stored::StoredTrack {
        gaps: vec![etappe_route::pieces::Gap {
            index,
            length_m: 4_000.0,
            bridged: false,
        }],
        points,
        waypoints: Vec::new(),
    };
    let alerts = analyse_trip(&trip, &stored, &HashMap::new());
    let gap = alerts[0]
        .alerts
        .iter()
        .find(|a| a.code == "continuity_gap_critical")
        .expect("the break is named");
    assert!(gap.message.contains("4.0 km"), "{}", gap.message);
    assert!(gap.message.contains("km 5.0"), "{}", gap.message);
    // Without the gap on record, the day has no such alert.
    let plain = stored::StoredTrack {
        gaps: Vec::new(),
        ..stored
    };
    assert!(
        !codes(&analyse_trip(&trip, &plain, &HashMap::new()))
            .contains(&"continuity_gap_critical".to_owned())
    );
}

#[test]
fn a_day_over_the_cap_is_warned() {
    let flat = line(10.0, 0.0, 6.0);
    let mut trip = one_day_trip(&flat);
    trip.settings.max_distance_per_day = 8.0;
    let stored = stored::StoredTrack {
        points: flat,
        ..Default::default()
    };
    let alerts = analyse_trip(&trip, &stored, &HashMap::new());
    assert!(
        codes(&alerts).contains(&"daily_distance_over_cap".to_owned()),
        "{alerts:?}"
    );
}

/// A feature source answering from memory, or failing, and counting its calls.
#[derive(Debug, Default)]
struct FakeSource {
    found: etappe_upstream::features::RouteFeatures,
    fail: bool,
}

#[async_trait::async_trait]
impl etappe_upstream::OsmFeatures for FakeSource {
    fn source(&self) -> &'static str {
        "fake index"
    }

    async fn along(
        &self,
        _plan: &etappe_upstream::features::SearchPlan,
    ) -> Result<etappe_upstream::features::RouteFeatures, etappe_upstream::UpstreamError> {
        if self.fail {
            return Err(etappe_upstream::UpstreamError::new(
                etappe_upstream::Upstream::Overpass,
                "HTTP 429 (rate limited)",
                true,
            ));
        }
        Ok(self.found.clone())
    }

    async fn accommodations_near(
        &self,
        _search: etappe_upstream::BedSearch<'_>,
    ) -> Result<Vec<etappe_upstream::Accommodation>, etappe_upstream::UpstreamError> {
        Ok(Vec::new())
    }
}

/// A 600 m primary road along km 2–2.6 and a water tap at km 1 of a 10 km day.
fn primary_and_water() -> etappe_upstream::features::RouteFeatures {
    use etappe_analysis::osm::{Feature, FeatureKind, RawWay, WaySection};
    let north = |km: f64| 45.0 + km / 111.195;
    etappe_upstream::features::RouteFeatures {
        points: vec![Feature::new(FeatureKind::DrinkingWater, north(1.0), 6.0001).named("Tap")],
        ways: vec![RawWay {
            tags: WaySection::from_tags(0.0, (0.0, 0.0), |k| (k == "highway").then_some("primary"))
                .expect("a highway"),
            points: vec![(north(2.0), 6.0), (north(2.6), 6.0)],
        }],
        ..Default::default()
    }
}

async fn osm_of(source: &FakeSource) -> (Vec<StageAlerts>, Option<String>) {
    let flat = line(10.0, 0.0, 6.0);
    let trip = one_day_trip(&flat);
    let stored = stored::StoredTrack {
        points: flat,
        ..Default::default()
    };
    let mut days = analyse_trip(&trip, &stored, &HashMap::new());
    let slices = analysis::stage_slices(&trip, &stored, &HashMap::new());
    let inputs = analysis::stage_inputs(&trip, &slices);
    let failure = osm::trip_osm(&trip, &inputs, &mut days, source).await;
    (days, failure)
}

#[tokio::test]
async fn what_a_source_finds_becomes_the_days_alerts_and_found_list() {
    let source = FakeSource {
        found: primary_and_water(),
        ..Default::default()
    };
    let (days, failure) = osm_of(&source).await;
    assert_eq!(failure, None);
    let codes = codes(&days);
    assert!(codes.contains(&"traffic_main_road".to_owned()), "{codes:?}");
    let found = days[0].found.as_ref().expect("read");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].category.as_str(), found[0].kind.as_str()),
        ("water", "drinking_water")
    );
    assert!((found[0].km - 1.0).abs() < 0.11, "{found:?}");
    assert_eq!(found[0].name.as_deref(), Some("Tap"));
}

#[tokio::test]
async fn a_day_outside_the_index_is_named_and_left_unread() {
    let source = FakeSource {
        found: etappe_upstream::features::RouteFeatures {
            uncovered_days: vec![0],
            ..primary_and_water()
        },
        ..Default::default()
    };
    let (days, failure) = osm_of(&source).await;
    let reason = failure.expect("a reason");
    assert!(reason.contains("outside the fake index"), "{reason}");
    assert_eq!(days[0].found, None, "not read is not 'nothing found'");
    assert!(!codes(&days).contains(&"traffic_main_road".to_owned()));
}

#[tokio::test]
async fn a_failing_source_fails_the_category_by_name_and_keeps_the_rest() {
    let source = FakeSource {
        fail: true,
        ..Default::default()
    };
    let (days, failure) = osm_of(&source).await;
    let reason = failure.expect("a reason");
    assert!(
        reason.contains("fake index failed")
            && reason.contains("overpass")
            && reason.contains("429"),
        "{reason}"
    );
    assert_eq!(days[0].found, None);
    assert_eq!(days.len(), 1, "the geometry rules' results stay");
}

#[test]
fn each_day_reads_its_distances_off_the_routes_measure_as_its_own_would_read() {
    // Two pieces with a break between them and a bridged gap in the second: days that end
    // on the break, start on it and hold the bridged gap read the same distances from the
    // route's one measure as from a measure of their own points.
    let first = line(5.0, 0.02, 6.0);
    let second = line(5.0, -0.01, 6.5);
    let gap_at = first.len();
    let mut points = first;
    points.extend(second);
    let mut trip = one_day_trip(&points);
    let last = points.len() - 1;
    let template = trip.stages[0].clone();
    trip.stages = [(0, 20), (20, gap_at), (gap_at, last)]
        .into_iter()
        .enumerate()
        .map(|(i, (first_point, last_point))| Stage {
            id: Uuid::from_u128(10 + i as u128),
            day_number: i as u32 + 1,
            first_point,
            last_point,
            ..template.clone()
        })
        .collect();
    let stored = stored::StoredTrack {
        gaps: vec![
            etappe_route::pieces::Gap {
                index: gap_at,
                length_m: 39_000.0,
                bridged: false,
            },
            etappe_route::pieces::Gap {
                index: gap_at + 10,
                length_m: 150.0,
                bridged: true,
            },
        ],
        points,
        ..Default::default()
    };
    let slices = analysis::stage_slices(&trip, &stored, &HashMap::new());
    for (stage, slice) in trip.stages.iter().zip(&slices) {
        let own = &stored.points[stage.first_point..=stage.last_point];
        let fresh = etappe_route::geometry::cumulative_distances_with_breaks(
            own,
            &stored.breaks_within(stage.first_point, stage.last_point),
        );
        assert_eq!(slice.len(), fresh.len(), "day {}", stage.day_number);
        for (point, d) in slice.iter().zip(&fresh) {
            assert!(
                (point.distance_m - d).abs() < 1e-6,
                "day {}: {} from the route, {d} its own",
                stage.day_number,
                point.distance_m
            );
        }
    }
    assert!(slices[2].last().is_some_and(|p| p.distance_m > 4_900.0));
}
