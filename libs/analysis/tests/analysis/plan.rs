//! Alerts about what the planner made of the route file: gaps inside a day
//! days over the daily cap, and nights without a bed near the day's planned end.

use crate::common::{settings, stage};
use etappe_analysis::{
    Alert, DayFacts, NearBed, NightGap, Severity, StageInput, TrackGap, analyse_with_facts,
};

fn alerts_of(stage: StageInput<'_>, facts: DayFacts<'_>) -> Vec<Alert> {
    analyse_with_facts(&[stage], &[facts], &settings())
        .pop()
        .unwrap_or_default()
}

#[test]
fn a_break_inside_a_day_is_critical_and_names_its_length_and_place() {
    let gaps = [
        TrackGap {
            length_m: 4_870.0,
            at_km: 42.34,
            bridged: false,
            lat: 45.1,
            lon: 6.2,
        },
        TrackGap {
            length_m: 320.0,
            at_km: 50.0,
            bridged: true,
            lat: 45.2,
            lon: 6.3,
        },
    ];
    let alerts = alerts_of(
        stage(2),
        DayFacts {
            gaps: &gaps,
            max_distance_per_day_km: None,
            night_gap: None,
        },
    );
    let critical = alerts
        .iter()
        .find(|a| a.code == "continuity_gap_critical")
        .expect("a critical gap alert");
    assert_eq!(critical.severity, Severity::Critical);
    assert!(critical.message.contains("4.9 km"), "{}", critical.message);
    assert!(critical.message.contains("km 42.3"), "{}", critical.message);
    assert_eq!(critical.parameters["withinDay"], true);
    assert_eq!(critical.parameters["gapM"], 4870.0);
    assert_eq!((critical.lat, critical.lon), (Some(45.1), Some(6.2)));
    let warning = alerts
        .iter()
        .find(|a| a.code == "continuity_gap_warning")
        .expect("a warning for the bridged gap");
    assert!(warning.message.contains("320 m"), "{}", warning.message);
    // Catalogue order: critical before warning.
    let codes: Vec<&str> = alerts.iter().map(|a| a.code).collect();
    assert_eq!(
        codes,
        vec!["continuity_gap_critical", "continuity_gap_warning"]
    );
}

#[test]
fn a_day_over_the_cap_is_warned_with_the_cap_and_its_distance() {
    let long = StageInput {
        distance_km: 182.5,
        ..stage(1)
    };
    let facts = DayFacts {
        gaps: &[],
        max_distance_per_day_km: Some(40.0),
        night_gap: None,
    };
    let alerts = alerts_of(long, facts);
    let over = alerts
        .iter()
        .find(|a| a.code == "daily_distance_over_cap")
        .expect("over the cap");
    assert_eq!(over.severity, Severity::Warning);
    assert!(
        over.message.contains("182.5 km") && over.message.contains("40.0 km"),
        "{}",
        over.message
    );
    assert_eq!(over.parameters["maxDistancePerDayKm"], 40.0);
    // At the cap (within the planner's 100 m slack), or without a cap: nothing.
    for (distance, cap) in [(40.05, Some(40.0)), (182.5, None), (182.5, Some(f64::NAN))] {
        let day = StageInput {
            distance_km: distance,
            ..stage(1)
        };
        let facts = DayFacts {
            gaps: &[],
            max_distance_per_day_km: cap,
            night_gap: None,
        };
        assert!(
            alerts_of(day, facts)
                .iter()
                .all(|a| a.code != "daily_distance_over_cap"),
            "{distance} {cap:?}"
        );
    }
}

#[test]
fn a_rest_day_gets_neither() {
    let gaps = [TrackGap {
        length_m: 900.0,
        at_km: 1.0,
        bridged: false,
        lat: 45.0,
        lon: 6.0,
    }];
    let rest = StageInput {
        is_rest_day: true,
        distance_km: 500.0,
        ..stage(1)
    };
    let facts = DayFacts {
        gaps: &gaps,
        max_distance_per_day_km: Some(40.0),
        night_gap: None,
    };
    assert!(alerts_of(rest, facts).is_empty());
}

#[test]
fn a_night_without_a_bed_names_the_gap_and_the_beds_either_side_at_the_days_end() {
    let why = "No place to sleep of your types within ±15 % of the planned 62 km (km 52.7–71.3 of the day): the day ends at the planned cut. Nearest: Camping Au (camp site) at km 48.1 (before).";
    let facts = DayFacts {
        gaps: &[],
        max_distance_per_day_km: Some(80.0),
        night_gap: Some(NightGap {
            target_km: 62.0,
            window_km: [52.7, 71.3],
            looked_for: true,
            why,
            nearest_before: Some(NearBed {
                name: Some("Camping Au"),
                kind: "camp_site",
                km: 48.12,
                lat: 47.1,
                lon: 9.5,
            }),
            nearest_after: None,
        }),
    };
    let alerts = alerts_of(stage(3), facts);
    let gap = alerts
        .iter()
        .find(|a| a.code == "no_bed_near_target")
        .expect("the night's gap");
    assert_eq!(gap.severity, Severity::Warning);
    assert!(
        gap.message.starts_with("Day 3: No place to sleep"),
        "{}",
        gap.message
    );
    assert_eq!(gap.parameters["targetKm"], 62.0);
    assert_eq!(gap.parameters["nearestBefore"]["name"], "Camping Au");
    assert_eq!(gap.parameters["nearestBefore"]["km"], 48.1);
    assert!(gap.parameters["nearestAfter"].is_null());
    let day = stage(3);
    assert_eq!((gap.lat, gap.lon), (Some(day.end.0), Some(day.end.1)));
    // A night at a bed carries no fact, and no alert.
    let none = DayFacts {
        gaps: &[],
        max_distance_per_day_km: Some(80.0),
        night_gap: None,
    };
    assert!(
        alerts_of(stage(3), none)
            .iter()
            .all(|a| a.code != "no_bed_near_target")
    );
}
