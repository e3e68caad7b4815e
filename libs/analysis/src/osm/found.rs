//! What the stage detail lists as found along the day — food, water, bike shops, stations —
//! each with its km from the day's start, so a rider reads "water at km 34 and 61".

use serde::Serialize;

use super::geom::LineIndex;
use super::model::{Corridor, FeatureKind, OsmStage};
use super::places::distinct_places;
use super::rules::{CORRIDOR_M, STATION_RADIUS_M};
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

/// One thing found along the day.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    pub category: FoundCategory,
    /// The OSM type (`bakery`, `repair_station`…), for an icon.
    pub kind: &'static str,
    /// Third-party name, as data.
    pub name: Option<String>,
    /// Km from the day's start of the nearest route point, one decimal.
    pub km: f64,
    /// How far off the route, metres.
    pub off_route_m: f64,
    pub lat: f64,
    pub lon: f64,
}

/// Food and water, bike shops and repair stations within [`CORRIDOR_M`] of the line,
/// stations within [`STATION_RADIUS_M`], in order along the day (empty on a rest day).
/// Each place once ([`distinct_places`]): the list is read as "what is where", and six
/// pumps at km 15.6 are one fuel station.
pub fn found_along(stage: &OsmStage<'_>, corridor: &Corridor) -> Vec<Found> {
    let line = LineIndex::new(stage.points);
    let mut out: Vec<Found> = distinct_places(&corridor.points, stage.points)
        .iter()
        .filter_map(|f| {
            let (category, kind, radius) = match f.kind {
                FeatureKind::Food(food) if food.is_resupply() => {
                    (FoundCategory::Resupply, food.as_str(), CORRIDOR_M)
                }
                FeatureKind::DrinkingWater => (FoundCategory::Water, "drinking_water", CORRIDOR_M),
                FeatureKind::BikeShop { repair: true } => {
                    (FoundCategory::BikeShop, "bike_shop_repair", CORRIDOR_M)
                }
                FeatureKind::BikeShop { repair: false } => {
                    (FoundCategory::BikeShop, "bike_shop", CORRIDOR_M)
                }
                FeatureKind::RepairStation => {
                    (FoundCategory::BikeShop, "repair_station", CORRIDOR_M)
                }
                FeatureKind::RailwayStation if f.usage.as_deref() != Some("tourism") => (
                    FoundCategory::RailwayStation,
                    "railway_station",
                    STATION_RADIUS_M,
                ),
                _ => return None,
            };
            let off = line.distance_m((f.lat, f.lon));
            if off.is_nan() || off > radius {
                return None;
            }
            let (km, _) = line.nearest_vertex((f.lat, f.lon))?;
            Some(Found {
                category,
                kind,
                name: f.name.clone(),
                km: round1(km),
                off_route_m: off.round(),
                lat: f.lat,
                lon: f.lon,
            })
        })
        .collect();
    out.sort_by(|a, b| a.km.total_cmp(&b.km));
    out
}
