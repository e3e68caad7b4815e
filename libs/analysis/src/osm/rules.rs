//! The OpenStreetMap alert rules, one pure function each, with the upstream planner's
//! thresholds (see the constants). Each returns the alerts of one day for its code; names
//! of places are third-party text, so they go into `parameters` as data, never into the
//! message. An alert that points at something to do (a shop, a water point, a station, a
//! charger) carries it as `parameters.actionPoint` = `{kind, name, lat, lon}`.

use chrono::{NaiveDateTime, NaiveTime, TimeDelta};
use opening_hours::{Context, OpeningHours, RuleKind, localization::Country};
use serde_json::{Value, json};

use super::found::passes_of;
use super::geom::{at_km, line_of, midpoint};
use super::model::{Corridor, Feature, FeatureKind, OsmStage, WaySection};
use super::places::distinct_places;
use super::reach::Reach;
use crate::catalogue::*;
use crate::format::{int_sep, one_decimal, round1};
use crate::geo::haversine_m;
use crate::model::{Alert, Severity};
use crate::rules::alert;

/// Rough sections add up to at least this on a day, metres.
pub const ROUGH_SURFACE_M: f64 = 500.0;
/// A stretch of busy road counts from this length, metres.
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
/// Ferry lines are searched this close to the day's line, metres (whether the day rides one
/// is the match's to say).
pub const FERRY_RADIUS_M: f64 = 100.0;
/// A day rides a ferry when it rides this much of a ferry line, metres.
pub const FERRY_RIDDEN_M: f64 = 50.0;
/// A ford this close to the day's line is crossed, metres.
pub const FORD_RADIUS_M: f64 = 25.0;
/// Accommodation candidates this close to the day's end, metres.
pub const ACCOMMODATION_RADIUS_M: f64 = 5_000.0;
/// Candidates judged for seasonal closure (the nearest).
pub const ACCOMMODATION_CANDIDATES: usize = 5;

/// `surface` values that are not paved: loose or natural ground.
const UNPAVED_SURFACES: &[&str] = &[
    "unpaved",
    "gravel",
    "fine_gravel",
    "compacted",
    "pebblestone",
    "dirt",
    "earth",
    "ground",
    "grass",
    "sand",
    "mud",
    "clay",
    "rock",
    "woodchips",
    "snow",
    "ice",
];
/// `surface` values that are paved but rough to ride: stones with gaps.
const COBBLED_SURFACES: &[&str] = &[
    "sett",
    "cobblestone",
    "unhewn_cobblestone",
    "cobblestone:flattened",
    "stone",
];
/// `surface` values that are paved and smooth enough.
const PAVED_SURFACES: &[&str] = &[
    "paved",
    "asphalt",
    "chipseal",
    "concrete",
    "concrete:plates",
    "concrete:lanes",
    "paving_stones",
    "paving_stones:lanes",
    "bricks",
    "metal",
    "wood",
    "rubber",
    "tartan",
    "artificial_turf",
];
const ROUGH_SMOOTHNESS: &[&str] = &["bad", "very_bad", "horrible", "very_horrible", "impassable"];
/// Highways that are paths for all but a few: without a `surface`, they are taken as
/// unpaved (as Valhalla takes them, and as they mostly are outside towns).
const UNPAVED_BY_DEFAULT: &[&str] = &["track", "path", "bridleway", "footway"];

/// What a way is to ride on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Paved,
    /// Paved with stones (sett, cobbles) or in bad repair.
    Cobbled,
    Unpaved,
    /// A `surface` value this list does not know.
    Unknown,
}

impl Surface {
    /// Rough to ride: unpaved or cobbled (what `surface_rough` counts).
    pub fn is_rough(self) -> bool {
        matches!(self, Self::Unpaved | Self::Cobbled)
    }
}

/// The surface of a way: its `surface` (any unpaved `;`-part makes it unpaved, else any
/// cobbled part cobbled); without one, a `tracktype` (grade1 paved, grade2–5 unpaved), else
/// the highway's usual surface (tracks, paths, bridleways and footways unpaved, roads
/// paved). Only without a `surface`, a `smoothness` bad or worse makes it rough (cobbled):
/// a way's own surface says more than a judgement of its repair.
pub fn surface_of(way: &WaySection) -> Surface {
    let rough_smoothness = way
        .smoothness
        .as_deref()
        .is_some_and(|s| ROUGH_SMOOTHNESS.contains(&s));
    if way.surface.is_none() && rough_smoothness {
        return Surface::Cobbled;
    }
    match (&way.surface, way.tracktype.as_deref()) {
        (Some(surface), _) => {
            let parts: Vec<&str> = surface.split(';').map(str::trim).collect();
            if parts.iter().any(|p| UNPAVED_SURFACES.contains(p)) {
                Surface::Unpaved
            } else if parts.iter().any(|p| COBBLED_SURFACES.contains(p)) {
                Surface::Cobbled
            } else if parts.iter().any(|p| PAVED_SURFACES.contains(p)) {
                Surface::Paved
            } else {
                Surface::Unknown
            }
        }
        (None, Some("grade1")) => Surface::Paved,
        (None, Some("grade2" | "grade3" | "grade4" | "grade5")) => Surface::Unpaved,
        (None, _) if UNPAVED_BY_DEFAULT.contains(&way.highway.as_str()) => Surface::Unpaved,
        (None, _) => Surface::Paved,
    }
}

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

/// Whether a section is rough to ride ([`surface_of`]: unpaved or cobbled).
pub fn is_rough(way: &WaySection) -> bool {
    surface_of(way).is_rough()
}

/// What a day rides on, metres: unpaved, cobbled, and busy road (main and secondary roads
/// without cycle infrastructure, every metre of them: the traffic alerts then count only
/// the long stretches).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RoadMix {
    pub unpaved_m: f64,
    pub cobbled_m: f64,
    pub busy_m: f64,
}

/// The day's [`RoadMix`], from the stretches it rides ([`Corridor::ways`]).
pub fn road_mix(corridor: &Corridor) -> RoadMix {
    let mut mix = RoadMix::default();
    for way in corridor
        .ways
        .iter()
        .filter(|w| w.length_m.is_finite() && w.length_m > 0.0)
    {
        match surface_of(way) {
            Surface::Unpaved => mix.unpaved_m += way.length_m,
            Surface::Cobbled => mix.cobbled_m += way.length_m,
            Surface::Paved | Surface::Unknown => {}
        }
        if is_busy_road(way) {
            mix.busy_m += way.length_m;
        }
    }
    mix
}

/// Rough stretches listed in a `surface_rough` alert, the longest.
pub const ROUGH_SECTIONS_LISTED: usize = 10;

/// `surface_rough`: the day rides [`ROUGH_SURFACE_M`] or more on rough surface (unpaved or
/// cobbled, a day total), at the day's start. Its `sections` are the stretches in order
/// along the day (consecutive rough ways of one kind are one stretch), the
/// [`ROUGH_SECTIONS_LISTED`] longest, each with its km, length, kind and middle.
pub fn surface_rough(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let mix = road_mix(corridor);
    let total = mix.unpaved_m + mix.cobbled_m;
    if total < ROUGH_SURFACE_M {
        return None;
    }
    // (kind, from, length, end, centroid·length sums)
    type Stretch = (Surface, f64, f64, f64, (f64, f64));
    let mut stretches: Vec<Stretch> = Vec::new();
    for way in corridor
        .ways
        .iter()
        .filter(|w| w.length_m.is_finite() && w.length_m > 0.0)
    {
        let kind = surface_of(way);
        if !kind.is_rough() {
            continue;
        }
        let weighted = (way.centroid.0 * way.length_m, way.centroid.1 * way.length_m);
        match stretches.last_mut() {
            Some(last) if last.0 == kind && (way.from_m - last.3).abs() <= STRETCH_JOIN_M => {
                last.2 += way.length_m;
                last.3 = way.from_m + way.length_m;
                last.4 = (last.4.0 + weighted.0, last.4.1 + weighted.1);
            }
            _ => stretches.push((
                kind,
                way.from_m,
                way.length_m,
                way.from_m + way.length_m,
                weighted,
            )),
        }
    }
    let count = stretches.len();
    let mut longest: Vec<usize> = (0..count).collect();
    longest.sort_by(|&a, &b| stretches[b].2.total_cmp(&stretches[a].2));
    longest.truncate(ROUGH_SECTIONS_LISTED);
    longest.sort_unstable();
    let sections: Vec<Value> = longest
        .iter()
        .map(|&i| {
            let (kind, from, length, _, sum) = stretches[i];
            json!({
                "km": round1(from / 1000.0),
                "lengthM": length.round(),
                "surface": if kind == Surface::Unpaved { "unpaved" } else { "cobbled" },
                "lat": sum.0 / length,
                "lon": sum.1 / length,
            })
        })
        .collect();
    Some(alert(
        SURFACE_ROUGH,
        Severity::Warning,
        GROUP_ROAD,
        format!(
            "Day {} has {} m of rough surface ({} m unpaved, {} m cobbled).",
            stage.day_number,
            int_sep(total),
            int_sep(mix.unpaved_m),
            int_sep(mix.cobbled_m),
        ),
        json!({
            "lengthM": total.round(), "unpavedM": mix.unpaved_m.round(),
            "cobbledM": mix.cobbled_m.round(), "thresholdM": ROUGH_SURFACE_M,
            "sectionCount": count, "sections": sections,
        }),
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

/// Two ridden ways this close along the day are one stretch, metres (a junction's few
/// metres matched to the crossing street do not cut a main road in two).
const STRETCH_JOIN_M: f64 = 30.0;

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

/// Resupply points within the food reach of the line, with their km from the start (at
/// each pass).
fn resupply_on_line<'c>(
    stage: &OsmStage<'_>,
    corridor: &'c Corridor,
    reach: &Reach,
) -> Vec<(&'c Feature, f64)> {
    passes_of(stage, corridor, reach.food_m, |f| f.kind.is_resupply())
}

/// `resupply_none_on_stage`: a day of [`RESUPPLY_MIN_DAY_KM`] or more with no food on the way.
pub fn resupply_none_on_stage(
    stage: &OsmStage<'_>,
    corridor: &Corridor,
    reach: &Reach,
) -> Option<Alert> {
    if stage.distance_km.is_nan()
        || stage.distance_km < RESUPPLY_MIN_DAY_KM
        || !resupply_on_line(stage, corridor, reach).is_empty()
    {
        return None;
    }
    Some(alert(
        RESUPPLY_NONE_ON_STAGE,
        Severity::Nudge,
        GROUP_POIS,
        format!(
            "Day {}: no food shop or restaurant within {} m of the route over {} km.",
            stage.day_number,
            int_sep(reach.food_m),
            one_decimal(stage.distance_km)
        ),
        json!({ "stage": stage.day_number, "distanceKm": round1(stage.distance_km), "reachM": reach.food_m.round() }),
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
    reach: &Reach,
) -> Option<Alert> {
    let points = resupply_on_line(stage, corridor, reach);
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
pub fn water_point_gap(stage: &OsmStage<'_>, corridor: &Corridor, reach: &Reach) -> Option<Alert> {
    let length = stage
        .points
        .last()
        .map_or(stage.distance_km, |p| p.distance_m / 1000.0);
    if !length.is_finite() {
        return None;
    }
    let water = passes_of(stage, corridor, reach.water_m, |f| {
        f.kind == FeatureKind::DrinkingWater
    });
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
            "Day {}: more than {} km without drinking water within {} m of the route.",
            stage.day_number,
            int_sep(WATER_GAP_KM),
            int_sep(reach.water_m)
        ),
        json!({ "stage": stage.day_number, "thresholdKm": WATER_GAP_KM, "reachM": reach.water_m.round(), "gaps": gaps, "actionPoint": action }),
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
    let line = line_of(stage.points);
    corridor
        .points
        .iter()
        .filter(|f| matches!(f.kind, FeatureKind::Cultural(_)))
        .filter_map(|f| {
            line.nearest((f.lat, f.lon))
                .map(|pass| (f, pass.along_m / 1000.0, pass.off_m))
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

/// `ferry_crossing`: the day rides [`FERRY_RIDDEN_M`] or more on a ferry line (the match of
/// the day to what it rides, [`crate::osm::corridors`]: a ferry passing beside the route, or
/// under a bridge it takes, is not ridden); one alert per distinct name (per crossing when
/// unnamed), in the middle of the crossing.
pub fn ferry_crossing(stage: &OsmStage<'_>, corridor: &Corridor) -> Vec<Alert> {
    let mut out: Vec<Alert> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for ferry in &corridor.ferries {
        // NaN fails the comparison too: an unmeasured ride is not a ferry taken.
        if ferry.length_m.is_nan() || ferry.length_m < FERRY_RIDDEN_M {
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
                "Day {} takes a ferry at km {}: check its timetable.",
                stage.day_number,
                one_decimal(ferry.from_m / 1000.0)
            ),
            json!({
                "stage": stage.day_number, "name": ferry.name,
                "km": round1(ferry.from_m / 1000.0), "lengthM": ferry.length_m.round(),
            }),
            Some(ferry.at),
        ));
    }
    out
}

/// `ford_crossing_dry`: a ford within [`FORD_RADIUS_M`] of the day's line; deduplicated by
/// name (by position when unnamed).
pub fn ford_crossing_dry(stage: &OsmStage<'_>, corridor: &Corridor) -> Vec<Alert> {
    let mut out = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let line = line_of(stage.points);
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
