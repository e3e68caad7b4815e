//! What the stage detail lists as found along the day — food, water, bike shops, stations —
//! each where the rider leaves the route for it (the km of the route's point nearest it)
//! and how far off the route it lies, so a rider reads "water at km 34, 120 m off".
//!
//! A place is listed only within its kind's [`Reach`], and once per pass of the route: an
//! out-and-back passes the same tap going and coming back, and lists it at both kms.

use serde::Serialize;

use super::geom::line_of;
use super::model::{Corridor, Feature, FeatureKind, OsmStage};
use super::places::distinct_places;
use super::reach::{PASS_APART_M, Reach};
use crate::format::round1;

/// The families listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundCategory {
    Resupply,
    Water,
    BikeShop,
    RailwayStation,
}

/// One thing found along the day (at one pass of the route).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    pub category: FoundCategory,
    /// The OSM type (`bakery`, `repair_station`…), for an icon.
    pub kind: &'static str,
    /// Third-party name, as data.
    pub name: Option<String>,
    /// Km from the day's start of the route's point nearest the place (where the rider
    /// leaves the route for it), one decimal.
    pub km: f64,
    /// How far off the route, metres (to that point).
    pub off_route_m: f64,
    pub lat: f64,
    pub lon: f64,
}

/// The category, OSM type and reach of a listed kind; `None` for kinds not listed.
fn listed(f: &Feature, reach: &Reach) -> Option<(FoundCategory, &'static str, f64)> {
    Some(match f.kind {
        FeatureKind::Food(food) if food.is_resupply() => {
            (FoundCategory::Resupply, food.as_str(), reach.food_m)
        }
        FeatureKind::DrinkingWater => (FoundCategory::Water, "drinking_water", reach.water_m),
        FeatureKind::BikeShop { repair: true } => (
            FoundCategory::BikeShop,
            "bike_shop_repair",
            reach.bike_shop_m,
        ),
        FeatureKind::BikeShop { repair: false } => {
            (FoundCategory::BikeShop, "bike_shop", reach.bike_shop_m)
        }
        FeatureKind::RepairStation => (FoundCategory::BikeShop, "repair_station", reach.water_m),
        FeatureKind::RailwayStation if f.usage.as_deref() != Some("tourism") => (
            FoundCategory::RailwayStation,
            "railway_station",
            reach.station_m,
        ),
        _ => return None,
    })
}

/// Food and water, bike shops and repair stands, stations, each within its kind's reach of
/// the line and at each pass, in order along the day (empty on a rest day). Each place once
/// per pass ([`distinct_places`]): the list is read as "what is where", and six pumps at
/// km 15.6 are one fuel station.
pub fn found_along(stage: &OsmStage<'_>, corridor: &Corridor, reach: &Reach) -> Vec<Found> {
    if stage.is_rest_day {
        return Vec::new();
    }
    let line = line_of(stage.points);
    let mut out: Vec<Found> = distinct_places(&corridor.points, stage.points)
        .iter()
        .filter_map(|f| listed(f, reach).map(|l| (f, l)))
        .flat_map(|(f, (category, kind, radius))| {
            line.passes((f.lat, f.lon), radius, PASS_APART_M)
                .into_iter()
                .map(move |pass| Found {
                    category,
                    kind,
                    name: f.name.clone(),
                    km: round1(pass.along_m / 1000.0),
                    off_route_m: pass.off_m.round(),
                    lat: f.lat,
                    lon: f.lon,
                })
        })
        .collect();
    out.sort_by(|a, b| {
        a.km.total_cmp(&b.km)
            .then(a.off_route_m.total_cmp(&b.off_route_m))
    });
    out
}

/// Where along the day the places of `kind` are within `reach_m`: (place, km) at each pass.
pub(crate) fn passes_of<'c>(
    stage: &OsmStage<'_>,
    corridor: &'c Corridor,
    reach_m: f64,
    kind: impl Fn(&Feature) -> bool,
) -> Vec<(&'c Feature, f64)> {
    let line = line_of(stage.points);
    corridor
        .points
        .iter()
        .filter(|f| kind(f))
        .flat_map(|f| {
            line.passes((f.lat, f.lon), reach_m, PASS_APART_M)
                .into_iter()
                .map(move |p| (f, p.along_m / 1000.0))
        })
        .collect()
}
