//! A line with the distance ridden along it, and where a point lies beside it: the nearest
//! point of the line, and every *pass* of the line within reach of the point. A route that
//! comes by the same place twice (a lap, an out-and-back, a figure of eight) passes it twice,
//! and a place is reached from either pass: a water tap at km 5 is at km 35 again on the way
//! back, and a hotel on a lap is a bed at every lap.
//!
//! The distance along the line is the caller's (`along_m`), not recomputed: a day measures
//! from its start, a trip from its first point, and a break in a recorded route (a jump the
//! rider does not ride) adds no distance. A segment along which the distance does not grow
//! is such a jump: only its ends belong to the line.
//!
//! Distances to segments are taken on a flat projection around the point (centimetres off
//! at the few kilometres a place lies from a route); the distance reported is the
//! great-circle one to the foot found. The line is cut into blocks of [`BLOCK`] vertices with
//! a bounding circle each, so a point far from most of a 100,000-point route looks at a few
//! blocks only.

use crate::{EARTH_RADIUS_M, haversine_m};

/// Metres per degree of latitude on the sphere of [`EARTH_RADIUS_M`].
pub const METRES_PER_DEGREE: f64 = EARTH_RADIUS_M * std::f64::consts::PI / 180.0;

/// Vertices per block.
const BLOCK: usize = 64;

/// Where a point lies beside a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pass {
    /// Distance along the line to the foot of the point, metres (the caller's measure).
    pub along_m: f64,
    /// Great-circle distance from the point to that foot, metres.
    pub off_m: f64,
    /// The foot: the line's point nearest the point on this pass, (lat, lon).
    pub foot: (f64, f64),
    /// The segment holding the foot (its first vertex's index).
    pub segment: usize,
}

/// A line of (lat, lon) vertices with the distance along it at each.
#[derive(Debug, Clone)]
pub struct Polyline {
    points: Vec<(f64, f64)>,
    along_m: Vec<f64>,
    blocks: Vec<Block>,
}

#[derive(Debug, Clone)]
struct Block {
    /// First and last vertex (consecutive blocks share one, so every segment is in one).
    first: usize,
    last: usize,
    center: (f64, f64),
    radius_m: f64,
}

impl Polyline {
    /// A line through `points` with `along_m[i]` metres along it at vertex `i` (as many as
    /// the points; missing values read as the last one given, or 0).
    pub fn new(points: Vec<(f64, f64)>, mut along_m: Vec<f64>) -> Self {
        let fill = along_m.last().copied().unwrap_or(0.0);
        along_m.resize(points.len(), fill);
        let blocks = blocks_of(&points);
        Self {
            points,
            along_m,
            blocks,
        }
    }

    /// A line through `points`, measured by great-circle distance from the first.
    pub fn measured(points: Vec<(f64, f64)>) -> Self {
        let mut along = Vec::with_capacity(points.len());
        let mut total = 0.0;
        for (i, p) in points.iter().enumerate() {
            if i > 0 {
                let d = haversine_m(points[i - 1].0, points[i - 1].1, p.0, p.1);
                if d.is_finite() {
                    total += d;
                }
            }
            along.push(total);
        }
        Self::new(points, along)
    }

    /// The vertices.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The distance along the line at each vertex, metres.
    pub fn along_m(&self) -> &[f64] {
        &self.along_m
    }

    /// Whether the line has no vertex.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The line's point nearest `p`, `None` for a line without a finite vertex or a point
    /// that is not finite.
    pub fn nearest(&self, p: (f64, f64)) -> Option<Pass> {
        if !(p.0.is_finite() && p.1.is_finite()) {
            return None;
        }
        let cos = p.0.to_radians().cos();
        let mut best: Option<Foot> = None;
        let mut order: Vec<(f64, usize)> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (lower_bound(p, b, cos), i))
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (lower, i) in order {
            if best.is_some_and(|b| lower > slack(b.flat_m)) {
                break;
            }
            let block = &self.blocks[i];
            for j in block.first..=block.last {
                if let Some(foot) = self.foot(p, j, cos)
                    && best.is_none_or(|b| foot.flat_m < b.flat_m)
                {
                    best = Some(foot);
                }
            }
        }
        best.map(|f| self.pass(p, f))
    }

    /// Distance from `p` to the line, metres (infinite when there is no nearest point).
    pub fn distance_m(&self, p: (f64, f64)) -> f64 {
        self.nearest(p).map_or(f64::INFINITY, |pass| pass.off_m)
    }

    /// Every pass of the line within `reach_m` of `p`, in order along the line: a pass is a
    /// stretch of consecutive segments within reach, met at its nearest point. Passes whose
    /// feet lie less than `apart_m` apart along the line are one (the nearer stands for
    /// both): a hairpin that comes back by a fountain 200 m later passes it once.
    pub fn passes(&self, p: (f64, f64), reach_m: f64, apart_m: f64) -> Vec<Pass> {
        if !(p.0.is_finite() && p.1.is_finite() && reach_m.is_finite() && reach_m >= 0.0) {
            return Vec::new();
        }
        let cos = p.0.to_radians().cos();
        // The flat bound of the reach: the flat distance is within 1 % of the great circle.
        let flat_reach = slack(reach_m);
        let mut within: Vec<Foot> = Vec::new();
        for block in &self.blocks {
            if lower_bound(p, block, cos) > flat_reach {
                continue;
            }
            for j in block.first..=block.last {
                // The block's last vertex is the next block's first: read each once.
                if j == block.last && j + 1 < self.points.len() {
                    continue;
                }
                if let Some(foot) = self.foot(p, j, cos)
                    && foot.flat_m <= flat_reach
                {
                    within.push(foot);
                }
            }
        }
        within.sort_by_key(|f| f.segment);
        // Runs of consecutive segments are one pass, met at its nearest foot.
        let mut runs: Vec<Foot> = Vec::new();
        let mut previous: Option<usize> = None;
        for foot in within {
            let continues = previous.is_some_and(|s| foot.segment <= s + 1);
            previous = Some(foot.segment);
            match runs.last_mut() {
                Some(best) if continues => {
                    if foot.flat_m < best.flat_m {
                        *best = foot;
                    }
                }
                _ => runs.push(foot),
            }
        }
        let mut passes: Vec<Pass> = runs
            .into_iter()
            .map(|f| self.pass(p, f))
            .filter(|pass| pass.off_m <= reach_m)
            .collect();
        // Merge passes too close along the line, keeping the nearer.
        let mut merged: Vec<Pass> = Vec::with_capacity(passes.len());
        for pass in passes.drain(..) {
            match merged.last_mut() {
                Some(last) if (pass.along_m - last.along_m).abs() < apart_m => {
                    if pass.off_m < last.off_m {
                        *last = pass;
                    }
                }
                _ => merged.push(pass),
            }
        }
        merged
    }

    /// The foot of `p` on segment `j` (the vertex `j` alone when it is the last, or when the
    /// distance along does not grow over the segment: a jump nobody rides).
    fn foot(&self, p: (f64, f64), j: usize, cos: f64) -> Option<Foot> {
        let a = *self.points.get(j)?;
        if !(a.0.is_finite() && a.1.is_finite()) {
            return None;
        }
        let ridden = self
            .points
            .get(j + 1)
            .filter(|b| b.0.is_finite() && b.1.is_finite())
            .filter(|_| self.along_m[j + 1] > self.along_m[j]);
        let (flat_m, t) = match ridden {
            Some(&b) => flat_point_segment(p, a, b, cos),
            None => (flat_point_segment(p, a, a, cos).0, 0.0),
        };
        flat_m.is_finite().then_some(Foot {
            segment: j,
            t,
            flat_m,
        })
    }

    fn pass(&self, p: (f64, f64), foot: Foot) -> Pass {
        let j = foot.segment;
        let a = self.points[j];
        let (at, along_m) = match self.points.get(j + 1) {
            Some(&b) if foot.t > 0.0 => (
                (a.0 + (b.0 - a.0) * foot.t, a.1 + (b.1 - a.1) * foot.t),
                self.along_m[j] + (self.along_m[j + 1] - self.along_m[j]) * foot.t,
            ),
            _ => (a, self.along_m[j]),
        };
        let off = haversine_m(p.0, p.1, at.0, at.1);
        Pass {
            along_m,
            off_m: if off.is_finite() { off } else { foot.flat_m },
            foot: at,
            segment: j,
        }
    }
}

/// A segment's nearest point to a place, before it is measured on the sphere.
#[derive(Debug, Clone, Copy)]
struct Foot {
    segment: usize,
    /// Where on the segment, 0 (its first vertex) to 1.
    t: f64,
    flat_m: f64,
}

fn blocks_of(points: &[(f64, f64)]) -> Vec<Block> {
    let mut blocks = Vec::with_capacity(points.len() / BLOCK + 1);
    let mut first = 0;
    while first < points.len() {
        let last = (first + BLOCK).min(points.len() - 1);
        let slice = &points[first..=last];
        let finite: Vec<&(f64, f64)> = slice
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        let center = finite
            .get(finite.len() / 2)
            .map_or((f64::NAN, f64::NAN), |p| **p);
        let cos = center.0.to_radians().cos();
        let radius_m = finite
            .iter()
            .map(|v| flat_m(center, **v, cos))
            .filter(|d| d.is_finite())
            .fold(0.0, f64::max);
        blocks.push(Block {
            first,
            last,
            center,
            radius_m,
        });
        if last == points.len() - 1 {
            break;
        }
        first = last;
    }
    blocks
}

/// The least flat distance from `p` to anything in `block` (minus infinity when it cannot be
/// told, so the block is read).
fn lower_bound(p: (f64, f64), block: &Block, cos: f64) -> f64 {
    let lower = flat_m(p, block.center, cos) - block.radius_m;
    if lower.is_finite() {
        lower
    } else {
        f64::NEG_INFINITY
    }
}

/// Room for the flat bounds against great-circle distances (well under 1 % at these
/// scales, plus a metre for rounding).
fn slack(d: f64) -> f64 {
    d * 1.01 + 1.0
}

/// Flat distance in metres between `p` and `q`, `cos` being the cosine of `p`'s latitude.
pub fn flat_m(p: (f64, f64), q: (f64, f64), cos: f64) -> f64 {
    let dy = (q.0 - p.0) * METRES_PER_DEGREE;
    let dx = (q.1 - p.1) * cos * METRES_PER_DEGREE;
    (dx * dx + dy * dy).sqrt()
}

/// The flat distance from `p` to the segment `a`–`b` on the projection around `p` (`cos` is
/// the cosine of its latitude), metres, and where the nearest point lies on it (0 at `a`,
/// 1 at `b`).
pub fn flat_point_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64), cos: f64) -> (f64, f64) {
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
    let (cx, cy) = (ax + dx * t, ay + dy * t);
    ((cx * cx + cy * cy).sqrt(), t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point `north_m` north and `east_m` east of (47, 9).
    fn at(north_m: f64, east_m: f64) -> (f64, f64) {
        let cos = 47.0_f64.to_radians().cos();
        (
            47.0 + north_m / METRES_PER_DEGREE,
            9.0 + east_m / (METRES_PER_DEGREE * cos),
        )
    }

    /// A straight line north, one vertex every `step_m`, `length_m` long.
    fn north(length_m: f64, step_m: f64) -> Vec<(f64, f64)> {
        let n = (length_m / step_m).round() as usize;
        (0..=n).map(|i| at(i as f64 * step_m, 0.0)).collect()
    }

    #[test]
    fn the_nearest_point_is_the_foot_on_a_segment_not_the_nearest_vertex() {
        // Vertices 10 km apart: a place beside km 3 is at km 3, not at km 0 or 10.
        let line = Polyline::measured(north(20_000.0, 10_000.0));
        let pass = line.nearest(at(3_000.0, 150.0)).expect("a foot");
        assert!((pass.along_m - 3_000.0).abs() < 5.0, "{pass:?}");
        assert!((pass.off_m - 150.0).abs() < 1.0, "{pass:?}");
    }

    #[test]
    fn an_out_and_back_passes_a_place_twice() {
        let mut out = north(10_000.0, 100.0);
        let back: Vec<_> = out
            .iter()
            .rev()
            .skip(1)
            .map(|p| (p.0, p.1 + 0.0005))
            .collect();
        out.extend(back);
        let line = Polyline::measured(out);
        let passes = line.passes(at(2_000.0, 20.0), 300.0, 1_000.0);
        assert_eq!(passes.len(), 2, "{passes:?}");
        assert!((passes[0].along_m - 2_000.0).abs() < 5.0);
        assert!((passes[1].along_m - 18_040.0).abs() < 60.0, "{passes:?}");
        // Nearer than the reach only: far away, no pass.
        assert!(line.passes(at(2_000.0, 500.0), 300.0, 1_000.0).is_empty());
    }

    #[test]
    fn a_hairpin_close_along_the_line_is_one_pass() {
        // North 1 km, back 150 m a few metres east: the two passes are 300 m apart along.
        let mut points = north(1_000.0, 50.0);
        points.push(at(1_000.0, 10.0));
        points.push(at(850.0, 10.0));
        let line = Polyline::measured(points);
        assert_eq!(line.passes(at(900.0, 5.0), 50.0, 1_000.0).len(), 1);
        assert_eq!(line.passes(at(900.0, 5.0), 50.0, 100.0).len(), 2);
    }

    #[test]
    fn a_jump_not_ridden_is_no_part_of_the_line() {
        // Two ridden pieces, the second 5 km east; the jump between adds no distance.
        let points = vec![
            at(0.0, 0.0),
            at(1_000.0, 0.0),
            at(1_000.0, 5_000.0),
            at(0.0, 5_000.0),
        ];
        let line = Polyline::new(points, vec![0.0, 1_000.0, 1_000.0, 2_000.0]);
        // Halfway along the jump: the nearest ridden points are its ends, 2.5 km away.
        let pass = line.nearest(at(1_000.0, 2_500.0)).expect("a foot");
        assert!(pass.off_m > 2_400.0, "{pass:?}");
    }

    #[test]
    fn the_blocks_agree_with_a_brute_force_scan() {
        // A winding line of 1,000 vertices; points around it.
        let points: Vec<(f64, f64)> = (0..1_000)
            .map(|i| {
                let f = f64::from(i);
                at(f * 20.0, (f / 30.0).sin() * 800.0)
            })
            .collect();
        let line = Polyline::measured(points.clone());
        let cos = 47.0_f64.to_radians().cos();
        for k in 0..200 {
            let f = f64::from(k);
            let p = at(f * 100.0 - 500.0, (f * 7.0).cos() * 1_500.0);
            let brute = points
                .windows(2)
                .map(|w| flat_point_segment(p, w[0], w[1], cos).0)
                .fold(f64::INFINITY, f64::min);
            let found = line.nearest(p).expect("a foot");
            assert!(
                (found.off_m - brute).abs() < 0.5 + brute * 0.002,
                "{k}: {found:?} vs {brute}"
            );
        }
    }

    #[test]
    fn nothing_finite_gives_nothing() {
        let line = Polyline::measured(vec![(f64::NAN, 9.0)]);
        assert!(line.nearest(at(0.0, 0.0)).is_none());
        let line = Polyline::measured(north(1_000.0, 100.0));
        assert!(line.nearest((f64::NAN, 9.0)).is_none());
        assert!(line.passes((47.0, f64::INFINITY), 100.0, 10.0).is_empty());
        assert!(
            Polyline::measured(Vec::new())
                .nearest(at(0.0, 0.0))
                .is_none()
        );
    }
}
