//! Distances between the day's line and what was found near it: the day's line as the
//! shared [`Polyline`] (the nearest point, every pass), and a segment distance for the rest.
//!
//! A flat (equirectangular) projection around each segment is plenty for the 25 m – 15 km
//! radii of the rules: its error at these scales is centimetres, far below OSM's precision.

pub(crate) use etappe_geo::Polyline;
pub(crate) use etappe_geo::polyline::METRES_PER_DEGREE;
use etappe_geo::polyline::flat_point_segment;

use crate::geo::haversine_m;
use crate::model::StagePoint;

/// Distance from `p` to the segment `a`–`b`, metres, and the closest point on it.
pub(crate) fn point_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> (f64, (f64, f64)) {
    let cos = p.0.to_radians().cos();
    let (_, t) = flat_point_segment(p, a, b, cos);
    let closest = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    (haversine_m(p, closest), closest)
}

/// A day's line, measured as the day measures it (metres from its start).
pub(crate) fn line_of(points: &[StagePoint]) -> Polyline {
    Polyline::new(
        points.iter().map(|p| (p.lat, p.lon)).collect(),
        points.iter().map(|p| p.distance_m).collect(),
    )
}

/// The middle geometry vertex of the day (the start of a rest day without points).
pub(crate) fn midpoint(line: &[StagePoint], start: (f64, f64)) -> (f64, f64) {
    line.get(line.len() / 2).map_or(start, |v| (v.lat, v.lon))
}

/// The point `km` from the day's start (the last vertex at or before it).
pub(crate) fn at_km(line: &[StagePoint], km: f64) -> Option<(f64, f64)> {
    let metres = km * 1000.0;
    line.iter()
        .take_while(|v| v.distance_m <= metres)
        .last()
        .or(line.first())
        .map(|v| (v.lat, v.lon))
}
