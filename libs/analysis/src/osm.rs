//! The OpenStreetMap rules: what was found along each day (a [`Corridor`], filled by a local
//! index or by Overpass — this module does not care which) turned into alerts, plus the
//! "found along the day" list of the stage detail.
//!
//! Pure like the rest of the crate. The thresholds are the upstream planner's (constants in
//! [`rules`]), with three of its gaps fixed: `trunk` counts as a main road, `cycleway=no`
//! is no infrastructure, and the 100 cultural suggestions are a cap on the whole trip.
//!
//! Groups are units of replacement: [`analyse_osm`] runs every group for every day, so a
//! caller replaces each group listed in [`OSM_GROUPS`] with what came back — a day with no
//! alert of a group means "ran, found nothing", while a group the caller never ran (no
//! source configured) stays absent. Surface and traffic are the `road` group rather than
//! `terrain`: the geometry rules own `terrain` and run on every analysis, the OSM ones only
//! when a source answers, so sharing a group would let one erase the other.
//!
//! A place OpenStreetMap maps several times (a fuel station's pumps, a shop as building and
//! node) is read once: [`analyse_osm`], [`found_along`] and the charger action point merge
//! a day's points with [`distinct_places`] first. The single rules in [`rules`] read the
//! corridor they are given as it is.
//!
//! Rest days skip the feature rules except health and accommodation (a rest day still
//! sleeps somewhere and may need a pharmacy).

mod distribute;
mod found;
mod geom;
pub mod matching;
mod model;
mod places;
mod plan;
pub mod reach;
pub mod rules;

#[cfg(test)]
mod tests;

pub use distribute::{POINT_REACH_M, distribute};
pub use found::{Found, FoundCategory, found_along};
pub use model::{
    AccommodationKind, Corridor, CulturalKind, FEATURE_KEYS, FERRY_KEYS, Feature, FeatureKind,
    FerryLine, FerryRide, FoodKind, HealthKind, OsmStage, WaySection,
};
pub use places::{SAME_PLACE_M, distinct_places};
pub use plan::{
    ON_WAY_M, PlaceClass, PlaceSearch, RawWay, RouteFeatures, SearchPlan, THINNING_TOLERANCE_M,
    WAY_BUFFER_M, corridors, thin,
};
pub use reach::{PASS_APART_M, Reach};

use crate::catalogue::*;
use crate::model::Alert;

/// The groups [`analyse_osm`] produces, each replaced as a whole.
pub const OSM_GROUPS: &[&str] = &[
    GROUP_ROAD,
    GROUP_POIS,
    GROUP_ACCOMMODATIONS,
    GROUP_BIKE_SHOP,
    GROUP_WATER_POINT,
    GROUP_HEALTH_SERVICE,
    GROUP_CULTURAL_POI,
    GROUP_RAILWAY_STATION,
    GROUP_FERRY,
    GROUP_FORD,
];

/// The rider's settings the passage times need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OsmSettings {
    /// Local departure hour (clamped to 23).
    pub departure_hour: u8,
    /// Average moving speed, km/h (at least 5 once slowed by the climbing).
    pub average_speed_kmh: f64,
    /// How far off the route each kind of place is still on the way.
    pub reach: Reach,
}

/// The OpenStreetMap alerts of every day: `corridors[i]` is what was found around
/// `stages[i]` (a missing corridor reads as empty). The trip's stage count (rest days
/// included) decides whether the bike-shop rule runs.
pub fn analyse_osm(
    stages: &[OsmStage<'_>],
    corridors: &[Corridor],
    settings: &OsmSettings,
) -> Vec<Vec<Alert>> {
    let empty = Corridor::default();
    // Every rule reads each place once (see `places`): six pumps are one fuel station.
    let distinct: Vec<Corridor> = stages
        .iter()
        .enumerate()
        .map(|(i, stage)| {
            places::distinct_corridor(corridors.get(i).unwrap_or(&empty), stage.points)
        })
        .collect();
    let corridor = |i: usize| distinct.get(i).unwrap_or(&empty);
    let mut cultural = Vec::new();
    for (i, stage) in stages.iter().enumerate() {
        cultural.extend(rules::cultural_candidates(i, stage, corridor(i)));
    }
    let mut cultural = rules::cultural_suggestions(stages, cultural);

    let mut out = Vec::with_capacity(stages.len());
    for (i, stage) in stages.iter().enumerate() {
        let c = corridor(i);
        let mut alerts: Vec<Alert> = Vec::new();
        if !stage.is_rest_day {
            alerts.extend(rules::surface_rough(stage, c));
            alerts.extend(rules::traffic_main_road(stage, c));
            alerts.extend(rules::traffic_secondary_road_fast(stage, c));
            alerts.extend(rules::traffic_secondary_road_slow(stage, c));
            alerts.extend(rules::resupply_none_on_stage(stage, c, &settings.reach));
            alerts.extend(rules::resupply_closed_at_passage(
                stage,
                c,
                settings.departure_hour,
                settings.average_speed_kmh,
                &settings.reach,
            ));
            alerts.extend(rules::bike_shop_none_nearby(stage, c, stages.len()));
            alerts.extend(rules::water_point_gap(stage, c, &settings.reach));
            alerts.extend(rules::railway_station_none_nearby(stage, c));
            alerts.extend(rules::ferry_crossing(stage, c));
            alerts.extend(rules::ford_crossing_dry(stage, c));
        }
        alerts.extend(rules::accommodation_seasonal_closure(stage, c));
        alerts.extend(rules::health_service_none_nearby(stage, c));
        if let Some(day) = cultural.get_mut(i) {
            alerts.append(day);
        }
        alerts.sort_by_key(|a| CODES.iter().position(|(code, _, _)| *code == a.code));
        out.push(alerts);
    }
    out
}
