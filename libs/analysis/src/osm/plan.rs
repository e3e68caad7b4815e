//! Where a feature source must look, derived once from the days so that the local index and
//! Overpass search the same places with the same radii, and how what they return becomes
//! one [`Corridor`] per day.
//!
//! A source answers a [`SearchPlan`] with [`RouteFeatures`]: every point it holds near the
//! thinned day lines or the plan's places, every road way near the lines with its whole
//! geometry, and the ferry lines. [`corridors`] then hands the points to the days
//! ([`super::distribute()`]) and clips the ways to each day's 20 m buffer on the
//! full-resolution line, here, so both sources clip alike.

use super::distribute::distribute;
use super::geom::{METRES_PER_DEGREE, midpoint};
use super::matching;
use super::model::{Corridor, Feature, FeatureKind, FerryLine, FerryRide, OsmStage, WaySection};
use super::rules::{
    ACCOMMODATION_RADIUS_M, CORRIDOR_M, FERRY_RADIUS_M, HEALTH_RADIUS_M, STATION_RADIUS_M,
};
use crate::geo::haversine_m;

/// Road ways are searched this far from a day's line, metres: a day is matched to a way
/// within [`matching::MATCH_RADIUS_M`] of it.
pub const WAY_BUFFER_M: f64 = matching::MATCH_RADIUS_M;
/// How far a thinned line may stray from the real one, metres; every search radius is grown
/// by it, so thinning never loses what the full line would find.
pub const THINNING_TOLERANCE_M: f64 = 25.0;

/// The point families searched around a place rather than along the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaceClass {
    /// Pharmacies, hospitals, clinics around a day's midpoint (or a rest day's town).
    Health,
    /// Railway stations around a day's start and end.
    RailwayStation,
    /// Places to sleep around a day's end.
    Accommodation,
}

impl PlaceClass {
    /// Whether a kind of feature belongs to this class.
    pub fn contains(self, kind: FeatureKind) -> bool {
        match self {
            Self::Health => matches!(kind, FeatureKind::Health(_)),
            Self::RailwayStation => kind == FeatureKind::RailwayStation,
            Self::Accommodation => matches!(kind, FeatureKind::Accommodation(_)),
        }
    }
}

/// One search around a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaceSearch {
    pub class: PlaceClass,
    /// (lat, lon).
    pub at: (f64, f64),
    pub radius_m: f64,
}

/// What to ask a feature source for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchPlan {
    /// Each riding day's line, thinned to [`THINNING_TOLERANCE_M`], as (lat, lon); empty
    /// for a rest day. Same order as the days.
    pub lines: Vec<Vec<(f64, f64)>>,
    /// Every kind of point within this of a line (water, food, bike shops and repair
    /// stations, cultural points, fords, chargers; the place classes too), metres.
    pub line_radius_m: f64,
    /// Road ways (`highway=*`) within this of a line, with their geometry, metres.
    pub way_radius_m: f64,
    /// Ferry lines (`route=ferry`) within this of a line, with their geometry, metres.
    pub ferry_radius_m: f64,
    /// Searches around points, for the families whose rules measure from a place.
    pub places: Vec<PlaceSearch>,
}

impl SearchPlan {
    /// The plan for these days: the rules' own radii, grown by the thinning tolerance.
    pub fn for_stages(stages: &[OsmStage<'_>]) -> Self {
        let grow = THINNING_TOLERANCE_M;
        let mut places = Vec::new();
        let mut lines = Vec::with_capacity(stages.len());
        for stage in stages {
            let line: Vec<(f64, f64)> = stage
                .points
                .iter()
                .map(|p| (p.lat, p.lon))
                .filter(|(lat, lon)| lat.is_finite() && lon.is_finite())
                .collect();
            let middle = midpoint(stage.points, stage.start);
            places.push(PlaceSearch {
                class: PlaceClass::Health,
                at: middle,
                radius_m: HEALTH_RADIUS_M,
            });
            if stage.is_rest_day {
                places.push(PlaceSearch {
                    class: PlaceClass::Accommodation,
                    at: stage.start,
                    radius_m: ACCOMMODATION_RADIUS_M,
                });
            } else {
                for at in [stage.start, stage.end] {
                    places.push(PlaceSearch {
                        class: PlaceClass::RailwayStation,
                        at,
                        radius_m: STATION_RADIUS_M,
                    });
                }
                places.push(PlaceSearch {
                    class: PlaceClass::Accommodation,
                    at: stage.end,
                    radius_m: ACCOMMODATION_RADIUS_M,
                });
            }
            lines.push(thin(&line, THINNING_TOLERANCE_M));
        }
        places.retain(|p| p.at.0.is_finite() && p.at.1.is_finite());
        Self {
            lines,
            line_radius_m: CORRIDOR_M + grow,
            way_radius_m: WAY_BUFFER_M + grow,
            ferry_radius_m: FERRY_RADIUS_M + grow,
            places,
        }
    }

    /// Total length of the lines, km (for request budgets and figures).
    pub fn length_km(&self) -> f64 {
        self.lines
            .iter()
            .flat_map(|l| l.windows(2))
            .map(|w| haversine_m(w[0], w[1]))
            .filter(|d| d.is_finite())
            .sum::<f64>()
            / 1000.0
    }
}

/// A road way as a source holds it: its tags (in a [`WaySection`] whose length and
/// centroid are not yet known) and its whole geometry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawWay {
    pub tags: WaySection,
    /// (lat, lon) vertices.
    pub points: Vec<(f64, f64)>,
}

/// What a source found for a [`SearchPlan`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RouteFeatures {
    pub points: Vec<Feature>,
    pub ways: Vec<RawWay>,
    pub ferries: Vec<FerryLine>,
    /// Days (0-based, plan order) the source does not cover: a local index whose extract
    /// ends before the day does. Their corridors are empty and must not be read as "found
    /// nothing".
    pub uncovered_days: Vec<usize>,
    /// Requests the source made (0 for the local index), for figures and logs.
    pub requests: u32,
}

/// One corridor per day (same order as `stages`): the points handed out by [`distribute`],
/// and the stretches the day rides on road ways and ferries, matched on the day's
/// full-resolution line ([`matching::ride`]): each metre of the day on at most one way.
/// A ford counts for a day only on a way it rides (see [`on_a_ridden_way`]).
pub fn corridors(stages: &[OsmStage<'_>], found: &RouteFeatures) -> Vec<Corridor> {
    let mut out = distribute(stages, &found.points);
    for (stage, corridor) in stages.iter().zip(out.iter_mut()) {
        if stage.is_rest_day || stage.points.len() < 2 {
            continue;
        }
        let bbox =
            Bounds::of(stage.points.iter().map(|p| (p.lat, p.lon))).grown(matching::MATCH_RADIUS_M);
        let near = |points: &[(f64, f64)]| bbox.overlaps(&Bounds::of(points.iter().copied()));
        let roads: Vec<&RawWay> = found.ways.iter().filter(|w| near(&w.points)).collect();
        let ferries: Vec<&FerryLine> = found.ferries.iter().filter(|f| near(&f.points)).collect();
        let lines: Vec<&[(f64, f64)]> = roads
            .iter()
            .map(|w| w.points.as_slice())
            .chain(ferries.iter().map(|f| f.points.as_slice()))
            .collect();
        let mut ridden_roads: Vec<usize> = Vec::new();
        for run in matching::ride(stage.points, &lines) {
            if let Some(way) = roads.get(run.line) {
                corridor.ways.push(WaySection {
                    length_m: run.length_m,
                    centroid: run.centroid,
                    from_m: run.from_m,
                    ..way.tags.clone()
                });
                ridden_roads.push(run.line);
            } else if let Some(ferry) = ferries.get(run.line - roads.len()) {
                corridor.ferries.push(FerryRide {
                    name: ferry.name.clone(),
                    length_m: run.length_m,
                    from_m: run.from_m,
                    at: run.centroid,
                });
            }
        }
        ridden_roads.sort_unstable();
        ridden_roads.dedup();
        let ridden: Vec<&[(f64, f64)]> = ridden_roads
            .iter()
            .map(|&i| roads[i].points.as_slice())
            .collect();
        corridor
            .points
            .retain(|f| f.kind != FeatureKind::Ford || on_a_ridden_way((f.lat, f.lon), &ridden));
    }
    out
}

/// A ford is a node of the way that crosses the water (or that way itself, given at its
/// middle): it lies on the way, to [`ON_WAY_M`]. One on a street beside the route or on a
/// path it crosses is not on a way the day rides.
pub const ON_WAY_M: f64 = 3.0;

fn on_a_ridden_way(p: (f64, f64), ridden: &[&[(f64, f64)]]) -> bool {
    ridden.iter().any(|way| {
        way.windows(2)
            .any(|w| super::geom::point_segment(p, w[0], w[1]).0 <= ON_WAY_M)
            || way.first().is_some_and(|v| haversine_m(p, *v) <= ON_WAY_M)
    })
}

/// Douglas–Peucker on a flat projection: keeps the ends and every vertex farther than
/// `tolerance_m` from the thinned line, so no point of the line is farther than that from
/// what remains.
pub fn thin(line: &[(f64, f64)], tolerance_m: f64) -> Vec<(f64, f64)> {
    if line.len() <= 2 {
        return line.to_vec();
    }
    let mut keep = vec![false; line.len()];
    keep[0] = true;
    keep[line.len() - 1] = true;
    let mut stack = vec![(0, line.len() - 1)];
    while let Some((first, last)) = stack.pop() {
        let mut worst = (0.0, first);
        for (i, &p) in line.iter().enumerate().take(last).skip(first + 1) {
            let d = super::geom::point_segment(p, line[first], line[last]).0;
            if d > worst.0 {
                worst = (d, i);
            }
        }
        if worst.0 > tolerance_m {
            keep[worst.1] = true;
            stack.push((first, worst.1));
            stack.push((worst.1, last));
        }
    }
    line.iter()
        .zip(keep)
        .filter_map(|(p, k)| k.then_some(*p))
        .collect()
}

/// A latitude/longitude box.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    south: f64,
    north: f64,
    west: f64,
    east: f64,
}

impl Bounds {
    fn of(points: impl Iterator<Item = (f64, f64)>) -> Self {
        let mut b = Self {
            south: f64::INFINITY,
            north: f64::NEG_INFINITY,
            west: f64::INFINITY,
            east: f64::NEG_INFINITY,
        };
        for (lat, lon) in points.filter(|(lat, lon)| lat.is_finite() && lon.is_finite()) {
            b.south = b.south.min(lat);
            b.north = b.north.max(lat);
            b.west = b.west.min(lon);
            b.east = b.east.max(lon);
        }
        b
    }

    fn grown(self, margin_m: f64) -> Self {
        let dlat = margin_m / METRES_PER_DEGREE;
        let cos = self
            .south
            .abs()
            .max(self.north.abs())
            .min(89.0)
            .to_radians()
            .cos();
        let dlon = margin_m / (METRES_PER_DEGREE * cos);
        Self {
            south: self.south - dlat,
            north: self.north + dlat,
            west: self.west - dlon,
            east: self.east + dlon,
        }
    }

    fn overlaps(&self, other: &Self) -> bool {
        self.south <= other.north
            && other.south <= self.north
            && self.west <= other.east
            && other.west <= self.east
    }
}
