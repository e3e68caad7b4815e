//! Hands what an adapter found along the whole route to the days it concerns.
//!
//! A point goes to every day whose line passes within [`POINT_REACH_M`] (the widest rule
//! radius, the health rule's), or, for a rest day, within that of where the rider stays;
//! so a shop where one day ends and the next starts is on both days' lists, as it is on both
//! days' roads; the trip-wide cultural cap keeps such a point once, on the nearer day. Road
//! ways and ferries are not handled here: [`crate::osm::corridors`] matches each day to the
//! ways it rides.

use super::geom::line_of;
use super::model::{Corridor, Feature, OsmStage};
use super::rules::HEALTH_RADIUS_M;
use crate::geo::haversine_m;

/// How far from a day's line a point is kept for it, metres.
pub const POINT_REACH_M: f64 = HEALTH_RADIUS_M;

/// One corridor per day (same order as `stages`), with no ways or ferries yet.
pub fn distribute(stages: &[OsmStage<'_>], points: &[Feature]) -> Vec<Corridor> {
    stages
        .iter()
        .map(|stage| {
            let line = line_of(stage.points);
            let reach = |p: (f64, f64)| {
                let d = if stage.points.is_empty() {
                    haversine_m(stage.start, p)
                } else {
                    line.distance_m(p)
                };
                d <= POINT_REACH_M
            };
            let bbox = BBox::around(stage, POINT_REACH_M);
            Corridor {
                points: points
                    .iter()
                    .filter(|f| bbox.contains((f.lat, f.lon)) && reach((f.lat, f.lon)))
                    .cloned()
                    .collect(),
                ways: Vec::new(),
                ferries: Vec::new(),
            }
        })
        .collect()
}

/// A day's bounding box grown by a margin: a cheap first test before the line distance.
struct BBox {
    south: f64,
    north: f64,
    west: f64,
    east: f64,
}

impl BBox {
    fn around(stage: &OsmStage<'_>, margin_m: f64) -> Self {
        let mut b = Self {
            south: f64::INFINITY,
            north: f64::NEG_INFINITY,
            west: f64::INFINITY,
            east: f64::NEG_INFINITY,
        };
        let all = stage
            .points
            .iter()
            .map(|p| (p.lat, p.lon))
            .chain([stage.start, stage.end]);
        for (lat, lon) in all.filter(|(lat, lon)| lat.is_finite() && lon.is_finite()) {
            b.south = b.south.min(lat);
            b.north = b.north.max(lat);
            b.west = b.west.min(lon);
            b.east = b.east.max(lon);
        }
        let dlat = margin_m / 111_000.0;
        // The widest longitude degree along the box; near the poles, no longitude test.
        let cos = b
            .south
            .abs()
            .max(b.north.abs())
            .min(89.0)
            .to_radians()
            .cos();
        let dlon = if cos > 0.01 {
            margin_m / (111_000.0 * cos)
        } else {
            360.0
        };
        b.south -= dlat * 1.01;
        b.north += dlat * 1.01;
        b.west -= dlon * 1.01;
        b.east += dlon * 1.01;
        b
    }

    fn contains(&self, (lat, lon): (f64, f64)) -> bool {
        // A box across the antimeridian is not split: such a day keeps every point in
        // latitude range, which is only slower.
        let lon_ok = self.east - self.west >= 360.0
            || self.west < -180.0
            || self.east > 180.0
            || (self.west..=self.east).contains(&lon);
        (self.south..=self.north).contains(&lat) && lon_ok
    }
}
