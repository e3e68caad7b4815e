//! The OpenStreetMap alert rules, one pure function each, with the upstream planner's
//! thresholds (see the constants). Each returns the alerts of one day for its code; names
//! of places are third-party text, so they go into `parameters` as data, never into the
//! message. An alert that points at something to do (a shop, a water point, a station, a
//! charger) carries it as `parameters.actionPoint` = `{kind, name, lat, lon}`.

use chrono::{NaiveDateTime, NaiveTime, TimeDelta};
use opening_hours::{Context, OpeningHours, RuleKind, localization::Country};
use serde_json::{Value, json};

use super::geom::{LineIndex, at_km, line_to_line, midpoint};
use super::model::{Corridor, Feature, FeatureKind, OsmStage, WaySection};
use super::places::distinct_places;
use crate::catalogue::*;
use crate::format::{int_sep, one_decimal, round1};
use crate::geo::haversine_m;
use crate::model::{Alert, Severity};
use crate::rules::alert;

/// Rough sections add up to at least this on a day, metres.
pub const ROUGH_SURFACE_M: f64 = 500.0;
/// A busy-road way counts from this clipped length, metres.
pub const TRAFFIC_WAY_M: f64 = 500.0;
/// A secondary road above this limit is fast, km/h.
pub const SECONDARY_FAST_KMH: f64 = 50.0;
/// The bike-shop rule runs only on trips with more stages than this.
pub const BIKE_SHOP_MIN_STAGES: usize = 5;
/// A repair resource this close to the day's midpoint is enough, metres.
pub const REPAIR_RADIUS_M: f64 = 2_000.0;
/// Points this close to the day's line are "on the way" (water, food, shops), metres.
pub const CORRIDOR_M: f64 = 2_000.0;
/// A day this long without food on the way gets a nudge, km.
pub const RESUPPLY_MIN_DAY_KM: f64 = 40.0;
/// No water over more than this, km.
pub const WATER_GAP_KM: f64 = 30.0;
/// Cultural suggestions this close to the line, metres.
pub const CULTURAL_RADIUS_M: f64 = 500.0;
/// Suggestions per day.
pub const CULTURAL_PER_DAY: usize = 3;
/// Suggestions per trip.
pub const CULTURAL_PER_TRIP: usize = 100;
/// A station this close to the start or the end is a way home, metres.
pub const STATION_RADIUS_M: f64 = 10_000.0;
/// A pharmacy, hospital or clinic this close to the midpoint, metres.
pub const HEALTH_RADIUS_M: f64 = 15_000.0;
/// A ferry line this close to the day's line is taken, metres.
pub const FERRY_RADIUS_M: f64 = 100.0;
/// A ford this close to the day's line is crossed, metres.
pub const FORD_RADIUS_M: f64 = 25.0;
/// Accommodation candidates this close to the day's end, metres.
pub const ACCOMMODATION_RADIUS_M: f64 = 5_000.0;
/// Candidates judged for seasonal closure (the nearest).
pub const ACCOMMODATION_CANDIDATES: usize = 5;

/// Highways whose surface is judged.
const SURFACE_HIGHWAYS: &[&str] = &[
    "primary",
    "secondary",
    "tertiary",
    "unclassified",
    "residential",
    "living_street",
    "service",
    "track",
    "path",
    "cycleway",
    "footway",
    "bridleway",
];
const ROUGH_SURFACES: &[&str] = &[
    "unpaved",
    "gravel",
    "dirt",
    "ground",
    "grass",
    "sand",
    "mud",
    "compacted",
    "fine_gravel",
    "pebblestone",
    "earth",
    "clay",
    "rock",
    "stone",
    "woodchips",
    "wood",
    "metal",
    "sett",
    "cobblestone",
    "unhewn_cobblestone",
    "paving_stones",
];
const ROUGH_SMOOTHNESS: &[&str] = &["bad", "very_bad", "horrible", "very_horrible", "impassable"];
const ROUGH_TRACKTYPES: &[&str] = &["grade3", "grade4", "grade5"];

fn action_point(feature: &Feature, kind: &str) -> Value {
    json!({ "kind": kind, "name": feature.name, "lat": feature.lat, "lon": feature.lon })
}

fn nearest<'f>(
    features: impl Iterator<Item = &'f Feature>,
    to: (f64, f64),
) -> Option<(&'f Feature, f64)> {
    features
        .map(|f| (f, haversine_m(to, (f.lat, f.lon))))
        .filter(|(_, d)| d.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// Whether a section is rough: any `;`-part of `surface` is rough; only without `surface`,
/// a `tracktype` grade3–5 or a `smoothness` bad or worse.
pub fn is_rough(way: &WaySection) -> bool {
    if !SURFACE_HIGHWAYS.contains(&way.highway.as_str()) {
        return false;
    }
    match &way.surface {
        Some(surface) => surface
            .split(';')
            .any(|part| ROUGH_SURFACES.contains(&part.trim())),
        None => {
            way.tracktype
                .as_deref()
                .is_some_and(|t| ROUGH_TRACKTYPES.contains(&t))
                || way
                    .smoothness
                    .as_deref()
                    .is_some_and(|s| ROUGH_SMOOTHNESS.contains(&s))
        }
    }
}

/// Metres of a day on rough surface and on busy road, counted as [`surface_rough`] and the
/// traffic rules count them (busy: main and secondary roads of [`TRAFFIC_WAY_M`] or more
/// without cycle infrastructure, whatever their limit), so the day's figures and its alerts
/// agree.
pub fn road_mix(corridor: &Corridor) -> (f64, f64) {
    let rough = corridor
        .ways
        .iter()
        .filter(|w| w.length_m.is_finite() && w.length_m > 0.0 && is_rough(w))
        .map(|w| w.length_m)
        .sum();
    let busy = busy(corridor, &["primary", "trunk", "secondary"], |_| true)
        .iter()
        .map(|w| w.length_m)
        .sum();
    (rough, busy)
}

/// `surface_rough`: rough sections add up to [`ROUGH_SURFACE_M`] or more (a day total, not
/// one section); at the day's start, with the sections.
pub fn surface_rough(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let rough: Vec<&WaySection> = corridor
        .ways
        .iter()
        .filter(|w| w.length_m.is_finite() && w.length_m > 0.0 && is_rough(w))
        .collect();
    let total: f64 = rough.iter().map(|w| w.length_m).sum();
    if total < ROUGH_SURFACE_M {
        return None;
    }
    let sections: Vec<Value> = rough
        .iter()
        .map(|w| {
            json!({
                "lengthM": w.length_m.round(),
                "surface": w.surface.as_deref().or(w.smoothness.as_deref()).or(w.tracktype.as_deref()),
                "lat": w.centroid.0,
                "lon": w.centroid.1,
            })
        })
        .collect();
    Some(alert(
        SURFACE_ROUGH,
        Severity::Warning,
        GROUP_ROAD,
        format!(
            "Day {} has {} m of rough surface.",
            stage.day_number,
            int_sep(total)
        ),
        json!({ "lengthM": total.round(), "thresholdM": ROUGH_SURFACE_M, "sections": sections }),
        Some(stage.start),
    ))
}

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

/// The ways of `highways` long enough to count, without cycle infrastructure, whose speed
/// limit passes `speed`.
fn busy(
    corridor: &Corridor,
    highways: &[&str],
    speed: impl Fn(Option<f64>) -> bool,
) -> Vec<WaySection> {
    corridor
        .ways
        .iter()
        .filter(|w| highways.contains(&w.highway.as_str()))
        .filter(|w| w.length_m.is_finite() && w.length_m >= TRAFFIC_WAY_M)
        .filter(|w| !has_cycle_infrastructure(w))
        .filter(|w| speed(w.maxspeed.as_deref().and_then(maxspeed_kmh)))
        .cloned()
        .collect()
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

/// `bike_shop_none_nearby`: on trips of more than [`BIKE_SHOP_MIN_STAGES`] stages, no
/// repair station or repairing shop within [`REPAIR_RADIUS_M`] of the midpoint; the
/// nearest shop of any kind is the action point.
pub fn bike_shop_none_nearby(
    stage: &OsmStage<'_>,
    corridor: &Corridor,
    stage_count: usize,
) -> Option<Alert> {
    if stage_count <= BIKE_SHOP_MIN_STAGES {
        return None;
    }
    let mid = midpoint(stage.points, stage.start);
    let repair = corridor.points.iter().filter(|f| f.kind.is_repair());
    if nearest(repair, mid).is_some_and(|(_, d)| d < REPAIR_RADIUS_M) {
        return None;
    }
    let shops = corridor.points.iter().filter(|f| {
        matches!(
            f.kind,
            FeatureKind::BikeShop { .. } | FeatureKind::RepairStation
        )
    });
    let action = nearest(shops, mid).map(|(f, _)| action_point(f, "bike_shop"));
    Some(alert(
        BIKE_SHOP_NONE_NEARBY,
        Severity::Nudge,
        GROUP_BIKE_SHOP,
        format!(
            "Day {}: no bike repair within {} km of the middle of the day.",
            stage.day_number,
            int_sep(REPAIR_RADIUS_M / 1000.0)
        ),
        json!({ "stage": stage.day_number, "thresholdM": REPAIR_RADIUS_M, "actionPoint": action }),
        Some(mid),
    ))
}

/// Resupply points within [`CORRIDOR_M`] of the line, with their km from the start.
fn resupply_on_line<'c>(stage: &OsmStage<'_>, corridor: &'c Corridor) -> Vec<(&'c Feature, f64)> {
    let line = LineIndex::new(stage.points);
    corridor
        .points
        .iter()
        .filter(|f| f.kind.is_resupply())
        .filter(|f| line.distance_m((f.lat, f.lon)) <= CORRIDOR_M)
        .filter_map(|f| line.nearest_vertex((f.lat, f.lon)).map(|(km, _)| (f, km)))
        .collect()
}

/// `resupply_none_on_stage`: a day of [`RESUPPLY_MIN_DAY_KM`] or more with no food on the way.
pub fn resupply_none_on_stage(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    if stage.distance_km.is_nan()
        || stage.distance_km < RESUPPLY_MIN_DAY_KM
        || !resupply_on_line(stage, corridor).is_empty()
    {
        return None;
    }
    Some(alert(
        RESUPPLY_NONE_ON_STAGE,
        Severity::Nudge,
        GROUP_POIS,
        format!(
            "Day {}: no food shop or restaurant within {} km of the route over {} km.",
            stage.day_number,
            int_sep(CORRIDOR_M / 1000.0),
            one_decimal(stage.distance_km)
        ),
        json!({ "stage": stage.day_number, "distanceKm": round1(stage.distance_km) }),
        Some(stage.start),
    ))
}

/// Estimated local time the rider passes `km` into the day (the upstream estimator): speed
/// max(5, v − 2·D+/500) km/h, 10 min of break per 2 h riding, an hour for lunch when noon
/// falls inside the day; the whole is shared pro rata along the distance.
pub fn passage_time(
    stage: &OsmStage<'_>,
    km: f64,
    departure_hour: u8,
    average_speed_kmh: f64,
) -> Option<NaiveDateTime> {
    let date = stage.date?;
    let (distance, ascent) = (stage.distance_km, stage.ascent_m.unwrap_or(0.0).max(0.0));
    if !(distance.is_finite()
        && distance > 0.0
        && km.is_finite()
        && ascent.is_finite()
        && average_speed_kmh.is_finite())
    {
        return None;
    }
    let speed = (average_speed_kmh - 2.0 * ascent / 500.0).max(5.0);
    let riding = distance / speed;
    let departure = f64::from(departure_hour.min(23));
    let mut total = riding + riding / 2.0 * (10.0 / 60.0);
    if departure < 12.0 && departure + total > 12.0 {
        total += 1.0;
    }
    let hours = departure + total * (km / distance).clamp(0.0, 1.0);
    let minutes = (hours * 60.0).round() as i64;
    Some(date.and_time(NaiveTime::MIN) + TimeDelta::minutes(minutes))
}

/// Open, closed or unknown for these hours at `at`; unparsable hours are unknown. The
/// country's public holidays apply when it is known (`PH off`).
pub fn opening_state(hours: &str, at: NaiveDateTime, country: Option<&str>) -> RuleKind {
    let Ok(parsed) = hours.parse::<OpeningHours>() else {
        return RuleKind::Unknown;
    };
    let parsed = match country.and_then(|c| c.to_ascii_uppercase().parse::<Country>().ok()) {
        Some(country) => parsed.with_context(Context::default().with_holidays(country.holidays())),
        None => parsed,
    };
    parsed.state(at).0
}

/// `resupply_closed_at_passage`: every food point on the way is *known* closed when the rider
/// passes it (at least one point; missing or unparsable hours never raise it; needs a date).
pub fn resupply_closed_at_passage(
    stage: &OsmStage<'_>,
    corridor: &Corridor,
    departure_hour: u8,
    average_speed_kmh: f64,
) -> Option<Alert> {
    let points = resupply_on_line(stage, corridor);
    if points.is_empty() {
        return None;
    }
    let mut closed = Vec::new();
    for (feature, km) in &points {
        let at = passage_time(stage, *km, departure_hour, average_speed_kmh)?;
        let hours = feature.opening_hours.as_deref()?;
        if opening_state(hours, at, stage.country.as_deref()) != RuleKind::Closed {
            return None;
        }
        closed.push(json!({ "name": feature.name, "km": round1(*km), "passage": at.format("%H:%M").to_string(), "lat": feature.lat, "lon": feature.lon }));
    }
    Some(alert(
        RESUPPLY_CLOSED_AT_PASSAGE,
        Severity::Warning,
        GROUP_POIS,
        format!(
            "Day {}: every food shop on the way is closed when you pass it.",
            stage.day_number
        ),
        json!({ "stage": stage.day_number, "points": closed }),
        Some(stage.start),
    ))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Whether a place is likely closed in `month` (1–12): the first `opening_hours` rule is
/// `Mmm-Mmm[ times]` and the month is outside it (wrapping allowed); else `seasonal=yes`
/// means closed November to March; else unknown (`None`).
pub fn likely_closed_in(feature: &Feature, month: u32) -> Option<bool> {
    let month_of = |m: &str| MONTHS.iter().position(|x| *x == m).map(|i| i as u32 + 1);
    if let Some(hours) = &feature.opening_hours {
        let first = hours.split(';').next().unwrap_or("").trim();
        let range = first.split_whitespace().next().unwrap_or("");
        if let Some((from, to)) = range.split_once('-')
            && let (Some(from), Some(to)) = (month_of(from), month_of(to))
        {
            let inside = if from <= to {
                (from..=to).contains(&month)
            } else {
                month >= from || month <= to
            };
            return Some(!inside);
        }
    }
    if feature.seasonal.as_deref() == Some("yes") {
        return Some(matches!(month, 11 | 12 | 1..=3));
    }
    None
}

/// `accommodation_seasonal_closure`: the [`ACCOMMODATION_CANDIDATES`] nearest places to
/// sleep within [`ACCOMMODATION_RADIUS_M`] of the end all look closed in the day's month.
/// Runs on rest days (the night still needs a bed).
pub fn accommodation_seasonal_closure(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    use chrono::Datelike;
    let month = stage.date?.month();
    let mut candidates: Vec<(&Feature, f64)> = corridor
        .points
        .iter()
        .filter(|f| matches!(f.kind, FeatureKind::Accommodation(_)))
        .map(|f| (f, haversine_m(stage.end, (f.lat, f.lon))))
        .filter(|(_, d)| *d <= ACCOMMODATION_RADIUS_M)
        .collect();
    candidates.sort_by(|a, b| a.1.total_cmp(&b.1));
    candidates.truncate(ACCOMMODATION_CANDIDATES);
    if candidates.is_empty()
        || !candidates
            .iter()
            .all(|(f, _)| likely_closed_in(f, month) == Some(true))
    {
        return None;
    }
    Some(alert(
        ACCOMMODATION_SEASONAL_CLOSURE,
        Severity::Warning,
        GROUP_ACCOMMODATIONS,
        format!(
            "Day {}: the {} nearest places to sleep look closed in {}.",
            stage.day_number,
            candidates.len(),
            MONTHS[(month - 1) as usize]
        ),
        json!({ "stage": stage.day_number, "candidates": candidates.len(), "month": month }),
        Some(stage.end),
    ))
}

/// `water_point_gap`: more than [`WATER_GAP_KM`] without drinking water within
/// [`CORRIDOR_M`] — start to first, between two, last to end; no water at all on a day
/// longer than that. One alert per day with every gap; the water point nearest the
/// midpoint is the action point.
pub fn water_point_gap(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let length = stage
        .points
        .last()
        .map_or(stage.distance_km, |p| p.distance_m / 1000.0);
    if !length.is_finite() {
        return None;
    }
    let line = LineIndex::new(stage.points);
    let water: Vec<(&Feature, f64)> = corridor
        .points
        .iter()
        .filter(|f| f.kind == FeatureKind::DrinkingWater)
        .filter(|f| line.distance_m((f.lat, f.lon)) <= CORRIDOR_M)
        .filter_map(|f| line.nearest_vertex((f.lat, f.lon)).map(|(km, _)| (f, km)))
        .collect();
    let mut kms: Vec<f64> = water.iter().map(|(_, km)| *km).collect();
    kms.sort_by(f64::total_cmp);
    let mut stops = vec![0.0];
    stops.extend(kms);
    stops.push(length);
    let gaps: Vec<Value> = stops
        .windows(2)
        .filter(|w| w[1] - w[0] > WATER_GAP_KM)
        .map(|w| json!({ "fromKm": round1(w[0]), "toKm": round1(w[1]), "lengthKm": round1(w[1] - w[0]) }))
        .collect();
    if gaps.is_empty() {
        return None;
    }
    let mid = midpoint(stage.points, stage.start);
    let action = nearest(water.iter().map(|(f, _)| *f), mid).map(|(f, _)| action_point(f, "water"));
    Some(alert(
        WATER_POINT_GAP,
        Severity::Nudge,
        GROUP_WATER_POINT,
        format!(
            "Day {}: more than {} km without drinking water on the way.",
            stage.day_number,
            int_sep(WATER_GAP_KM)
        ),
        json!({ "stage": stage.day_number, "thresholdKm": WATER_GAP_KM, "gaps": gaps, "actionPoint": action }),
        Some(mid),
    ))
}

/// A cultural point near a day, before the caps.
#[derive(Debug, Clone)]
pub(crate) struct CulturalCandidate<'c> {
    pub(crate) stage: usize,
    pub(crate) feature: &'c Feature,
    pub(crate) distance_m: f64,
    pub(crate) km: f64,
}

/// Cultural points within [`CULTURAL_RADIUS_M`] of a riding day's line (distance to the
/// nearest vertex, as upstream).
pub(crate) fn cultural_candidates<'c>(
    index: usize,
    stage: &OsmStage<'_>,
    corridor: &'c Corridor,
) -> Vec<CulturalCandidate<'c>> {
    if stage.is_rest_day {
        return Vec::new();
    }
    let line = LineIndex::new(stage.points);
    corridor
        .points
        .iter()
        .filter(|f| matches!(f.kind, FeatureKind::Cultural(_)))
        .filter_map(|f| {
            line.nearest_vertex((f.lat, f.lon))
                .map(|(km, d)| (f, km, d))
        })
        .filter(|(_, _, d)| *d <= CULTURAL_RADIUS_M)
        .map(|(feature, km, distance_m)| CulturalCandidate {
            stage: index,
            feature,
            distance_m,
            km,
        })
        .collect()
}

/// `cultural_poi_suggestion` for the whole trip: the [`CULTURAL_PER_TRIP`] nearest
/// candidates (a point near two days goes to the nearer), then [`CULTURAL_PER_DAY`] per
/// day; one alert each, at the point, ready for `add_waypoint`.
pub(crate) fn cultural_suggestions(
    stages: &[OsmStage<'_>],
    mut candidates: Vec<CulturalCandidate<'_>>,
) -> Vec<Vec<Alert>> {
    candidates.sort_by(|a, b| a.distance_m.total_cmp(&b.distance_m));
    let mut seen: Vec<(f64, f64, FeatureKind)> = Vec::new();
    candidates.retain(|c| {
        let key = (c.feature.lat, c.feature.lon, c.feature.kind);
        if seen.contains(&key) {
            return false;
        }
        seen.push(key);
        true
    });
    candidates.truncate(CULTURAL_PER_TRIP);
    let mut out: Vec<Vec<Alert>> = vec![Vec::new(); stages.len()];
    for c in candidates {
        let (Some(day), Some(stage)) = (out.get_mut(c.stage), stages.get(c.stage)) else {
            continue;
        };
        if day.len() >= CULTURAL_PER_DAY {
            continue;
        }
        let FeatureKind::Cultural(kind) = c.feature.kind else {
            continue;
        };
        let f = c.feature;
        day.push(alert(
            CULTURAL_POI_SUGGESTION,
            Severity::Nudge,
            GROUP_CULTURAL_POI,
            format!(
                "Day {}: a {} {} m from the route at km {}.",
                stage.day_number,
                kind.as_str().replace('_', " "),
                int_sep(c.distance_m),
                one_decimal(c.km)
            ),
            json!({
                "stage": stage.day_number, "name": f.name, "type": kind.as_str(),
                "distanceM": c.distance_m.round(), "km": round1(c.km),
                "lat": f.lat, "lon": f.lon, "openingHours": f.opening_hours,
                "website": f.website, "wikidata": f.wikidata,
                "actionPoint": action_point(f, "cultural_poi"),
            }),
            Some((f.lat, f.lon)),
        ));
    }
    out
}

/// `railway_station_none_nearby`: no station (tourist lines aside) within
/// [`STATION_RADIUS_M`] of the start or of the end; at the station nearest the end.
pub fn railway_station_none_nearby(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let stations = || {
        corridor.points.iter().filter(|f| {
            f.kind == FeatureKind::RailwayStation && f.usage.as_deref() != Some("tourism")
        })
    };
    let near = |p: (f64, f64)| nearest(stations(), p).is_some_and(|(_, d)| d < STATION_RADIUS_M);
    if near(stage.start) || near(stage.end) {
        return None;
    }
    let closest = nearest(stations(), stage.end).map(|(f, _)| f);
    Some(alert(
        RAILWAY_STATION_NONE_NEARBY,
        Severity::Nudge,
        GROUP_RAILWAY_STATION,
        format!(
            "Day {}: no railway station within {} km of the start or the end.",
            stage.day_number,
            int_sep(STATION_RADIUS_M / 1000.0)
        ),
        json!({ "stage": stage.day_number, "thresholdM": STATION_RADIUS_M, "actionPoint": closest.map(|f| action_point(f, "railway_station")) }),
        Some(closest.map_or(stage.end, |f| (f.lat, f.lon))),
    ))
}

/// `health_service_none_nearby`: no pharmacy, hospital or clinic within
/// [`HEALTH_RADIUS_M`] of the midpoint. Runs on rest days too.
pub fn health_service_none_nearby(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let mid = midpoint(stage.points, stage.start);
    let health = corridor
        .points
        .iter()
        .filter(|f| matches!(f.kind, FeatureKind::Health(_)));
    if nearest(health, mid).is_some_and(|(_, d)| d < HEALTH_RADIUS_M) {
        return None;
    }
    Some(alert(
        HEALTH_SERVICE_NONE_NEARBY,
        Severity::Nudge,
        GROUP_HEALTH_SERVICE,
        format!(
            "Day {}: no pharmacy, hospital or clinic within {} km.",
            stage.day_number,
            int_sep(HEALTH_RADIUS_M / 1000.0)
        ),
        json!({ "stage": stage.day_number, "thresholdM": HEALTH_RADIUS_M }),
        Some(mid),
    ))
}

/// `ferry_crossing`: a ferry line within [`FERRY_RADIUS_M`] of the day's line; one alert
/// per distinct name (per line when unnamed), at the ferry's point closest to the day.
pub fn ferry_crossing(stage: &OsmStage<'_>, corridor: &Corridor) -> Vec<Alert> {
    let mut out: Vec<Alert> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for ferry in &corridor.ferries {
        let Some((d, at)) = line_to_line(&ferry.points, stage.points) else {
            continue;
        };
        if d > FERRY_RADIUS_M {
            continue;
        }
        if let Some(name) = ferry.name.as_deref() {
            if names.contains(&name) {
                continue;
            }
            names.push(name);
        }
        out.push(alert(
            FERRY_CROSSING,
            Severity::Warning,
            GROUP_FERRY,
            format!(
                "Day {} takes a ferry: check its timetable.",
                stage.day_number
            ),
            json!({ "stage": stage.day_number, "name": ferry.name, "distanceM": d.round() }),
            Some(at),
        ));
    }
    out
}

/// `ford_crossing_dry`: a ford within [`FORD_RADIUS_M`] of the day's line; deduplicated by
/// name (by position when unnamed).
pub fn ford_crossing_dry(stage: &OsmStage<'_>, corridor: &Corridor) -> Vec<Alert> {
    let mut out = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let line = LineIndex::new(stage.points);
    for ford in corridor
        .points
        .iter()
        .filter(|f| f.kind == FeatureKind::Ford)
    {
        let d = line.distance_m((ford.lat, ford.lon));
        if d.is_nan() || d > FORD_RADIUS_M {
            continue;
        }
        if let Some(name) = ford.name.as_deref() {
            if names.contains(&name) {
                continue;
            }
            names.push(name);
        }
        out.push(alert(
            FORD_CROSSING_DRY,
            Severity::Nudge,
            GROUP_FORD,
            format!("Day {} crosses a ford.", stage.day_number),
            json!({ "stage": stage.day_number, "name": ford.name, "distanceM": d.round() }),
            Some((ford.lat, ford.lon)),
        ));
    }
    out
}

/// Adds the e-bike charger nearest to where the battery runs out (the point at the range's
/// km, from `parameters.rangeKm`) to an `ebike_range_exceeded` alert as its action point.
/// Other alerts, and days without a charger in the corridor, are left as they are.
pub fn attach_nearest_charger(alert: &mut Alert, stage: &OsmStage<'_>, corridor: &Corridor) {
    if alert.code != EBIKE_RANGE_EXCEEDED {
        return;
    }
    let range_km = alert
        .parameters
        .get("rangeKm")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    if let (Some(action), Value::Object(p)) = (
        nearest_charger_action(stage, corridor, range_km),
        &mut alert.parameters,
    ) {
        p.insert("actionPoint".to_owned(), action);
    }
}

/// The action point of the charger nearest to where a battery of `range_km` runs out on
/// this day (`{kind: "charger", name, lat, lon, distanceM}`), if the corridor has one.
/// Chargers are merged into places first ([`distinct_places`]): callers pass the raw
/// corridor, and the nearest node of a named charger may be an unnamed duplicate.
pub fn nearest_charger_action(
    stage: &OsmStage<'_>,
    corridor: &Corridor,
    range_km: f64,
) -> Option<Value> {
    let empty_at = at_km(stage.points, range_km)?;
    let chargers: Vec<Feature> = corridor
        .points
        .iter()
        .filter(|f| f.kind == FeatureKind::Charger)
        .cloned()
        .collect();
    let chargers = distinct_places(&chargers, stage.points);
    let (charger, d) = nearest(chargers.iter(), empty_at)?;
    let mut action = action_point(charger, "charger");
    action["distanceM"] = json!(d.round());
    Some(action)
}
