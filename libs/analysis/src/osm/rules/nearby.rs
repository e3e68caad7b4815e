//! What is near a day: cultural suggestions, a station home, health care, ferries and fords
//! on the line, and the nearest charger for an e-bike.

use serde_json::{Value, json};

use super::*;
use crate::catalogue::*;
use crate::format::{int_sep, one_decimal, round1};
use crate::model::{Alert, Severity};
use crate::osm::geom::{at_km, line_of, midpoint};
use crate::osm::model::{Corridor, Feature, FeatureKind, OsmStage};
use crate::osm::places::distinct_places;
use crate::rules::alert;

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
