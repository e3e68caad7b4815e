//! Distances between the day's line and what was found near it.
//!
//! A flat (equirectangular) projection around each segment is plenty for the 25 m – 15 km
//! radii of the rules: its error at these scales is centimetres, far below OSM's precision.

use crate::geo::haversine_m;
use crate::model::StagePoint;

pub(crate) const METRES_PER_DEGREE: f64 = etappe_geo::EARTH_RADIUS_M * std::f64::consts::PI / 180.0;

/// Distance from `p` to the segment `a`–`b`, metres, and the closest point on it.
pub(crate) fn point_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> (f64, (f64, f64)) {
    let cos = p.0.to_radians().cos();
    let (_, closest) = flat_point_segment(p, a, b, cos);
    (haversine_m(p, closest), closest)
}

/// The flat distance from `p` to the segment `a`–`b` on the projection around `p` (`cos`
/// is the cosine of its latitude), metres, and the closest point: for ranking, where the
/// great-circle distance would cost trigonometry at every segment.
fn flat_point_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64), cos: f64) -> (f64, (f64, f64)) {
    let to_xy = |q: (f64, f64)| {
        (
            (q.1 - p.1) * cos * METRES_PER_DEGREE,
            (q.0 - p.0) * METRES_PER_DEGREE,
        )
    };
    let (ax, ay) = to_xy(a);
    let (bx, by) = to_xy(b);
    let (dx, dy) = (bx - ax, by - ay);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        ((-ax * dx - ay * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let closest = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    let (cx, cy) = (ax + dx * t, ay + dy * t);
    ((cx * cx + cy * cy).sqrt(), closest)
}

/// Vertices per block of a [`LineIndex`].
const BLOCK: usize = 64;

/// A day's line cut into blocks of [`BLOCK`] vertices, each with a bounding circle, so the
/// distance from a feature to a line of thousands of points looks at a few blocks only: a
/// block whose circle is farther than the best distance found so far cannot hold a nearer
/// point.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    line: &'a [StagePoint],
    blocks: Vec<Block>,
}

#[derive(Debug)]
struct Block {
    /// First and last vertex (consecutive blocks share one, so every segment is in one).
    first: usize,
    last: usize,
    center: (f64, f64),
    radius_m: f64,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(line: &'a [StagePoint]) -> Self {
        let mut blocks = Vec::with_capacity(line.len() / BLOCK + 1);
        let mut first = 0;
        while first < line.len() {
            let last = (first + BLOCK).min(line.len() - 1);
            let mid = &line[(first + last) / 2];
            let center = (mid.lat, mid.lon);
            let cos = center.0.to_radians().cos();
            let radius_m = line[first..=last]
                .iter()
                .map(|v| flat_m(center, (v.lat, v.lon), cos))
                .filter(|d| d.is_finite())
                .fold(0.0, f64::max);
            blocks.push(Block {
                first,
                last,
                center,
                radius_m,
            });
            if last == line.len() - 1 {
                break;
            }
            first = last;
        }
        Self { line, blocks }
    }

    /// Blocks by their lower bound of distance to `p`, nearest first (a block whose bound
    /// cannot be computed comes first, so it is always looked at).
    fn candidates(&self, p: (f64, f64)) -> Vec<(f64, &Block)> {
        let cos = p.0.to_radians().cos();
        let mut out: Vec<(f64, &Block)> = self
            .blocks
            .iter()
            .map(|b| {
                let lower = flat_m(p, b.center, cos) - b.radius_m;
                (
                    if lower.is_finite() {
                        lower
                    } else {
                        f64::NEG_INFINITY
                    },
                    b,
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// Distance from `p` to the line, metres (infinite for an empty line).
    ///
    /// Called for every feature and every few metres of every way near the route, so it
    /// avoids the costly parts: segments are compared on the flat projection around `p` (the
    /// great-circle distance is taken once, to the closest point found), and the blocks are
    /// not sorted — the block with the nearest bound is read first, then any other whose
    /// bound can still beat it.
    pub(crate) fn distance_m(&self, p: (f64, f64)) -> f64 {
        if let [only] = self.line {
            let d = haversine_m(p, (only.lat, only.lon));
            return if d.is_finite() { d } else { f64::INFINITY };
        }
        let cos = p.0.to_radians().cos();
        let lower = |b: &Block| {
            let lower = flat_m(p, b.center, cos) - b.radius_m;
            if lower.is_finite() {
                lower
            } else {
                f64::NEG_INFINITY
            }
        };
        let Some(first) = self
            .blocks
            .iter()
            .enumerate()
            .min_by(|a, b| lower(a.1).total_cmp(&lower(b.1)))
            .map(|(i, _)| i)
        else {
            return f64::INFINITY;
        };
        let mut best: Option<(f64, (f64, f64))> = None;
        let read = |block: &Block, best: &mut Option<(f64, (f64, f64))>| {
            for w in self.line[block.first..=block.last].windows(2) {
                let (d, at) =
                    flat_point_segment(p, (w[0].lat, w[0].lon), (w[1].lat, w[1].lon), cos);
                if d.is_finite() && best.is_none_or(|(b, _)| d < b) {
                    *best = Some((d, at));
                }
            }
        };
        read(&self.blocks[first], &mut best);
        for (i, block) in self.blocks.iter().enumerate() {
            if i != first && best.is_none_or(|(b, _)| lower(block) <= slack(b)) {
                read(block, &mut best);
            }
        }
        match best {
            Some((_, at)) => {
                let d = haversine_m(p, at);
                if d.is_finite() { d } else { f64::INFINITY }
            }
            None => f64::INFINITY,
        }
    }

    /// The vertex nearest to `p`: (its distance from the day's start in km, the distance to
    /// it in metres).
    pub(crate) fn nearest_vertex(&self, p: (f64, f64)) -> Option<(f64, f64)> {
        let cos = p.0.to_radians().cos();
        let mut best: Option<(&StagePoint, f64)> = None;
        for (lower, block) in self.candidates(p) {
            if best.is_some_and(|(_, d)| lower > slack(d)) {
                break;
            }
            for v in &self.line[block.first..=block.last] {
                let d = flat_m(p, (v.lat, v.lon), cos);
                if d.is_finite() && v.distance_m.is_finite() && best.is_none_or(|(_, b)| d < b) {
                    best = Some((v, d));
                }
            }
        }
        best.map(|(v, _)| (v.distance_m / 1000.0, haversine_m(p, (v.lat, v.lon))))
    }
}

/// Room for the flat bounds against great-circle distances (well under 1 % at these
/// scales, plus a metre for rounding).
fn slack(d: f64) -> f64 {
    d * 1.01 + 1.0
}

/// Flat distance in metres between `p` and `q`, `cos` being the cosine of `p`'s latitude:
/// only used to rank and bound, the reported distances are great-circle ones.
fn flat_m(p: (f64, f64), q: (f64, f64), cos: f64) -> f64 {
    let dy = (q.0 - p.0) * METRES_PER_DEGREE;
    let dx = (q.1 - p.1) * cos * METRES_PER_DEGREE;
    (dx * dx + dy * dy).sqrt()
}

/// Shortest distance between a ferry line and the day's line, metres, with the ferry's
/// point closest to the day.
pub(crate) fn line_to_line(ferry: &[(f64, f64)], line: &[StagePoint]) -> Option<(f64, (f64, f64))> {
    let mut best: Option<(f64, (f64, f64))> = None;
    let mut consider = |d: f64, at: (f64, f64)| {
        if d.is_finite() && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, at));
        }
    };
    // Ferry vertices against the day's segments…
    let index = LineIndex::new(line);
    for &f in ferry {
        consider(index.distance_m(f), f);
    }
    // …and the day's vertices against the ferry's segments: together they find the minimum
    // of two polylines that do not cross; a crossing is caught by the intersection test.
    for v in line {
        for w in ferry.windows(2) {
            let (d, at) = point_segment((v.lat, v.lon), w[0], w[1]);
            consider(d, at);
        }
    }
    for s in line.windows(2) {
        for w in ferry.windows(2) {
            if let Some(at) = intersection((s[0].lat, s[0].lon), (s[1].lat, s[1].lon), w[0], w[1]) {
                consider(0.0, at);
            }
        }
    }
    best
}

/// Where two segments cross, in plain lat/lon (fine for short segments).
fn intersection(a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)) -> Option<(f64, f64)> {
    let r = (b.0 - a.0, b.1 - a.1);
    let s = (d.0 - c.0, d.1 - c.1);
    let denom = r.0 * s.1 - r.1 * s.0;
    if denom == 0.0 || !denom.is_finite() {
        return None;
    }
    let qp = (c.0 - a.0, c.1 - a.1);
    let t = (qp.0 * s.1 - qp.1 * s.0) / denom;
    let u = (qp.0 * r.1 - qp.1 * r.0) / denom;
    ((0.0..=1.0).contains(&t) && (0.0..=1.0).contains(&u)).then_some((a.0 + r.0 * t, a.1 + r.1 * t))
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
