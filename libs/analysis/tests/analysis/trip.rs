//! A synthetic seven-day trip (Jura → Switzerland → Black Forest, late May
//! 2026) whose complete alert set is known in advance.

use crate::common::{codes, date, north, rest, settings, stage, track};
use etappe_analysis::{AnalysisSettings, StageInput, StagePoint, analyse};

/// Owns the points so that the stages can borrow them.
struct Trip {
    climb: Vec<StagePoint>,
    flat: Vec<StagePoint>,
}

impl Trip {
    fn new() -> Self {
        Self {
            // Day 2: a 1.5 km ramp at 10 % from km 4.
            climb: track((47.3, 6.5), 20_000.0, 25.0, |d| {
                450.0 + 0.10 * (d - 4_000.0).clamp(0.0, 1_500.0)
            }),
            flat: track((47.0, 6.0), 10_000.0, 25.0, |_| 450.0),
        }
    }

    fn stages(&self) -> Vec<StageInput<'_>> {
        let day1 = StageInput {
            distance_km: 60.0,
            ascent_m: Some(300.0),
            points: &self.flat,
            start: (47.0, 6.0),
            end: (47.3, 6.5),
            date: Some(date(2026, 5, 22)), // Friday
            start_country: Some("FR".into()),
            end_country: Some("FR".into()),
            utc_offset_minutes: Some(120),
            ..stage(1)
        };
        let day2 = StageInput {
            distance_km: 90.0,
            ascent_m: Some(1_450.0),
            points: &self.climb,
            start: day1.end,
            end: (47.4, 7.0),
            date: Some(date(2026, 5, 23)), // Saturday
            start_country: Some("FR".into()),
            end_country: Some("CH".into()),
            ..day1.clone()
        };
        let day3 = StageInput {
            distance_km: 45.0,
            ascent_m: Some(500.0),
            points: &self.flat,
            // 300 m from day 2's end.
            start: (day2.end.0 + north(300.0), day2.end.1),
            end: (47.5, 7.5),
            date: Some(date(2026, 5, 24)), // Sunday (Whit Sunday, not a CH holiday)
            start_country: Some("CH".into()),
            end_country: Some("CH".into()),
            ..day1.clone()
        };
        let day4 = StageInput {
            start: day3.end,
            end: day3.end,
            date: Some(date(2026, 5, 25)), // Whit Monday in CH
            start_country: Some("CH".into()),
            end_country: Some("CH".into()),
            ..rest(4)
        };
        let day5 = StageInput {
            distance_km: 70.0,
            ascent_m: Some(600.0),
            points: &[],
            // 800 m from day 3's end (the rest day in between is skipped).
            start: (day3.end.0 + north(800.0), day3.end.1),
            end: (47.7, 8.0),
            date: Some(date(2026, 5, 26)),
            start_country: Some("CH".into()),
            end_country: Some("DE".into()),
            ..day1.clone()
        };
        let day6 = StageInput {
            // 08:00 + 230 km / 15 km/h ≈ 23:20, after dusk (≈ 21:55 CEST).
            distance_km: 230.0,
            ascent_m: Some(900.0),
            points: &[],
            start: day5.end,
            end: (48.5, 9.0),
            date: Some(date(2026, 5, 27)),
            start_country: Some("DE".into()),
            end_country: Some("DE".into()),
            ..day1.clone()
        };
        let day7 = StageInput {
            distance_km: 70.0,
            ascent_m: Some(400.0),
            points: &[],
            start: day6.end,
            end: (48.6, 9.5),
            date: Some(date(2026, 5, 28)),
            start_country: Some("DE".into()),
            end_country: Some("DE".into()),
            ..day1.clone()
        };
        let mut all = vec![day1, day2, day3, day4, day5, day6, day7];
        for (i, s) in all.iter_mut().enumerate() {
            s.day_number = u32::try_from(i + 1).unwrap_or(0);
        }
        all
    }
}

#[test]
fn seven_day_trip_has_the_expected_alerts() {
    let trip = Trip::new();
    let stages = trip.stages();
    let out = analyse(&stages, &settings());
    let got: Vec<Vec<&str>> = out.iter().map(|a| codes(a.as_slice())).collect();
    assert_eq!(
        got,
        vec![
            vec![],
            vec!["elevation_gain", "steep_gradient", "border_crossing"],
            vec![
                "continuity_gap_warning",
                "rest_day_suggested",
                "calendar_sunday"
            ],
            vec!["calendar_public_holiday"],
            vec!["continuity_gap_critical", "border_crossing"],
            vec!["sunset_arrival_after_twilight"],
            vec!["rest_day_suggested"],
        ]
    );
    // Spot-check a few values.
    assert_eq!(out[2][0].parameters["gapM"], 300.0);
    assert_eq!(out[3][0].parameters["holiday"], "Whit Monday");
    assert_eq!(out[3][0].parameters["country"], "CH");
    assert_eq!(out[4][0].parameters["gapM"], 800.0);
    assert_eq!(out[4][1].message, "Day 5 crosses from CH to DE.");
    assert_eq!(out[6][0].parameters["consecutiveRidingDays"], 3);
}

#[test]
fn ebike_mode_adds_range_alerts() {
    let trip = Trip::new();
    let stages = trip.stages();
    let ebike = AnalysisSettings {
        ebike_mode: true,
        ..settings()
    };
    let out = analyse(&stages, &ebike);
    // Ranges: day 1 68 km, day 2 22 km, day 3 60 km, day 5 56 km,
    // day 6 44 km, day 7 64 km.
    let flagged: Vec<usize> = out
        .iter()
        .enumerate()
        .filter(|(_, a)| a.iter().any(|x| x.code == "ebike_range_exceeded"))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(flagged, vec![2, 5, 6, 7]);
}

#[test]
fn output_has_one_list_per_stage_and_serialises() {
    let trip = Trip::new();
    let stages = trip.stages();
    let out = analyse(&stages, &settings());
    assert_eq!(out.len(), stages.len());
    let json = serde_json::to_string(&out).expect("serialise");
    assert!(json.contains("\"severity\":\"critical\""));
    assert!(json.contains("\"group\":\"border_crossing\""));
    assert!(analyse(&[], &settings()).is_empty());
}
