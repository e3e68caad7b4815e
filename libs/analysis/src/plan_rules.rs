//! Rules about what the planner made of the route file: gaps between the
//! file's recorded pieces inside a day, and days that had to break the daily
//! cap because fixed dates left no other way.
//!
//! Gaps reuse the continuity codes (`continuity_gap_warning` for 100–500 m,
//! bridged and counted; `continuity_gap_critical` above 500 m, not counted
//! and not drawn), with `"withinDay": true` in their parameters so a client
//! can tell them from a gap between two days.

use serde_json::json;

use crate::catalogue::{
    CONTINUITY_GAP_CRITICAL, CONTINUITY_GAP_WARNING, DAILY_DISTANCE_OVER_CAP, GROUP_TERRAIN,
    NO_BED_NEAR_TARGET,
};
use crate::format::{int_sep, one_decimal};
use crate::model::{Alert, DayFacts, NearBed, Severity, StageInput};
use crate::rules::alert;

/// A day may exceed the cap by this much (km) before it is flagged: the
/// planner's own slack when counting days (a 400.05 km route at 80 km/day
/// is five days) and the rounding of stored distances.
pub const OVER_CAP_SLACK_KM: f64 = 0.1;

/// One alert per gap recorded inside the day.
pub fn track_gaps(stage: &StageInput<'_>, facts: &DayFacts<'_>) -> Vec<Alert> {
    facts
        .gaps
        .iter()
        .filter(|g| g.length_m.is_finite() && g.at_km.is_finite())
        .map(|gap| {
            let (code, severity, how) = if gap.bridged {
                (
                    CONTINUITY_GAP_WARNING,
                    Severity::Warning,
                    "bridged with a straight line and counted as riding",
                )
            } else {
                (
                    CONTINUITY_GAP_CRITICAL,
                    Severity::Critical,
                    "not counted and not drawn in exports; plan how to cover it",
                )
            };
            let length = if gap.length_m >= 1_000.0 {
                format!("{} km", one_decimal(gap.length_m / 1000.0))
            } else {
                format!("{} m", int_sep(gap.length_m))
            };
            alert(
                code,
                severity,
                GROUP_TERRAIN,
                format!(
                    "Day {}: the route file has a {length} gap at km {} of the route, {how}.",
                    stage.day_number,
                    one_decimal(gap.at_km),
                ),
                json!({
                    "withinDay": true,
                    "gapM": gap.length_m.round(),
                    "atKm": (gap.at_km * 10.0).round() / 10.0,
                    "bridged": gap.bridged,
                    "lat": gap.lat,
                    "lon": gap.lon,
                }),
                Some((gap.lat, gap.lon)),
            )
        })
        .collect()
}

/// `daily_distance_over_cap`: the day is longer than the trip's cap.
pub fn daily_distance_over_cap(stage: &StageInput<'_>, facts: &DayFacts<'_>) -> Option<Alert> {
    let cap = facts
        .max_distance_per_day_km
        .filter(|c| c.is_finite() && *c > 0.0)?;
    let distance = stage.distance_km;
    if !distance.is_finite() || distance <= cap + OVER_CAP_SLACK_KM {
        return None;
    }
    Some(alert(
        DAILY_DISTANCE_OVER_CAP,
        Severity::Warning,
        GROUP_TERRAIN,
        format!(
            "Day {} is {} km, over the daily cap of {} km.",
            stage.day_number,
            one_decimal(distance),
            one_decimal(cap),
        ),
        json!({
            "distanceKm": (distance * 10.0).round() / 10.0,
            "maxDistancePerDayKm": cap,
        }),
        None,
    ))
}

/// `no_bed_near_target`: with nights at accommodation, the pacer found no place to sleep of
/// the rider's types within the tolerance of the day's planned end, so the day ends at the
/// planned cut; the alert names the gap and the nearest beds either side, at the day's end.
pub fn no_bed_near_target(stage: &StageInput<'_>, facts: &DayFacts<'_>) -> Option<Alert> {
    let gap = facts.night_gap?;
    let near = |bed: Option<NearBed<'_>>| {
        bed.map(|b| {
            json!({"name": b.name, "type": b.kind, "km": (b.km * 10.0).round() / 10.0,
                "lat": b.lat, "lon": b.lon})
        })
    };
    Some(alert(
        NO_BED_NEAR_TARGET,
        Severity::Warning,
        GROUP_TERRAIN,
        format!("Day {}: {}", stage.day_number, gap.why),
        json!({
            "targetKm": (gap.target_km * 10.0).round() / 10.0,
            "windowKm": gap.window_km,
            "lookedFor": gap.looked_for,
            "nearestBefore": near(gap.nearest_before),
            "nearestAfter": near(gap.nearest_after),
        }),
        Some(stage.end),
    ))
}
