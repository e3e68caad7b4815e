//! `analyse` must never panic, whatever the planner hands it: empty tracks,
//! zero distances, the slowest allowed speed, near-polar coordinates,
//! extreme dates and odd country strings. Every alert it emits must be in
//! the catalogue and serialise.

use crate::common::{date, settings, stage};
use chrono::NaiveDate;
use etappe_analysis::{AnalysisSettings, CODES, StageInput, StagePoint, analyse};

fn check_catalogue(out: &[Vec<etappe_analysis::Alert>]) {
    for alert in out.iter().flatten() {
        assert!(
            CODES.contains(&(alert.code, alert.group, alert.severity.as_str())),
            "{} / {} / {} not in CODES",
            alert.code,
            alert.group,
            alert.severity.as_str()
        );
        assert!(!alert.message.is_empty());
        assert!(serde_json::to_string(alert).is_ok());
    }
}

#[test]
fn extreme_but_finite_inputs_do_not_panic() {
    let polar_track: Vec<StagePoint> = (0..300)
        .map(|k| StagePoint {
            lat: 89.9,
            lon: -180.0 + f64::from(k) * 1.2,
            ele: Some(f64::from(k % 7) * 1_000.0),
            distance_m: f64::from(k) * 3.0,
        })
        .collect();
    let single_point = [StagePoint {
        lat: -89.9,
        lon: 180.0,
        ele: Some(0.0),
        distance_m: 0.0,
    }];
    let same_distance: Vec<StagePoint> = (0..50)
        .map(|k| StagePoint {
            lat: 0.0,
            lon: 0.0,
            ele: Some(f64::from(k)),
            distance_m: 0.0,
        })
        .collect();
    let tracks: [&[StagePoint]; 4] = [&[], &polar_track, &single_point, &same_distance];
    let dates = [
        None,
        Some(date(2026, 6, 21)),
        Some(date(2026, 12, 21)),
        Some(date(2027, 1, 1)),
        Some(NaiveDate::MIN),
        Some(NaiveDate::MAX),
    ];
    let places = [
        (89.9, 0.0),
        (-89.9, 0.0),
        (90.0, 180.0),
        (-90.0, -180.0),
        (0.0, 0.0),
        (45.0, 540.0),
        (1e6, -1e6),
    ];
    let speeds = [5.0, 0.0, -10.0, 1e-300, 1e9];
    let countries = [
        None,
        Some(String::new()),
        Some("F".to_owned()),
        Some("gb".to_owned()),
        Some("ÉÉ".to_owned()),
        Some("D\u{0}".to_owned()),
    ];
    let distances = [(0.0, 0.0), (1e6, 1e7), (100.0, -50.0)];
    let hours = [0u8, 23, 255];
    let offsets = [None, Some(i32::MIN), Some(i32::MAX), Some(0)];
    let mut checked = 0usize;
    // Full product of tracks × dates × places; the other dimensions are
    // cycled with co-prime-ish strides so that every value of each meets
    // every track/date/place without a 40,000-case product.
    for points in tracks {
        for day_date in dates {
            for &place in &places {
                for k in 0..30usize {
                    let (distance, ascent) = distances[k % distances.len()];
                    let country = &countries[k % countries.len()];
                    let other = &countries[(k / 2 + 1) % countries.len()];
                    let s = StageInput {
                        distance_km: distance,
                        ascent_m: Some(ascent),
                        points,
                        start: place,
                        end: place,
                        date: day_date,
                        start_country: country.clone(),
                        end_country: other.clone(),
                        utc_offset_minutes: offsets[k % offsets.len()],
                        ..stage(u32::MAX)
                    };
                    let rest = StageInput {
                        is_rest_day: true,
                        ..s.clone()
                    };
                    let set = AnalysisSettings {
                        departure_hour: hours[(k / 3) % hours.len()],
                        average_speed_kmh: speeds[(k / 5) % speeds.len()],
                        ebike_mode: k % 2 == 0,
                        climb_m_per_flat_km: 50.0,
                    };
                    let out = analyse(&[s.clone(), rest, s], &set);
                    assert_eq!(out.len(), 3);
                    check_catalogue(&out);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1_000);
}

#[test]
fn non_finite_values_are_ignored_not_fatal() {
    let nan_track = [
        StagePoint {
            lat: f64::NAN,
            lon: 0.0,
            ele: Some(f64::INFINITY),
            distance_m: f64::NAN,
        },
        StagePoint {
            lat: 0.0,
            lon: 0.0,
            ele: Some(0.0),
            distance_m: 0.0,
        },
    ];
    let s = StageInput {
        distance_km: f64::NAN,
        ascent_m: Some(f64::INFINITY),
        points: &nan_track,
        start: (f64::NAN, 0.0),
        end: (0.0, f64::NEG_INFINITY),
        date: Some(date(2026, 6, 22)), // a Monday, no holiday anywhere
        ..stage(1)
    };
    let set = AnalysisSettings {
        average_speed_kmh: f64::NAN,
        ebike_mode: true,
        ..settings()
    };
    let out = analyse(&[s.clone(), s], &set);
    check_catalogue(&out);
    // Nothing meaningful can be said about such a stage.
    assert!(out.iter().all(Vec::is_empty), "{out:?}");
}

#[test]
fn long_track_is_fast_enough() {
    // 300 km at 1 m spacing: the gradient scan is linear.
    let pts: Vec<StagePoint> = (0..300_000)
        .map(|k| StagePoint {
            lat: 45.0,
            lon: 6.0,
            ele: Some((f64::from(k) / 1_000.0).sin() * 100.0),
            distance_m: f64::from(k),
        })
        .collect();
    let s = StageInput {
        points: &pts,
        ..stage(1)
    };
    let started = std::time::Instant::now();
    let out = analyse(&[s], &settings());
    check_catalogue(&out);
    assert!(started.elapsed().as_secs() < 10);
}
