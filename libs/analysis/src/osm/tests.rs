//! Every OpenStreetMap rule at and around its threshold, on a straight synthetic route
//! running north from (45° N, 5° E) with a point every 100 m, and synthetic features placed
//! a known number of metres east of it.

use chrono::NaiveDate;
use serde_json::Value;

use super::rules::*;
use super::*;
use crate::catalogue::*;
use crate::model::{Alert, StagePoint};

const M: f64 = etappe_geo::EARTH_RADIUS_M * std::f64::consts::PI / 180.0;

fn line(km: f64) -> Vec<StagePoint> {
    let n = (km * 10.0).round() as usize;
    (0..=n)
        .map(|i| {
            let d = i as f64 * 100.0;
            StagePoint {
                lat: 45.0 + d / M,
                lon: 5.0,
                ele: None,
                distance_m: d,
            }
        })
        .collect()
}

/// The point `east_m` metres east of the route at `km` (negative: west).
fn at(km: f64, east_m: f64) -> (f64, f64) {
    let lat = 45.0 + km * 1000.0 / M;
    (lat, 5.0 + east_m / (M * lat.to_radians().cos()))
}

fn july() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 7, 15).expect("present") // a Wednesday
}

fn stage(points: &[StagePoint]) -> OsmStage<'_> {
    let first = points.first().map_or((45.0, 5.0), |p| (p.lat, p.lon));
    let last = points.last().map_or(first, |p| (p.lat, p.lon));
    OsmStage {
        day_number: 1,
        is_rest_day: false,
        points,
        start: first,
        end: last,
        distance_km: points.last().map_or(0.0, |p| p.distance_m / 1000.0),
        ascent_m: Some(0.0),
        date: Some(july()),
        country: None,
    }
}

fn feature(kind: FeatureKind, km: f64, east_m: f64) -> Feature {
    let (lat, lon) = at(km, east_m);
    Feature::new(kind, lat, lon)
}

fn points(features: Vec<Feature>) -> Corridor {
    Corridor {
        points: features,
        ..Corridor::default()
    }
}

fn way(highway: &str, length_m: f64, tags: &[(&str, &str)]) -> WaySection {
    let all: Vec<(&str, &str)> = [("highway", highway)]
        .into_iter()
        .chain(tags.iter().copied())
        .collect();
    WaySection::from_tags(length_m, at(1.0, 0.0), |k| {
        all.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    })
    .expect("present")
}

/// The day riding `list` one after the other from its start.
fn ways(mut list: Vec<WaySection>) -> Corridor {
    let mut from = 0.0;
    for way in &mut list {
        way.from_m = from;
        from += way.length_m;
    }
    Corridor {
        ways: list,
        ..Corridor::default()
    }
}

const BAKERY: FeatureKind = FeatureKind::Food(FoodKind::Bakery);
const WATER: FeatureKind = FeatureKind::DrinkingWater;
const MUSEUM: FeatureKind = FeatureKind::Cultural(CulturalKind::Museum);
const HOTEL: FeatureKind = FeatureKind::Accommodation(AccommodationKind::Hotel);

#[test]
fn surface_rough_sums_sections_from_500_m() {
    let l = line(10.0);
    let s = stage(&l);
    let gravel = |m| way("track", m, &[("surface", "gravel")]);
    assert!(surface_rough(&s, &ways(vec![gravel(250.0), gravel(249.0)])).is_none());
    let a = surface_rough(&s, &ways(vec![gravel(250.0), gravel(251.0)])).expect("present");
    assert_eq!(a.parameters["lengthM"], 501.0);
    assert_eq!(a.parameters["unpavedM"], 501.0);
    // Two gravel ways one after the other are one rough stretch, at km 0.
    let sections = a.parameters["sections"].as_array().expect("present");
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0]["km"], 0.0);
    assert_eq!(sections[0]["surface"], "unpaved");
    assert_eq!((a.lat, a.lon), (Some(s.start.0), Some(s.start.1)));
    // A `;` list is rough if any part is; a paved surface hides a bad smoothness; without a
    // surface, smoothness and tracktype decide (grade2 is compacted: unpaved), then the
    // highway's usual surface.
    assert!(
        surface_rough(
            &s,
            &ways(vec![way("path", 501.0, &[("surface", "asphalt;sett")])])
        )
        .is_some()
    );
    assert!(
        surface_rough(
            &s,
            &ways(vec![way(
                "path",
                501.0,
                &[("surface", "asphalt"), ("smoothness", "bad")]
            )])
        )
        .is_none()
    );
    assert!(
        surface_rough(
            &s,
            &ways(vec![way("path", 501.0, &[("smoothness", "bad")])])
        )
        .is_some()
    );
    assert!(
        surface_rough(
            &s,
            &ways(vec![way("track", 501.0, &[("tracktype", "grade1")])])
        )
        .is_none()
    );
    assert!(
        surface_rough(
            &s,
            &ways(vec![way("track", 501.0, &[("tracktype", "grade2")])])
        )
        .is_some()
    );
    assert!(surface_rough(&s, &ways(vec![way("track", 501.0, &[])])).is_some());
    assert!(surface_rough(&s, &ways(vec![way("residential", 501.0, &[])])).is_none());
    assert!(surface_rough(&s, &ways(vec![way("cycleway", 501.0, &[])])).is_none());
    // Paving stones are paved; setts are cobbles; an unknown value is neither.
    assert!(
        surface_rough(
            &s,
            &ways(vec![way(
                "residential",
                501.0,
                &[("surface", "paving_stones")]
            )])
        )
        .is_none()
    );
    let cobbles = surface_rough(
        &s,
        &ways(vec![way("residential", 501.0, &[("surface", "sett")])]),
    )
    .expect("present");
    assert_eq!(cobbles.parameters["cobbledM"], 501.0);
    assert!(
        surface_rough(
            &s,
            &ways(vec![way(
                "residential",
                501.0,
                &[("surface", "something_new")]
            )])
        )
        .is_none()
    );
    assert!(
        surface_rough(
            &s,
            &ways(vec![way("track", 501.0, &[("tracktype", "grade3")])])
        )
        .is_some()
    );
}

#[test]
fn main_road_from_500_m_without_cycle_infrastructure() {
    let l = line(10.0);
    let s = stage(&l);
    assert!(traffic_main_road(&s, &ways(vec![way("primary", 499.0, &[])])).is_none());
    let a = traffic_main_road(
        &s,
        &ways(vec![way("primary", 501.0, &[]), way("trunk", 600.0, &[])]),
    )
    .expect("present");
    assert_eq!(a.severity.as_str(), "critical");
    // One stretch: a main road is many ways one after the other.
    assert_eq!(a.parameters["count"], 1);
    assert_eq!(a.parameters["lengthM"], 1101.0);
    assert!(
        traffic_main_road(
            &s,
            &ways(vec![way("primary", 300.0, &[]), way("primary", 300.0, &[])])
        )
        .is_some()
    );
    // Two short stretches apart do not add up: the threshold is per stretch.
    assert!(
        traffic_main_road(
            &s,
            &ways(vec![
                way("primary", 300.0, &[]),
                way("residential", 1_000.0, &[]),
                way("primary", 300.0, &[])
            ])
        )
        .is_none()
    );
    // `cycleway=no` is no infrastructure (upstream counted it); a lane or a designation is.
    assert!(
        traffic_main_road(
            &s,
            &ways(vec![way("primary", 501.0, &[("cycleway", "no")])])
        )
        .is_some()
    );
    assert!(
        traffic_main_road(
            &s,
            &ways(vec![way("primary", 501.0, &[("cycleway:right", "lane")])])
        )
        .is_none()
    );
    assert!(
        traffic_main_road(
            &s,
            &ways(vec![way("trunk", 501.0, &[("bicycle", "designated")])])
        )
        .is_none()
    );
    assert!(traffic_main_road(&s, &ways(vec![way("secondary", 501.0, &[])])).is_none());
}

#[test]
fn secondary_roads_split_at_50_kmh() {
    let l = line(10.0);
    let s = stage(&l);
    let sec = |speed: Option<&str>| match speed {
        Some(v) => ways(vec![way("secondary", 501.0, &[("maxspeed", v)])]),
        None => ways(vec![way("secondary", 501.0, &[])]),
    };
    let fast = traffic_secondary_road_fast(&s, &sec(Some("80"))).expect("present");
    assert_eq!(fast.parameters["maxspeedKmh"], 80.0);
    assert!(traffic_secondary_road_slow(&s, &sec(Some("80"))).is_none());
    for slow in [
        Some("50"),
        None,
        Some("30 mph"),
        Some("signals"),
        Some("FR:urban"),
    ] {
        assert!(
            traffic_secondary_road_fast(&s, &sec(slow)).is_none(),
            "{slow:?}"
        );
        let a = traffic_secondary_road_slow(&s, &sec(slow)).expect("present");
        assert!(
            a.parameters["maxspeedKmh"].as_f64().expect("present") <= 50.0,
            "{slow:?}"
        );
    }
    assert!(traffic_secondary_road_fast(&s, &sec(Some("DE:rural"))).is_some());
    assert!(traffic_secondary_road_slow(&s, &ways(vec![way("secondary", 499.0, &[])])).is_none());
    assert_eq!(maxspeed_kmh("50 mph").map(f64::round), Some(80.0));
    assert_eq!(maxspeed_kmh("none"), None);
}

#[test]
fn bike_shop_only_on_trips_over_5_stages_and_2_km_from_the_middle() {
    let l = line(20.0); // midpoint = vertex 100 = km 10
    let s = stage(&l);
    let none = Corridor::default();
    assert!(bike_shop_none_nearby(&s, &none, 5).is_none());
    assert!(bike_shop_none_nearby(&s, &none, 6).is_some());
    let station = |east| points(vec![feature(FeatureKind::RepairStation, 10.0, east)]);
    assert!(bike_shop_none_nearby(&s, &station(1_999.0), 6).is_none());
    assert!(bike_shop_none_nearby(&s, &station(2_001.0), 6).is_some());
    // A sale-only shop is no repair resource, but it is the nearest shop to send the rider to.
    let c = points(vec![
        feature(FeatureKind::BikeShop { repair: false }, 10.0, 300.0).named("Velo"),
        feature(FeatureKind::BikeShop { repair: true }, 10.0, 5_000.0),
    ]);
    let a = bike_shop_none_nearby(&s, &c, 6).expect("present");
    assert_eq!(a.parameters["actionPoint"]["name"], "Velo");
    let c = points(vec![feature(
        FeatureKind::BikeShop { repair: true },
        10.0,
        1_999.0,
    )]);
    assert!(bike_shop_none_nearby(&s, &c, 6).is_none());
}

#[test]
fn resupply_none_from_40_km() {
    let short = line(39.9);
    let long = line(40.0);
    let none = Corridor::default();
    let reach = Reach::default();
    let run = |l: &[StagePoint], c: &Corridor| resupply_none_on_stage(&stage(l), c, &reach);
    assert!(run(&short, &none).is_none());
    assert!(run(&long, &none).is_some());
    // A pub is not resupply; a bakery 490 m off the route is; 510 m off is not (the food
    // reach), unless the rider's reach is wider.
    let pubs = points(vec![feature(FeatureKind::Food(FoodKind::Pub), 20.0, 0.0)]);
    assert!(run(&long, &pubs).is_some());
    assert!(run(&long, &points(vec![feature(BAKERY, 20.0, 490.0)])).is_none());
    let far = points(vec![feature(BAKERY, 20.0, 510.0)]);
    let a = run(&long, &far).expect("present");
    assert_eq!(a.parameters["reachM"], 500.0);
    assert!(resupply_none_on_stage(&stage(&long), &far, &Reach::scaled(2.0)).is_none());
}

fn bakery_with(hours: Option<&str>, km: f64) -> Feature {
    let mut f = feature(BAKERY, km, 100.0);
    f.opening_hours = hours.map(str::to_owned);
    f
}

#[test]
fn resupply_closed_only_when_every_point_is_known_closed() {
    let l = line(60.0);
    let s = stage(&l);
    // 60 km at 15 km/h = 4 h + 20 min of breaks + 1 h lunch (noon is inside the ride):
    // km 30 is passed at 08:00 + 2 h 40 = 10:40.
    assert_eq!(
        passage_time(&s, 30.0, 8, 15.0)
            .expect("present")
            .format("%H:%M")
            .to_string(),
        "10:40"
    );
    let run = |c: &Corridor| resupply_closed_at_passage(&s, c, 8, 15.0, &Reach::default());
    let closed = points(vec![bakery_with(Some("Mo-Fr 14:00-18:00"), 30.0)]);
    let a = run(&closed).expect("present");
    assert_eq!(a.parameters["points"][0]["passage"], "10:40");
    assert!(run(&points(vec![bakery_with(Some("Mo-Fr 08:00-18:00"), 30.0)])).is_none());
    // Unknown or unparsable hours never raise it, even next to a closed one.
    assert!(run(&points(vec![bakery_with(None, 30.0)])).is_none());
    assert!(
        run(&points(vec![bakery_with(
            Some("when the baker is in"),
            30.0
        )]))
        .is_none()
    );
    assert!(
        run(&points(vec![
            bakery_with(Some("Mo-Fr 14:00-18:00"), 30.0),
            bakery_with(None, 50.0)
        ]))
        .is_none()
    );
    assert!(run(&Corridor::default()).is_none());
    // Without a date nothing is judged.
    let undated = OsmStage {
        date: None,
        ..s.clone()
    };
    assert!(resupply_closed_at_passage(&undated, &closed, 8, 15.0, &Reach::default()).is_none());
    // Public holidays apply with the country: 14 July in France.
    let bastille = NaiveDate::from_ymd_opt(2026, 7, 14)
        .expect("present")
        .and_hms_opt(10, 0, 0)
        .expect("present");
    let hours = "Mo-Sa 08:00-19:00; PH off";
    assert_eq!(
        opening_state(hours, bastille, None),
        opening_hours::RuleKind::Open
    );
    assert_eq!(
        opening_state(hours, bastille, Some("fr")),
        opening_hours::RuleKind::Closed
    );
    let french = OsmStage {
        date: Some(bastille.date()),
        country: Some("FR".to_owned()),
        ..s.clone()
    };
    assert!(
        resupply_closed_at_passage(
            &french,
            &points(vec![bakery_with(Some(hours), 30.0)]),
            8,
            15.0,
            &Reach::default()
        )
        .is_some()
    );
}

fn hotel(hours: Option<&str>, seasonal: Option<&str>) -> Feature {
    let mut f = feature(HOTEL, 20.0, 500.0);
    f.opening_hours = hours.map(str::to_owned);
    f.seasonal = seasonal.map(str::to_owned);
    f
}

#[test]
fn accommodation_seasonal_closure_by_month() {
    let l = line(20.0);
    let summer = stage(&l);
    let winter = OsmStage {
        date: NaiveDate::from_ymd_opt(2026, 1, 15),
        ..summer.clone()
    };
    let run = |s: &OsmStage<'_>, f: Feature| accommodation_seasonal_closure(s, &points(vec![f]));
    assert!(run(&summer, hotel(Some("May-Sep"), None)).is_none());
    assert!(run(&summer, hotel(Some("Oct-Apr 08:00-20:00"), None)).is_some());
    assert!(run(&winter, hotel(Some("Nov-Mar"), None)).is_none());
    assert!(run(&summer, hotel(Some("Nov-Mar"), None)).is_some());
    assert!(run(&winter, hotel(None, Some("yes"))).is_some());
    assert!(run(&summer, hotel(None, Some("yes"))).is_none());
    assert!(run(&winter, hotel(None, None)).is_none());
    // One candidate of unknown season is enough to stay silent; a rest day is judged too.
    let c = points(vec![hotel(None, Some("yes")), hotel(None, None)]);
    assert!(accommodation_seasonal_closure(&winter, &c).is_none());
    let rest = OsmStage {
        is_rest_day: true,
        points: &[],
        ..winter.clone()
    };
    let out = analyse_osm(
        &[rest],
        &[points(vec![hotel(None, Some("yes"))])],
        &settings(),
    );
    assert!(
        out[0]
            .iter()
            .any(|a| a.code == ACCOMMODATION_SEASONAL_CLOSURE)
    );
}

fn water_at(kms: &[f64]) -> Corridor {
    points(kms.iter().map(|km| feature(WATER, *km, 50.0)).collect())
}

#[test]
fn water_gaps_over_30_km() {
    let l60 = line(60.0);
    let s = stage(&l60);
    assert!(water_point_gap(&s, &water_at(&[29.0, 58.0]), &Reach::default()).is_none());
    // Start → first.
    let a = water_point_gap(&s, &water_at(&[31.0, 58.0]), &Reach::default()).expect("present");
    assert_eq!(a.parameters["gaps"][0]["fromKm"], 0.0);
    assert_eq!(a.parameters["gaps"][0]["toKm"], 31.0);
    // Between two.
    assert!(water_point_gap(&s, &water_at(&[10.0, 39.0, 55.0]), &Reach::default()).is_none());
    let a =
        water_point_gap(&s, &water_at(&[10.0, 41.0, 55.0]), &Reach::default()).expect("present");
    assert_eq!(a.parameters["gaps"][0]["lengthKm"], 31.0);
    // Last → end.
    let l58 = line(58.0);
    assert!(water_point_gap(&stage(&l58), &water_at(&[29.0]), &Reach::default()).is_none());
    let a = water_point_gap(&s, &water_at(&[29.0]), &Reach::default()).expect("present");
    assert_eq!(a.parameters["gaps"][0]["toKm"], 60.0);
    // The action point is the water nearest the midpoint.
    let a = water_point_gap(&s, &water_at(&[5.0, 29.0]), &Reach::default()).expect("present");
    assert_eq!(a.parameters["actionPoint"]["lat"], at(29.0, 50.0).0);
    // None at all.
    let l31 = line(31.0);
    let l29 = line(29.0);
    assert!(water_point_gap(&stage(&l31), &Corridor::default(), &Reach::default()).is_some());
    assert!(water_point_gap(&stage(&l29), &Corridor::default(), &Reach::default()).is_none());
    assert!(
        water_point_gap(&stage(&l31), &Corridor::default(), &Reach::default())
            .expect("present")
            .parameters["actionPoint"]
            .is_null()
    );
    // Water 2.1 km off the route does not count.
    let far = points(vec![feature(WATER, 15.0, 2_100.0)]);
    assert!(water_point_gap(&stage(&l31), &far, &Reach::default()).is_some());
}

fn settings() -> OsmSettings {
    OsmSettings {
        departure_hour: 8,
        average_speed_kmh: 15.0,
        reach: Reach::default(),
    }
}

fn codes(alerts: &[Alert], code: &str) -> usize {
    alerts.iter().filter(|a| a.code == code).count()
}

#[test]
fn cultural_within_500_m_top_3_per_day() {
    let l = line(10.0);
    let s = stage(&l);
    let out = analyse_osm(
        std::slice::from_ref(&s),
        &[points(vec![feature(MUSEUM, 5.0, 499.0).named("Musée")])],
        &settings(),
    );
    let a = out[0]
        .iter()
        .find(|a| a.code == CULTURAL_POI_SUGGESTION)
        .expect("present");
    assert_eq!(a.parameters["name"], "Musée");
    assert_eq!(a.parameters["type"], "museum");
    assert_eq!(a.parameters["distanceM"], 499.0);
    assert_eq!(a.parameters["actionPoint"]["kind"], "cultural_poi");
    let out = analyse_osm(
        std::slice::from_ref(&s),
        &[points(vec![feature(MUSEUM, 5.0, 501.0)])],
        &settings(),
    );
    assert_eq!(codes(&out[0], CULTURAL_POI_SUGGESTION), 0);
    // Five candidates: the three nearest win.
    let five: Vec<Feature> = (1..=5)
        .map(|i| feature(MUSEUM, f64::from(i), f64::from(i) * 50.0))
        .collect();
    let out = analyse_osm(std::slice::from_ref(&s), &[points(five)], &settings());
    let kept: Vec<f64> = out[0]
        .iter()
        .filter(|a| a.code == CULTURAL_POI_SUGGESTION)
        .map(|a| a.parameters["distanceM"].as_f64().expect("present"))
        .collect();
    assert_eq!(kept, vec![50.0, 100.0, 150.0]);
    // A rest day gets none.
    let rest = OsmStage {
        is_rest_day: true,
        ..s
    };
    let out = analyse_osm(
        &[rest],
        &[points(vec![feature(MUSEUM, 5.0, 10.0)])],
        &settings(),
    );
    assert_eq!(codes(&out[0], CULTURAL_POI_SUGGESTION), 0);
}

#[test]
fn cultural_cap_is_trip_wide_and_keeps_the_nearest() {
    let l = line(5.0);
    let stages: Vec<OsmStage<'_>> = (0..40)
        .map(|i| OsmStage {
            day_number: i + 1,
            ..stage(&l)
        })
        .collect();
    // Day i has three museums at 10 i + 1..3 m: 120 candidates, the 100 nearest stay.
    let corridors: Vec<Corridor> = (0..40)
        .map(|i| {
            points(
                (1..=3)
                    .map(|k| feature(MUSEUM, f64::from(k), f64::from(i * 10 + k)))
                    .collect(),
            )
        })
        .collect();
    // Every day shares the same line here, so make each day's points its own: the cap is what
    // is under test, not the distribution between days.
    let out = analyse_osm(&stages, &corridors, &settings());
    let total: usize = out.iter().map(|d| codes(d, CULTURAL_POI_SUGGESTION)).sum();
    assert_eq!(total, 100);
    assert!(out.iter().all(|d| codes(d, CULTURAL_POI_SUGGESTION) <= 3));
    assert_eq!(codes(&out[0], CULTURAL_POI_SUGGESTION), 3);
    assert!(codes(&out[39], CULTURAL_POI_SUGGESTION) < 3);
}

#[test]
fn railway_station_within_10_km_of_start_or_end() {
    let l = line(60.0);
    let s = stage(&l);
    let station = |km, east| points(vec![feature(FeatureKind::RailwayStation, km, east)]);
    assert!(railway_station_none_nearby(&s, &station(0.0, 9_990.0)).is_none());
    assert!(railway_station_none_nearby(&s, &station(60.0, 9_990.0)).is_none());
    let a = railway_station_none_nearby(&s, &station(0.0, 10_010.0)).expect("present");
    assert_eq!(a.parameters["actionPoint"]["kind"], "railway_station");
    assert!(railway_station_none_nearby(&s, &station(60.0, -10_010.0)).is_some());
    // A station in the middle of the day is no way home from either end.
    assert!(railway_station_none_nearby(&s, &station(30.0, 0.0)).is_some());
    let mut heritage = feature(FeatureKind::RailwayStation, 0.0, 100.0);
    heritage.usage = Some("tourism".to_owned());
    assert!(railway_station_none_nearby(&s, &points(vec![heritage])).is_some());
}

#[test]
fn health_within_15_km_of_the_middle_also_on_rest_days() {
    let l = line(40.0); // midpoint km 20
    let s = stage(&l);
    let pharmacy = |east| {
        points(vec![feature(
            FeatureKind::Health(HealthKind::Pharmacy),
            20.0,
            east,
        )])
    };
    assert!(health_service_none_nearby(&s, &pharmacy(14_900.0)).is_none());
    assert!(health_service_none_nearby(&s, &pharmacy(15_100.0)).is_some());
    let here = at(20.0, 0.0);
    let rest = OsmStage {
        is_rest_day: true,
        points: &[],
        start: here,
        end: here,
        ..s.clone()
    };
    let out = analyse_osm(
        std::slice::from_ref(&rest),
        &[pharmacy(15_100.0)],
        &settings(),
    );
    assert_eq!(codes(&out[0], HEALTH_SERVICE_NONE_NEARBY), 1);
    let out = analyse_osm(&[rest], &[pharmacy(14_900.0)], &settings());
    assert_eq!(codes(&out[0], HEALTH_SERVICE_NONE_NEARBY), 0);
}

fn ferry(name: Option<&str>, from: (f64, f64), to: (f64, f64)) -> FerryLine {
    FerryLine {
        name: name.map(str::to_owned),
        points: vec![from, to],
    }
}

fn ride(name: Option<&str>, km: f64, length_m: f64) -> FerryRide {
    FerryRide {
        name: name.map(str::to_owned),
        length_m,
        from_m: km * 1000.0,
        at: at(km, 0.0),
    }
}

#[test]
fn a_ferry_alert_only_for_a_ferry_ridden() {
    let l = line(20.0);
    let s = stage(&l);
    let rides = |list| Corridor {
        ferries: list,
        ..Corridor::default()
    };
    let out = ferry_crossing(&s, &rides(vec![ride(None, 10.0, 800.0)]));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].parameters["km"], 10.0);
    assert_eq!(out[0].parameters["lengthM"], 800.0);
    assert!(ferry_crossing(&s, &rides(vec![ride(None, 10.0, 20.0)])).is_empty());
    // Two crossings of one named line give one alert.
    let out = ferry_crossing(
        &s,
        &rides(vec![
            ride(Some("Bac"), 5.0, 300.0),
            ride(Some("Bac"), 12.0, 300.0),
        ]),
    );
    assert_eq!(out.len(), 1);
}

#[test]
fn ford_within_25_m_of_the_line() {
    let l = line(20.0);
    let s = stage(&l);
    // Between two vertices: the distance is to the segment, not to the nearest vertex.
    let ford = |east| points(vec![feature(FeatureKind::Ford, 10.05, east)]);
    assert_eq!(ford_crossing_dry(&s, &ford(24.0)).len(), 1);
    assert!(ford_crossing_dry(&s, &ford(26.0)).is_empty());
    let named = points(vec![
        feature(FeatureKind::Ford, 5.0, 5.0).named("Gué"),
        feature(FeatureKind::Ford, 5.1, 5.0).named("Gué"),
        feature(FeatureKind::Ford, 6.0, 5.0),
        feature(FeatureKind::Ford, 7.0, 5.0),
    ]);
    assert_eq!(ford_crossing_dry(&s, &named).len(), 3);
}

#[test]
fn ebike_alert_gets_the_charger_nearest_to_the_empty_battery() {
    let l = line(100.0);
    let s = stage(&l);
    let input = crate::StageInput {
        day_number: 1,
        is_rest_day: false,
        distance_km: 100.0,
        ascent_m: Some(0.0),
        points: &l,
        start: s.start,
        end: s.end,
        date: None,
        start_country: None,
        end_country: None,
        utc_offset_minutes: None,
    };
    let settings = crate::AnalysisSettings {
        ebike_mode: true,
        ..crate::AnalysisSettings::default()
    };
    let mut alerts = crate::analyse(&[input], &settings).remove(0);
    let ebike = alerts
        .iter_mut()
        .find(|a| a.code == EBIKE_RANGE_EXCEEDED)
        .expect("present");
    let range = ebike.parameters["rangeKm"].as_f64().expect("present");
    let c = points(vec![
        feature(FeatureKind::Charger, 1.0, 0.0).named("Start"),
        feature(FeatureKind::Charger, range - 2.0, 300.0).named("Near"),
    ]);
    attach_nearest_charger(ebike, &s, &c);
    assert_eq!(ebike.parameters["actionPoint"]["name"], "Near");
    assert_eq!(ebike.parameters["actionPoint"]["kind"], "charger");
    // Another code is left alone.
    let mut other = ebike.clone();
    other.code = ELEVATION_GAIN;
    other.parameters = serde_json::json!({});
    attach_nearest_charger(&mut other, &s, &c);
    assert_eq!(other.parameters, serde_json::json!({}));
}

#[test]
fn found_along_the_day_in_km_order() {
    let l = line(80.0);
    let s = stage(&l);
    let c = points(vec![
        feature(WATER, 61.0, 30.0),
        feature(WATER, 34.0, -30.0),
        feature(BAKERY, 12.0, 200.0).named("Boulangerie"),
        feature(FeatureKind::Food(FoodKind::Pub), 13.0, 0.0),
        feature(FeatureKind::BikeShop { repair: false }, 40.0, 3_000.0),
        feature(FeatureKind::RepairStation, 45.0, 10.0),
        feature(FeatureKind::RailwayStation, 70.0, 1_500.0),
        feature(MUSEUM, 20.0, 0.0),
        // Beyond their kind's reach: water 310 m off, a bakery 600 m, a station 7.6 km.
        feature(WATER, 50.0, 310.0),
        feature(BAKERY, 55.0, 600.0),
        feature(FeatureKind::RailwayStation, 30.0, 7_600.0),
    ]);
    let found = found_along(&s, &c, &Reach::default());
    let summary: Vec<(FoundCategory, f64)> = found.iter().map(|f| (f.category, f.km)).collect();
    assert_eq!(
        summary,
        vec![
            (FoundCategory::Resupply, 12.0),
            (FoundCategory::Water, 34.0),
            (FoundCategory::BikeShop, 45.0),
            (FoundCategory::Water, 61.0),
            (FoundCategory::RailwayStation, 70.0),
        ]
    );
    assert_eq!(found[0].name.as_deref(), Some("Boulangerie"));
    assert_eq!(found[0].off_route_m, 200.0);
    let json = serde_json::to_value(&found[1]).expect("present");
    assert_eq!(json["category"], "water");
    assert_eq!(json["offRouteM"], 30.0);
    let rest = OsmStage {
        is_rest_day: true,
        points: &[],
        ..s.clone()
    };
    assert!(found_along(&rest, &c, &Reach::default()).is_empty());
    // A wider reach lists the bakery 600 m off, at the km where the rider leaves the route.
    let wide = found_along(&s, &c, &Reach::scaled(2.0));
    let bakery = wide.iter().find(|f| f.km == 55.0).expect("listed");
    assert_eq!(bakery.off_route_m, 600.0);
}

#[test]
fn an_out_and_back_lists_a_place_at_each_pass() {
    // 10 km north and back on the same line: the tap beside km 3 is at km 3 and km 17.
    let out = line(10.0);
    let mut l = out.clone();
    l.extend(out.iter().rev().skip(1).map(|p| StagePoint {
        distance_m: 20_000.0 - p.distance_m,
        ..*p
    }));
    let s = stage(&l);
    let c = points(vec![feature(WATER, 3.0, 40.0)]);
    let found = found_along(&s, &c, &Reach::default());
    let kms: Vec<f64> = found.iter().map(|f| f.km).collect();
    assert_eq!(kms, vec![3.0, 17.0]);
    assert!(found.iter().all(|f| f.off_route_m == 40.0));
    // And the water rule sees both: no 30 km gap on a 20 km day anyway, but 14 km apart.
    assert!(water_point_gap(&s, &c, &Reach::default()).is_none());
}

#[test]
fn classify_reads_the_upstream_tags() {
    let kind = |tags: &[(&str, &str)]| {
        FeatureKind::classify(|k| tags.iter().find(|(key, _)| *key == k).map(|(_, v)| *v))
    };
    assert_eq!(kind(&[("amenity", "drinking_water")]), Some(WATER));
    assert_eq!(kind(&[("amenity", "fountain")]), None);
    assert_eq!(
        kind(&[("amenity", "fountain"), ("drinking_water", "yes")]),
        Some(WATER)
    );
    assert_eq!(
        kind(&[("natural", "spring"), ("drinking_water", "yes")]),
        Some(WATER)
    );
    assert_eq!(
        kind(&[("shop", "bicycle")]),
        Some(FeatureKind::BikeShop { repair: false })
    );
    assert_eq!(
        kind(&[("shop", "bicycle"), ("service:bicycle:repair", "yes")]),
        Some(FeatureKind::BikeShop { repair: true })
    );
    assert_eq!(
        kind(&[("historic", "castle")]),
        Some(FeatureKind::Cultural(CulturalKind::Castle))
    );
    assert_eq!(
        kind(&[("tourism", "alpine_hut")]),
        Some(FeatureKind::Accommodation(AccommodationKind::AlpineHut))
    );
    assert_eq!(kind(&[("ford", "yes")]), Some(FeatureKind::Ford));
    assert_eq!(kind(&[("ford", "no")]), None);
    assert_eq!(kind(&[("amenity", "charging_station")]), None);
    assert_eq!(
        kind(&[("amenity", "charging_station"), ("bicycle", "yes")]),
        Some(FeatureKind::Charger)
    );
    assert_eq!(
        kind(&[("amenity", "pharmacy")]),
        Some(FeatureKind::Health(HealthKind::Pharmacy))
    );
    let w = way(
        "primary",
        10.0,
        &[("cycleway:left", "track"), ("cycleway", "no")],
    );
    assert_eq!(w.cycleway, vec!["no".to_owned(), "track".to_owned()]);
    assert!(has_cycle_infrastructure(&w));
}

#[test]
fn a_whole_trip_emits_only_catalogued_codes_in_order_and_rest_days_skip_features() {
    let l = line(60.0);
    let riding = stage(&l);
    let rest = OsmStage {
        day_number: 2,
        is_rest_day: true,
        ..riding.clone()
    };
    let mut stages = vec![riding.clone(), rest];
    stages.extend((3..=6).map(|d| OsmStage {
        day_number: d,
        ..riding.clone()
    }));
    let mut ford = feature(FeatureKind::Ford, 10.0, 0.0);
    ford.name = Some("Gué".to_owned());
    let mut inn = feature(HOTEL, 59.0, 100.0);
    inn.opening_hours = Some("Nov-Mar".to_owned());
    let busy = Corridor {
        points: vec![
            feature(MUSEUM, 3.0, 10.0),
            ford,
            bakery_with(Some("Mo-Fr 14:00-18:00"), 30.0),
            inn,
        ],
        ways: vec![
            way("primary", 800.0, &[]),
            way("secondary", 700.0, &[("maxspeed", "70")]),
            way("secondary", 700.0, &[]),
            way("track", 900.0, &[("surface", "dirt")]),
        ],
        ferries: vec![ride(None, 20.0, 100.0)],
    };
    let corridors = vec![busy; stages.len()];
    let out = analyse_osm(&stages, &corridors, &settings());
    assert_eq!(out.len(), 6);
    for alert in out.iter().flatten() {
        assert!(
            CODES.contains(&(alert.code, alert.group, alert.severity.as_str())),
            "{}",
            alert.code
        );
        assert!(OSM_GROUPS.contains(&alert.group), "{}", alert.group);
        assert!(!alert.message.is_empty());
        assert!(alert.lat.is_some() && alert.lon.is_some(), "{}", alert.code);
        assert!(!alert.message.contains("Gué"), "names stay out of messages");
    }
    let day1: Vec<&str> = out[0].iter().map(|a| a.code).collect();
    for code in [
        SURFACE_ROUGH,
        TRAFFIC_MAIN_ROAD,
        TRAFFIC_SECONDARY_ROAD_FAST,
        TRAFFIC_SECONDARY_ROAD_SLOW,
        RESUPPLY_CLOSED_AT_PASSAGE,
        ACCOMMODATION_SEASONAL_CLOSURE,
        BIKE_SHOP_NONE_NEARBY,
        WATER_POINT_GAP,
        HEALTH_SERVICE_NONE_NEARBY,
        CULTURAL_POI_SUGGESTION,
        RAILWAY_STATION_NONE_NEARBY,
        FERRY_CROSSING,
        FORD_CROSSING_DRY,
    ] {
        assert!(day1.contains(&code), "{code} missing from {day1:?}");
    }
    let positions: Vec<usize> = day1
        .iter()
        .map(|c| CODES.iter().position(|(k, _, _)| k == c).expect("present"))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] <= w[1]), "{day1:?}");
    // The rest day keeps only health and accommodation.
    let rest: Vec<&str> = out[1].iter().map(|a| a.code).collect();
    assert_eq!(
        rest,
        vec![ACCOMMODATION_SEASONAL_CLOSURE, HEALTH_SERVICE_NONE_NEARBY]
    );
    // An empty corridor everywhere: nothing found means gaps, not a crash.
    let out = analyse_osm(&stages, &[], &settings());
    assert!(out[0].iter().any(|a| a.code == WATER_POINT_GAP));
    let _: Value = serde_json::to_value(&out).expect("present");
}

#[test]
fn non_finite_inputs_stay_silent() {
    let bad = [StagePoint {
        lat: f64::NAN,
        lon: f64::INFINITY,
        ele: None,
        distance_m: f64::NAN,
    }];
    let s = OsmStage {
        distance_km: f64::NAN,
        ascent_m: Some(f64::NAN),
        ..stage(&bad)
    };
    let c = Corridor {
        points: vec![
            Feature::new(WATER, f64::NAN, 0.0),
            Feature::new(MUSEUM, 0.0, f64::NAN),
        ],
        ways: vec![
            way("primary", f64::NAN, &[]),
            way("track", f64::INFINITY, &[("surface", "dirt")]),
        ],
        ferries: vec![FerryRide {
            name: None,
            length_m: f64::NAN,
            from_m: f64::NAN,
            at: (f64::NAN, 0.0),
        }],
    };
    let out = analyse_osm(
        std::slice::from_ref(&s),
        std::slice::from_ref(&c),
        &settings(),
    );
    for alert in out.iter().flatten() {
        assert!(serde_json::to_string(alert).is_ok());
    }
    assert!(found_along(&s, &c, &Reach::default()).is_empty());
    assert!(passage_time(&s, 1.0, 8, 15.0).is_none());
}

#[test]
fn a_long_day_with_a_dense_corridor_is_fast_enough() {
    // 150 km at 10 m spacing (15,001 points) with 3,000 points and 1,000 ways around it.
    let n = 15_000;
    let l: Vec<StagePoint> = (0..=n)
        .map(|i| {
            let d = f64::from(i) * 10.0;
            StagePoint {
                lat: 45.0 + d / M,
                lon: 5.0 + (d / 5_000.0).sin() * 0.01,
                ele: None,
                distance_m: d,
            }
        })
        .collect();
    let s = stage(&l);
    let kinds = [
        WATER,
        BAKERY,
        MUSEUM,
        FeatureKind::RailwayStation,
        FeatureKind::Ford,
        HOTEL,
    ];
    let c = Corridor {
        points: (0..3_000)
            .map(|i| {
                feature(
                    kinds[i % kinds.len()],
                    (i as f64) * 0.05,
                    ((i * 37) % 15_000) as f64 - 7_500.0,
                )
            })
            .collect(),
        ways: (0..1_000)
            .map(|i| {
                way(
                    ["primary", "track", "secondary"][i % 3],
                    120.0,
                    &[("surface", "gravel")],
                )
            })
            .collect(),
        ferries: vec![ride(None, 70.0, 300.0)],
    };
    let started = std::time::Instant::now();
    let out = analyse_osm(
        std::slice::from_ref(&s),
        std::slice::from_ref(&c),
        &settings(),
    );
    let found = found_along(&s, &c, &Reach::default());
    let elapsed = started.elapsed();
    eprintln!("150 km day, 3,000 points, 1,000 ways: {elapsed:?}");
    assert!(!out[0].is_empty() && !found.is_empty());
    // Generous for a debug build on a shared machine; the release figure is in the report.
    assert!(elapsed.as_secs() < 5, "{elapsed:?}");
}

#[test]
fn the_line_index_agrees_with_a_brute_force_scan() {
    use super::geom::{line_of, point_segment};
    // A wiggly 30 km line with uneven spacing, and points up to 20 km off it.
    let l: Vec<StagePoint> = (0..1_000)
        .map(|i| {
            let d = f64::from(i) * 30.0 + f64::from(i % 7) * 5.0;
            StagePoint {
                lat: 45.0 + d / M,
                lon: 5.0 + (d / 700.0).sin() * 0.02,
                ele: None,
                distance_m: d,
            }
        })
        .collect();
    let index = line_of(&l);
    for k in 0..300 {
        let p = at(
            f64::from(k) * 0.1 - 0.5,
            f64::from((k * 7919) % 40_000) - 20_000.0,
        );
        let brute = l
            .windows(2)
            .map(|w| point_segment(p, (w[0].lat, w[0].lon), (w[1].lat, w[1].lon)).0)
            .fold(f64::INFINITY, f64::min);
        // Segments are ranked on a flat projection, so at 15 km off the line a neighbouring
        // segment may win by millimetres: a centimetre is the promise.
        assert!(
            (index.distance_m(p) - brute).abs() < 0.01,
            "{k}: {} vs {brute}",
            index.distance_m(p)
        );
        // The foot is where the distance is measured: along the line, between its vertices.
        let pass = index.nearest(p).expect("a foot");
        assert!(pass.along_m >= 0.0 && pass.along_m <= l[l.len() - 1].distance_m);
    }
    assert!(line_of(&[]).distance_m((45.0, 5.0)).is_infinite());
    assert!(line_of(&[]).nearest((45.0, 5.0)).is_none());
}

#[test]
fn distribute_gives_each_day_what_is_within_reach() {
    let all = line(40.0);
    let (day1, day2) = (&all[..=200], &all[200..]); // km 0–20 and km 20–40
    let s1 = stage(day1);
    let s2 = OsmStage {
        day_number: 2,
        ..stage(day2)
    };
    let here = at(60.0, 0.0);
    let rest = OsmStage {
        day_number: 3,
        is_rest_day: true,
        points: &[],
        start: here,
        end: here,
        ..s1.clone()
    };
    let found = vec![
        feature(WATER, 5.0, 100.0),     // day 1 only
        feature(WATER, 35.0, 14_900.0), // day 2, near its line
        feature(WATER, 35.0, 15_100.0), // nobody's
        feature(BAKERY, 20.0, 0.0),     // where day 1 ends and day 2 starts
        feature(FeatureKind::Health(HealthKind::Pharmacy), 62.0, 0.0), // the rest day's town
    ];
    let out = distribute(&[s1.clone(), s2.clone(), rest.clone()], &found);
    let counts: Vec<usize> = out.iter().map(|c| c.points.len()).collect();
    assert_eq!(counts, vec![2, 2, 1]);
    assert_eq!(out[0].points[0], found[0]);
    assert_eq!(out[1].points[0], found[1]);
    assert!(
        out.iter()
            .all(|c| c.ways.is_empty() && c.ferries.is_empty())
    );
    // The From conversion keeps what the rules read.
    let input = crate::StageInput {
        day_number: 4,
        is_rest_day: false,
        distance_km: 20.0,
        ascent_m: Some(300.0),
        points: day1,
        start: s1.start,
        end: s1.end,
        date: Some(july()),
        start_country: Some("FR".to_owned()),
        end_country: Some("CH".to_owned()),
        utc_offset_minutes: None,
    };
    let converted = OsmStage::from(&input);
    assert_eq!(
        (
            converted.day_number,
            converted.country.as_deref(),
            converted.ascent_m
        ),
        (4, Some("FR"), Some(300.0))
    );
}

// --- The search plan and the clipping of ways (what both sources share) ---

#[test]
fn a_thinned_line_stays_within_its_tolerance() {
    // A zig-zag every 100 m, 30 m to either side: thinning at 25 m must keep the zigs.
    let zig: Vec<(f64, f64)> = (0..=100)
        .map(|i| at(i as f64 * 0.1, if i % 2 == 0 { 30.0 } else { -30.0 }))
        .collect();
    assert_eq!(thin(&zig, THINNING_TOLERANCE_M).len(), zig.len());
    // A straight line of 1,001 points thins to its two ends.
    let straight: Vec<(f64, f64)> = line(100.0).iter().map(|p| (p.lat, p.lon)).collect();
    assert_eq!(
        thin(&straight, THINNING_TOLERANCE_M),
        vec![straight[0], straight[1000]]
    );
}

#[test]
fn the_plan_grows_every_radius_by_the_thinning_tolerance() {
    let points = line(50.0);
    let day = stage(&points);
    let mut rest = stage(&[]);
    rest.is_rest_day = true;
    rest.start = at(50.0, 0.0);
    let plan = SearchPlan::for_stages(&[day, rest]);
    assert_eq!(plan.lines.len(), 2);
    assert_eq!(plan.lines[0].len(), 2, "a straight day thins to its ends");
    assert!(plan.lines[1].is_empty(), "a rest day has no line");
    assert_eq!(plan.line_radius_m, CORRIDOR_M + THINNING_TOLERANCE_M);
    assert_eq!(plan.way_radius_m, WAY_BUFFER_M + THINNING_TOLERANCE_M);
    assert_eq!(plan.ferry_radius_m, FERRY_RADIUS_M + THINNING_TOLERANCE_M);
    let classes: Vec<PlaceClass> = plan.places.iter().map(|p| p.class).collect();
    assert_eq!(
        classes,
        [
            PlaceClass::Health,
            PlaceClass::RailwayStation,
            PlaceClass::RailwayStation,
            PlaceClass::Accommodation,
            PlaceClass::Health,
            PlaceClass::Accommodation,
        ]
    );
    assert!(
        (plan.length_km() - 50.0).abs() < 0.1,
        "{}",
        plan.length_km()
    );
}

fn raw_way(highway: &str, points: Vec<(f64, f64)>) -> RawWay {
    RawWay {
        tags: WaySection::from_tags(0.0, (0.0, 0.0), |k| (k == "highway").then_some(highway))
            .expect("present"),
        points,
    }
}

#[test]
fn a_day_rides_the_ways_it_follows_and_no_other() {
    let points = line(10.0);
    let day = stage(&points);
    let found = RouteFeatures {
        ways: vec![
            // Along the route 15 m east, from km 2 to km 3 (a recorded track beside it).
            raw_way("primary", vec![at(2.0, 15.0), at(3.0, 15.0)]),
            // Along the route 25 m east: farther than a way followed.
            raw_way("secondary", vec![at(4.0, 25.0), at(5.0, 25.0)]),
            // Crossing the route at km 6: crossed, not ridden.
            raw_way("track", vec![at(6.0, -500.0), at(6.0, 500.0)]),
            // Far away: skipped by its box.
            raw_way("primary", vec![at(60.0, 0.0), at(61.0, 0.0)]),
            // The road the day follows from km 7 to km 9, with a cobbled street 12 m east
            // beside it: only the nearer is ridden.
            raw_way("residential", vec![at(7.0, 0.0), at(9.0, 0.0)]),
            raw_way("residential", vec![at(7.0, 12.0), at(9.0, 12.0)]),
        ],
        ..RouteFeatures::default()
    };
    let corridor = corridors(&[day], &found).remove(0);
    let by_highway: Vec<(&str, f64, f64)> = corridor
        .ways
        .iter()
        .map(|w| (w.highway.as_str(), w.from_m, w.length_m))
        .collect();
    assert_eq!(by_highway.len(), 2, "{by_highway:?}");
    assert_eq!(by_highway[0].0, "primary");
    assert!((by_highway[0].1 - 2_000.0).abs() < 25.0, "{by_highway:?}");
    assert!((by_highway[0].2 - 1_000.0).abs() < 40.0, "{by_highway:?}");
    assert_eq!(by_highway[1].0, "residential");
    // A way that ends where the day goes on over no way is ridden a few metres past its end.
    assert!((by_highway[1].2 - 2_000.0).abs() < 45.0, "{by_highway:?}");
    let centroid = corridor.ways[0].centroid;
    assert!(crate::geo::haversine_m(centroid, at(2.5, 0.0)) < 25.0);
    // Each metre of the day on at most one way.
    let ridden: f64 = corridor.ways.iter().map(|w| w.length_m).sum();
    assert!(ridden <= 10_000.0);
}

#[test]
fn a_ferry_beside_the_route_is_not_taken_and_one_ridden_is() {
    // The day rides a road north to km 4, a ferry across the water to km 6, a road on.
    let points = line(10.0);
    let day = stage(&points);
    let found = RouteFeatures {
        ways: vec![
            raw_way("unclassified", vec![at(0.0, 0.0), at(4.0, 0.0)]),
            raw_way("unclassified", vec![at(6.0, 0.0), at(10.0, 0.0)]),
        ],
        ferries: vec![
            ferry(Some("Fähre"), at(4.0, 0.0), at(6.0, 0.0)),
            // Another ferry line 45 m off the road, along it.
            ferry(Some("Ausflugsschiff"), at(0.5, 45.0), at(3.5, 45.0)),
            // One under a bridge the road takes.
            ferry(Some("Quer"), at(8.0, -800.0), at(8.0, 800.0)),
        ],
        ..RouteFeatures::default()
    };
    let corridor = corridors(std::slice::from_ref(&day), &found).remove(0);
    let names: Vec<Option<&str>> = corridor.ferries.iter().map(|f| f.name.as_deref()).collect();
    assert_eq!(names, vec![Some("Fähre")]);
    let alerts = rules::ferry_crossing(&day, &corridor);
    assert_eq!(alerts.len(), 1);
    assert!((corridor.ferries[0].length_m - 2_000.0).abs() < 25.0);
    // Without the ferry line the day rides it is no ferry day.
    let without = RouteFeatures {
        ferries: found.ferries[1..].to_vec(),
        ..found.clone()
    };
    let corridor = corridors(std::slice::from_ref(&day), &without).remove(0);
    assert!(rules::ferry_crossing(&day, &corridor).is_empty());
}

#[test]
fn a_ford_counts_only_on_a_way_ridden() {
    let points = line(10.0);
    let day = stage(&points);
    let ford = |km: f64, east: f64| feature(FeatureKind::Ford, km, east);
    let found = RouteFeatures {
        points: vec![ford(2.0, 0.0), ford(5.0, 18.0)],
        ways: vec![
            raw_way("track", vec![at(0.0, 0.0), at(10.0, 0.0)]),
            // A path beside the route with its own ford, 18 m east.
            raw_way("path", vec![at(4.5, 18.0), at(5.5, 18.0)]),
        ],
        ..RouteFeatures::default()
    };
    let corridor = corridors(std::slice::from_ref(&day), &found).remove(0);
    let fords = rules::ford_crossing_dry(&day, &corridor);
    assert_eq!(fords.len(), 1, "{fords:?}");
    assert_eq!(
        (fords[0].lat, fords[0].lon),
        (Some(at(2.0, 0.0).0), Some(at(2.0, 0.0).1))
    );
}

#[test]
fn the_500_m_main_road_threshold_counts_what_is_ridden() {
    let points = line(10.0);
    let alerts_for = |metres: f64| {
        let end = 1.0 + metres / 1000.0;
        let found = RouteFeatures {
            ways: vec![
                raw_way("residential", vec![at(0.0, 0.0), at(1.0, 0.0)]),
                raw_way("primary", vec![at(1.0, 0.0), at(end, 0.0)]),
                raw_way("residential", vec![at(end, 0.0), at(10.0, 0.0)]),
            ],
            ..RouteFeatures::default()
        };
        let day = stage(&points);
        let corridor = corridors(std::slice::from_ref(&day), &found).remove(0);
        rules::traffic_main_road(&day, &corridor).is_some()
    };
    assert!(!alerts_for(490.0));
    assert!(alerts_for(510.0));
}

#[test]
fn a_way_under_construction_or_proposed_is_no_road_for_either_source() {
    let section = |highway: &str| {
        WaySection::from_tags(100.0, (45.0, 5.0), |k| (k == "highway").then_some(highway))
    };
    for not_yet in [
        "proposed",
        "construction",
        "abandoned",
        "razed",
        "disused",
        "platform",
    ] {
        assert!(section(not_yet).is_none(), "{not_yet}");
        assert!(!WaySection::is_road(not_yet));
    }
    assert_eq!(
        section("primary").map(|s| s.highway),
        Some("primary".to_owned())
    );
    assert!(WaySection::TAG_KEYS.contains(&"maxspeed"));
}

// --- One entry per place (what OpenStreetMap maps several times) ---

const FUEL: FeatureKind = FeatureKind::Food(FoodKind::Fuel);

/// `feature` with an optional name.
fn place(kind: FeatureKind, km: f64, east_m: f64, name: Option<&str>) -> Feature {
    let f = feature(kind, km, east_m);
    match name {
        Some(name) => f.named(name),
        None => f,
    }
}

fn names_of(places: &[Feature]) -> Vec<Option<&str>> {
    places.iter().map(|f| f.name.as_deref()).collect()
}

#[test]
fn six_pumps_of_one_station_are_one_place() {
    let l = line(30.0);
    let s = stage(&l);
    // Two rows of three pumps, 10 m apart, 20 and 30 m east: at most 23 m from each other,
    // the name spelt as mappers do (case and runs of whitespace are folded).
    let spellings = [
        "Total Access",
        "total access",
        " Total  Access ",
        "TOTAL ACCESS",
        "Total\tAccess",
        "Total Access",
    ];
    let pumps: Vec<Feature> = spellings
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (row, col) = (i / 3, i % 3);
            place(
                FUEL,
                15.6 + col as f64 * 0.01,
                20.0 + row as f64 * 10.0,
                Some(name),
            )
        })
        .collect();
    assert_eq!(distinct_places(&pumps, &l).len(), 1);
    let found = found_along(&s, &points(pumps), &Reach::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].kind, found[0].km, found[0].off_route_m),
        ("fuel", 15.6, 20.0)
    );
    // The first of the nearest pumps stands for the station, spelt as it was.
    assert_eq!(found[0].name.as_deref(), Some("Total Access"));
}

#[test]
fn three_unnamed_taps_within_20_m_are_one_water_point() {
    let l = line(60.0);
    let s = stage(&l);
    let taps = points(vec![
        place(WATER, 34.0, 30.0, None),
        place(WATER, 34.01, 30.0, None),
        place(WATER, 34.0, 45.0, None),
    ]);
    let found = found_along(&s, &taps, &Reach::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].km, found[0].off_route_m), (34.0, 30.0));
}

#[test]
fn a_building_and_its_node_with_the_same_name_are_one_shop_with_both_tags() {
    let l = line(30.0);
    let supermarket = FeatureKind::Food(FoodKind::Supermarket);
    // The building's centroid 60 m off the route with the hours; the entrance node 25 m
    // nearer, without them.
    let mut building = place(supermarket, 12.0, 60.0, Some("coop "));
    building.opening_hours = Some("Mo-Sa 08:00-20:00".to_owned());
    let node = place(supermarket, 12.0, 35.0, Some("Coop"));
    let merged = distinct_places(&[building, node], &l);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].name.as_deref(), Some("Coop"), "the nearer one");
    assert_eq!(
        merged[0].opening_hours.as_deref(),
        Some("Mo-Sa 08:00-20:00")
    );
    let found = found_along(&stage(&l), &points(merged), &Reach::default());
    assert_eq!(found[0].off_route_m, 35.0);
}

#[test]
fn two_differently_named_bakeries_next_door_are_two_places() {
    let l = line(30.0);
    let two = vec![
        place(BAKERY, 12.0, 100.0, Some("Boulangerie Paul")),
        place(BAKERY, 12.0, 130.0, Some("Chez Marie")),
    ];
    assert_eq!(distinct_places(&two, &l).len(), 2);
    assert_eq!(
        found_along(&stage(&l), &points(two), &Reach::default()).len(),
        2
    );
}

#[test]
fn two_unnamed_taps_200_m_apart_are_two_places() {
    let l = line(30.0);
    let taps = vec![place(WATER, 5.0, 20.0, None), place(WATER, 5.2, 20.0, None)];
    assert_eq!(distinct_places(&taps, &l).len(), 2);
}

#[test]
fn a_chain_of_near_points_is_one_place_but_never_joins_two_names() {
    let l = line(30.0);
    // A–B 40 m, B–C 40 m, A–C 80 m: one shop, named or not.
    let spar = |km| {
        place(
            FeatureKind::Food(FoodKind::Convenience),
            km,
            100.0,
            Some("Spar"),
        )
    };
    assert_eq!(
        distinct_places(&[spar(20.0), spar(20.04), spar(20.08)], &l).len(),
        1
    );
    let tap = |km| place(WATER, km, 100.0, None);
    assert_eq!(
        distinct_places(&[tap(20.0), tap(20.04), tap(20.08)], &l).len(),
        1
    );
    // An unnamed bakery 30 m from one and 35 m from the other does not glue two named ones
    // together: it joins the nearer; the named one stands for it.
    let between = vec![
        place(BAKERY, 12.0, 100.0, Some("Paul")),
        place(BAKERY, 12.0, 130.0, None),
        place(BAKERY, 12.0, 165.0, Some("Marie")),
    ];
    assert_eq!(
        names_of(&distinct_places(&between, &l)),
        vec![Some("Paul"), Some("Marie")]
    );
    // The chain goes on only through points of the one name.
    let aldi = place(
        FeatureKind::Food(FoodKind::Convenience),
        20.08,
        100.0,
        Some("Aldi"),
    );
    assert_eq!(
        names_of(&distinct_places(&[spar(20.0), spar(20.04), aldi], &l)),
        vec![Some("Spar"), Some("Aldi")]
    );
}

#[test]
fn who_stands_for_a_place() {
    let l = line(30.0);
    // A named point over a nearer unnamed one.
    let fountain = distinct_places(
        &[
            place(WATER, 3.0, 10.0, None),
            place(WATER, 3.0, 40.0, Some("Fontaine")),
        ],
        &l,
    );
    assert_eq!(names_of(&fountain), vec![Some("Fontaine")]);
    // A restaurant over the pub of the same name, though farther: the place is resupply.
    let inn = distinct_places(
        &[
            place(FeatureKind::Food(FoodKind::Pub), 3.0, 10.0, Some("Le Lion")),
            place(
                FeatureKind::Food(FoodKind::Restaurant),
                3.0,
                40.0,
                Some("le lion"),
            ),
        ],
        &l,
    );
    assert_eq!(inn.len(), 1);
    assert!(inn[0].kind.is_resupply());
    // A repairing shop over its sale-only double.
    let shop = distinct_places(
        &[
            place(
                FeatureKind::BikeShop { repair: false },
                3.0,
                10.0,
                Some("Velo"),
            ),
            place(
                FeatureKind::BikeShop { repair: true },
                3.0,
                40.0,
                Some("Velo"),
            ),
        ],
        &l,
    );
    assert_eq!(shop.len(), 1);
    assert!(shop[0].kind.is_repair());
}

#[test]
fn different_families_or_unnamed_kinds_at_one_spot_stay_apart() {
    let l = line(30.0);
    let cafe = FeatureKind::Food(FoodKind::Cafe);
    let apart = |pair: [Feature; 2]| distinct_places(&pair, &l).len() == 2;
    assert!(apart([
        place(WATER, 3.0, 10.0, None),
        place(BAKERY, 3.0, 10.0, None)
    ]));
    assert!(apart([
        place(BAKERY, 3.0, 10.0, None),
        place(cafe, 3.0, 10.0, None)
    ]));
    assert!(apart([
        place(BAKERY, 3.0, 10.0, Some("Paul")),
        place(cafe, 3.0, 10.0, None)
    ]));
    assert!(!apart([
        place(BAKERY, 3.0, 10.0, Some("Paul")),
        place(cafe, 3.0, 20.0, Some("PAUL"))
    ]));
    // A heritage line's station neither hides nor stands for the real one beside it.
    let mut heritage = place(FeatureKind::RailwayStation, 3.0, 10.0, Some("Gare"));
    heritage.usage = Some("tourism".to_owned());
    assert!(apart([
        heritage,
        place(FeatureKind::RailwayStation, 3.0, 20.0, Some("Gare"))
    ]));
    // A point without coordinates is left as it is.
    let lost = Feature::new(WATER, f64::NAN, 5.0);
    assert_eq!(
        distinct_places(&[lost.clone(), lost], &l).len(),
        2,
        "no distance, no merge"
    );
}

#[test]
fn the_rules_count_places_not_map_objects() {
    let l = line(60.0);
    let s = stage(&l);
    // A seasonal hotel mapped five times at the day's end, and an inn of unknown season
    // 1 km away: the five nearest "candidates" are all the closed hotel, one place.
    let lake = |east| {
        let mut f = place(HOTEL, 60.0, east, Some("Hôtel du Lac"));
        f.opening_hours = Some("Nov-Mar".to_owned());
        f
    };
    let copies: Vec<Feature> = [100.0, 110.0, 120.0, 130.0, 140.0]
        .into_iter()
        .map(lake)
        .collect();
    let mut with_inn = copies.clone();
    with_inn.push(place(HOTEL, 60.0, 1_000.0, Some("Auberge")));
    assert!(
        accommodation_seasonal_closure(&s, &points(with_inn.clone())).is_some(),
        "read raw, the copies fill the five candidates"
    );
    let out = analyse_osm(std::slice::from_ref(&s), &[points(with_inn)], &settings());
    assert_eq!(codes(&out[0], ACCOMMODATION_SEASONAL_CLOSURE), 0);
    let out = analyse_osm(std::slice::from_ref(&s), &[points(copies)], &settings());
    let closure = out[0]
        .iter()
        .find(|a| a.code == ACCOMMODATION_SEASONAL_CLOSURE)
        .expect("present");
    assert_eq!(closure.parameters["candidates"], 1);
    // Six pumps of a station closed when the rider passes: one point in the list.
    let mut pumps: Vec<Feature> = (0..6)
        .map(|i| place(FUEL, 30.0 + f64::from(i) * 0.005, 20.0, Some("Esso")))
        .collect();
    pumps[5].opening_hours = Some("Mo-Fr 14:00-18:00".to_owned());
    let out = analyse_osm(std::slice::from_ref(&s), &[points(pumps)], &settings());
    let closed = out[0]
        .iter()
        .find(|a| a.code == RESUPPLY_CLOSED_AT_PASSAGE)
        .expect("the hours of one pump are the station's");
    assert_eq!(
        closed.parameters["points"].as_array().map(Vec::len),
        Some(1)
    );
    // The charger's action point names the place, not its nearer unnamed node.
    let chargers = points(vec![
        place(FeatureKind::Charger, 20.0, 10.0, None),
        place(FeatureKind::Charger, 20.0, 40.0, Some("Borne")),
    ]);
    let action = nearest_charger_action(&s, &chargers, 20.0).expect("present");
    assert_eq!(action["name"], "Borne");
}

#[test]
fn merging_a_long_route_is_fast_and_merging_twice_changes_nothing() {
    // 1,000 km with 20,000 points (same kind only every 300 m along the route), every
    // tenth mapped a second time 15 m away.
    let l = line(1_000.0);
    let kinds = [
        WATER,
        BAKERY,
        MUSEUM,
        FeatureKind::RailwayStation,
        HOTEL,
        FUEL,
    ];
    let mut all: Vec<Feature> = (0..20_000)
        .map(|i| {
            let east = ((i * 7_919) % 4_000) as f64 - 2_000.0;
            place(kinds[i % kinds.len()], i as f64 * 0.05, east, None)
        })
        .collect();
    let copies: Vec<Feature> = all
        .iter()
        .step_by(10)
        .map(|f| {
            let mut copy = f.clone();
            copy.lat += 15.0 / M;
            copy
        })
        .collect();
    all.extend(copies);
    let started = std::time::Instant::now();
    let once = distinct_places(&all, &l);
    let elapsed = started.elapsed();
    eprintln!("distinct_places, 22,000 points along 1,000 km: {elapsed:?}");
    assert_eq!(once.len(), 20_000);
    assert!(elapsed.as_secs() < 5, "{elapsed:?}");
    assert_eq!(distinct_places(&once, &l), once);
}
