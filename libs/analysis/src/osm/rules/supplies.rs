//! What a rider needs on the way: repairs, food (and whether it is open when the rider
//! passes), water, and beds open in the trip's season.

use chrono::{NaiveDateTime, NaiveTime, TimeDelta};
use opening_hours::{Context, OpeningHours, RuleKind, localization::Country};
use serde_json::{Value, json};

use super::*;
use crate::catalogue::*;
use crate::format::{int_sep, one_decimal, round1};
use crate::geo::haversine_m;
use crate::model::{Alert, Severity};
use crate::osm::found::passes_of;
use crate::osm::geom::midpoint;
use crate::osm::model::{Corridor, Feature, FeatureKind, OsmStage};
use crate::osm::reach::Reach;
use crate::rules::alert;

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
