//! Busy roads: cycle infrastructure, speed limits and the traffic alerts, one per stretch
//! long enough to matter.

use serde_json::{Value, json};

use super::*;
use crate::catalogue::*;
use crate::format::one_decimal;
use crate::model::{Alert, Severity};
use crate::osm::model::{Corridor, OsmStage, WaySection};
use crate::rules::alert;

/// Whether a way has cycle infrastructure: a `cycleway*` value other than `no`/`none`
/// (the upstream planner counted even `cycleway=no`), or `bicycle=designated|use_sidepath`.
pub fn has_cycle_infrastructure(way: &WaySection) -> bool {
    way.cycleway
        .iter()
        .any(|v| !matches!(v.trim(), "" | "no" | "none"))
        || matches!(way.bicycle.as_deref(), Some("designated" | "use_sidepath"))
}

/// The speed limit in km/h: the leading number (`mph` converted), `CC:urban` as 50 and
/// `CC:rural|trunk|motorway` as 90; `None` when unreadable.
pub fn maxspeed_kmh(raw: &str) -> Option<f64> {
    let raw = raw.trim();
    let digits: String = raw.chars().take_while(char::is_ascii_digit).collect();
    if let Ok(value) = digits.parse::<f64>() {
        return Some(if raw.contains("mph") {
            value * 1.609_344
        } else {
            value
        });
    }
    match raw.split_once(':').map(|(_, zone)| zone) {
        Some("urban") => Some(50.0),
        Some("rural" | "trunk" | "motorway") => Some(90.0),
        _ => None,
    }
}

/// Main and secondary roads: busy where they have no cycle infrastructure.
const BUSY_HIGHWAYS: &[&str] = &["primary", "trunk", "secondary"];

/// Whether a day counts this way as busy road in `busyShare` (a main or secondary road
/// without cycle infrastructure).
pub fn is_busy_road(way: &WaySection) -> bool {
    is_busy(way, BUSY_HIGHWAYS)
}

/// A way of `highways` without cycle infrastructure.
fn is_busy(way: &WaySection, highways: &[&str]) -> bool {
    highways.contains(&way.highway.as_str()) && !has_cycle_infrastructure(way)
}

/// The stretches of [`TRAFFIC_WAY_M`] or more the day rides on ways of `highways` without
/// cycle infrastructure whose speed limit passes `speed`: consecutive ways of the day (a
/// main road is many OSM ways, split at each bridge and junction) are one stretch. Each is
/// returned as one section (its length, its first way's tags and centroid, the highest
/// limit).
fn busy(
    corridor: &Corridor,
    highways: &[&str],
    speed: impl Fn(Option<f64>) -> bool,
) -> Vec<WaySection> {
    let passes = |w: &WaySection| {
        w.length_m.is_finite()
            && w.length_m > 0.0
            && is_busy(w, highways)
            && speed(w.maxspeed.as_deref().and_then(maxspeed_kmh))
    };
    let mut stretches: Vec<WaySection> = Vec::new();
    let mut end_m: Option<f64> = None;
    for way in &corridor.ways {
        if !passes(way) {
            end_m = None;
            continue;
        }
        let joins = end_m.is_some_and(|e| (way.from_m - e).abs() <= STRETCH_JOIN_M);
        match stretches.last_mut() {
            Some(stretch) if joins => {
                stretch.length_m += way.length_m;
                let limit = |w: &WaySection| w.maxspeed.as_deref().and_then(maxspeed_kmh);
                if limit(way) > limit(stretch) {
                    stretch.maxspeed.clone_from(&way.maxspeed);
                }
            }
            _ => stretches.push(way.clone()),
        }
        end_m = Some(way.from_m + way.length_m);
    }
    stretches.retain(|s| s.length_m >= TRAFFIC_WAY_M);
    stretches
}

fn traffic_alert(
    stage: &OsmStage<'_>,
    ways: &[WaySection],
    code: &'static str,
    severity: Severity,
    what: &str,
    extra: Value,
) -> Option<Alert> {
    let first = ways.first()?;
    let length: f64 = ways.iter().map(|w| w.length_m).sum();
    let mut parameters = json!({ "count": ways.len(), "lengthM": length.round() });
    if let (Value::Object(p), Value::Object(e)) = (&mut parameters, extra) {
        p.extend(e);
    }
    Some(alert(
        code,
        severity,
        GROUP_ROAD,
        format!(
            "Day {} rides {} km on {} {what} without cycle infrastructure.",
            stage.day_number,
            one_decimal(length / 1000.0),
            ways.len(),
        ),
        parameters,
        Some(first.centroid),
    ))
}

/// `traffic_main_road`: ways of `highway=primary|trunk` of [`TRAFFIC_WAY_M`] or more
/// without cycle infrastructure; one alert at the first one.
pub fn traffic_main_road(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let ways = busy(corridor, &["primary", "trunk"], |_| true);
    traffic_alert(
        stage,
        &ways,
        TRAFFIC_MAIN_ROAD,
        Severity::Critical,
        "main road way(s)",
        json!({}),
    )
}

/// `traffic_secondary_road_fast`: like the main-road rule on `highway=secondary` with a
/// limit above [`SECONDARY_FAST_KMH`].
pub fn traffic_secondary_road_fast(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let ways = busy(corridor, &["secondary"], |s| {
        s.is_some_and(|s| s > SECONDARY_FAST_KMH)
    });
    let max = ways
        .iter()
        .filter_map(|w| w.maxspeed.as_deref().and_then(maxspeed_kmh))
        .fold(0.0, f64::max);
    traffic_alert(
        stage,
        &ways,
        TRAFFIC_SECONDARY_ROAD_FAST,
        Severity::Warning,
        "fast secondary road way(s)",
        json!({ "maxspeedKmh": max.round() }),
    )
}

/// `traffic_secondary_road_slow`: the same at or below [`SECONDARY_FAST_KMH`], or with no
/// readable limit (read as 50).
pub fn traffic_secondary_road_slow(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let ways = busy(corridor, &["secondary"], |s| {
        s.is_none_or(|s| s <= SECONDARY_FAST_KMH)
    });
    let max = ways
        .iter()
        .map(|w| {
            w.maxspeed
                .as_deref()
                .and_then(maxspeed_kmh)
                .unwrap_or(SECONDARY_FAST_KMH)
        })
        .fold(0.0, f64::max);
    traffic_alert(
        stage,
        &ways,
        TRAFFIC_SECONDARY_ROAD_SLOW,
        Severity::Nudge,
        "secondary road way(s)",
        json!({ "maxspeedKmh": max.round() }),
    )
}
