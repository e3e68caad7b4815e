//! What a day rides: the day's line matched to the ways it follows, so that every stretch of
//! the route belongs to at most one way. Surface, road class and traffic, ferries and fords
//! are then read from the matched ways only: a cobbled street running beside the route, a
//! street it crosses or a ferry line passing 45 m away never count.
//!
//! The method is the hidden-Markov map matching of Newson & Krumm (2009), reduced to what a
//! cycling route needs and to what the sources give (way geometries, no road graph):
//! - the line is cut into pieces of at most [`PIECE_M`]; each piece may be on any way with a
//!   segment within [`MATCH_RADIUS_M`] whose direction is within [`MAX_ANGLE_DEG`] of the
//!   piece's, or on none;
//! - being on a way costs ½(d/σd)² + ½(θ/σθ)² (d its distance, θ the angle between the piece
//!   and the way, [`SIGMA_M`], [`SIGMA_DEG`]); being on none costs [`OFF_MAP_COST`], what a
//!   way [`OFF_MAP_M`] off costs;
//! - changing from one way to another (or to none) costs [`SWITCH_COST`]: a route keeps to
//!   the way it follows, so a few metres of noise never hop it onto a parallel street;
//! - the cheapest sequence (Viterbi) is the match.
//!
//! A line drawn by a router lies on its ways (d ≈ 0) and matches them exactly; a recorded
//! track a few metres off still matches the way it follows, because the parallel one is
//! farther or runs in another direction. Where no way of the source is near (a field, a way
//! the extract lacks), the stretch is matched to none and counts as nothing.

use etappe_geo::polyline::METRES_PER_DEGREE;

use crate::model::StagePoint;

/// Longest piece of the day's line judged at once, metres.
pub const PIECE_M: f64 = 10.0;
/// A way farther than this from a piece is not a candidate, metres.
pub const MATCH_RADIUS_M: f64 = 30.0;
/// A way at a greater angle to the piece is crossed, not followed, degrees.
pub const MAX_ANGLE_DEG: f64 = 60.0;
/// Spread of the distance between a route and the way it follows (recorded tracks), metres.
pub const SIGMA_M: f64 = 7.0;
/// Spread of the angle between them, degrees.
pub const SIGMA_DEG: f64 = 25.0;
/// A piece with no way nearer than this is better matched to none, metres.
pub const OFF_MAP_M: f64 = 20.0;
/// What matching a piece to no way costs: as much as a way [`OFF_MAP_M`] off.
pub const OFF_MAP_COST: f64 = 0.5 * (OFF_MAP_M / SIGMA_M) * (OFF_MAP_M / SIGMA_M);
/// What changing ways costs.
pub const SWITCH_COST: f64 = 3.0;
/// Candidate ways kept per piece, the cheapest.
const MAX_CANDIDATES: usize = 8;
/// Side of a grid cell of the candidate index, metres.
const CELL_M: f64 = 50.0;

/// A stretch of the day ridden on one line (a way or a ferry).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The index of the line in what [`ride`] was given.
    pub line: usize,
    /// Metres from the day's start where the stretch begins, and where it ends.
    pub from_m: f64,
    pub to_m: f64,
    /// Metres ridden on it (the day's own measure).
    pub length_m: f64,
    /// The length-weighted middle of the stretch, (lat, lon).
    pub centroid: (f64, f64),
}

/// The runs of `day` on `lines` (each a way's or a ferry's vertices, (lat, lon)), in order
/// along the day; the stretches matched to no line are left out.
pub fn ride(day: &[StagePoint], lines: &[&[(f64, f64)]]) -> Vec<Run> {
    let Some(frame) = Frame::around(day) else {
        return Vec::new();
    };
    let pieces = pieces(day, &frame);
    if pieces.is_empty() || lines.is_empty() {
        return Vec::new();
    }
    let grid = Grid::new(lines, &frame, &pieces);
    let candidates: Vec<Vec<(usize, f64)>> = pieces.iter().map(|p| grid.candidates(p)).collect();
    let states = viterbi(&candidates);
    runs(&pieces, &states)
}

/// A flat frame around the day: metres east and north of its first point.
#[derive(Debug, Clone, Copy)]
struct Frame {
    origin: (f64, f64),
    cos: f64,
}

impl Frame {
    fn around(day: &[StagePoint]) -> Option<Self> {
        let finite = || {
            day.iter()
                .filter(|p| p.lat.is_finite() && p.lon.is_finite())
        };
        let first = finite().next()?;
        let (south, north) = finite().fold((f64::INFINITY, f64::NEG_INFINITY), |(s, n), p| {
            (s.min(p.lat), n.max(p.lat))
        });
        Some(Self {
            origin: (first.lat, first.lon),
            cos: ((south + north) / 2.0).to_radians().cos().max(0.01),
        })
    }

    fn xy(&self, (lat, lon): (f64, f64)) -> (f64, f64) {
        let mut dlon = lon - self.origin.1;
        if dlon > 180.0 {
            dlon -= 360.0;
        } else if dlon < -180.0 {
            dlon += 360.0;
        }
        (
            dlon * self.cos * METRES_PER_DEGREE,
            (lat - self.origin.0) * METRES_PER_DEGREE,
        )
    }
}

/// A piece of the day's line.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Its middle, flat and (lat, lon).
    mid: (f64, f64),
    at: (f64, f64),
    /// Its direction, a unit vector.
    dir: (f64, f64),
    from_m: f64,
    length_m: f64,
}

fn pieces(day: &[StagePoint], frame: &Frame) -> Vec<Piece> {
    let mut out = Vec::new();
    for w in day.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let ridden = b.distance_m - a.distance_m;
        let usable = ridden > 0.0
            && ridden.is_finite()
            && [a.lat, a.lon, b.lat, b.lon].iter().all(|v| v.is_finite());
        if !usable {
            continue;
        }
        let (pa, pb) = (frame.xy((a.lat, a.lon)), frame.xy((b.lat, b.lon)));
        let (dx, dy) = (pb.0 - pa.0, pb.1 - pa.1);
        let flat = (dx * dx + dy * dy).sqrt();
        // NaN and zero lengths alike: a piece without a direction cannot be matched.
        if flat.is_nan() || flat <= 0.0 {
            continue;
        }
        let dir = (dx / flat, dy / flat);
        // A segment of 100 km would be 10,000 pieces: planner files have such; cap the count
        // and let long pieces stand for it (what lies along them is judged at their middle).
        let n = ((flat / PIECE_M).ceil() as usize).clamp(1, 2_000);
        for k in 0..n {
            let t = (k as f64 + 0.5) / n as f64;
            out.push(Piece {
                mid: (pa.0 + dx * t, pa.1 + dy * t),
                at: (a.lat + (b.lat - a.lat) * t, a.lon + (b.lon - a.lon) * t),
                dir,
                from_m: a.distance_m + ridden * k as f64 / n as f64,
                length_m: ridden / n as f64,
            });
        }
    }
    out
}

/// One segment of a candidate line: the line's index and its two ends (projected).
type Segment = (usize, (f64, f64), (f64, f64));

/// The lines' segments near the day, by grid cell.
struct Grid {
    cells: std::collections::HashMap<(i64, i64), Vec<Segment>>,
}

impl Grid {
    fn new(lines: &[&[(f64, f64)]], frame: &Frame, pieces: &[Piece]) -> Self {
        let (mut west, mut south, mut east, mut north) = (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        );
        for p in pieces {
            west = west.min(p.mid.0);
            east = east.max(p.mid.0);
            south = south.min(p.mid.1);
            north = north.max(p.mid.1);
        }
        let margin = MATCH_RADIUS_M + CELL_M;
        let mut cells: std::collections::HashMap<_, Vec<_>> = std::collections::HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            let flat: Vec<(f64, f64)> = line
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|p| frame.xy(*p))
                .collect();
            for s in flat.windows(2) {
                let (a, b) = (s[0], s[1]);
                let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
                let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
                if x1 < west - margin
                    || x0 > east + margin
                    || y1 < south - margin
                    || y0 > north + margin
                {
                    continue;
                }
                // Clamp to the day's box: a ferry segment of 30 km only needs the cells
                // near the day.
                let (cx0, cx1) = (cell(x0.max(west - margin)), cell(x1.min(east + margin)));
                let (cy0, cy1) = (cell(y0.max(south - margin)), cell(y1.min(north + margin)));
                for cx in cx0..=cx1 {
                    for cy in cy0..=cy1 {
                        // Only cells the segment comes near (a diagonal's box holds many
                        // it never touches).
                        let centre = ((cx as f64 + 0.5) * CELL_M, (cy as f64 + 0.5) * CELL_M);
                        if point_segment(centre, a, b).0 <= CELL_M {
                            cells.entry((cx, cy)).or_default().push((i, a, b));
                        }
                    }
                }
            }
        }
        Self { cells }
    }

    /// The lines a piece may be on, with the cost of being on each, cheapest first.
    fn candidates(&self, piece: &Piece) -> Vec<(usize, f64)> {
        let (cx, cy) = (cell(piece.mid.0), cell(piece.mid.1));
        let cos_max = MAX_ANGLE_DEG.to_radians().cos();
        let mut best: Vec<(usize, f64)> = Vec::new();
        for x in cx - 1..=cx + 1 {
            for y in cy - 1..=cy + 1 {
                let Some(segments) = self.cells.get(&(x, y)) else {
                    continue;
                };
                for &(line, a, b) in segments {
                    let (d, dir) = point_segment(piece.mid, a, b);
                    if d > MATCH_RADIUS_M {
                        continue;
                    }
                    let Some(dir) = dir else { continue };
                    // Undirected: a way is followed either way along it.
                    let cos = (piece.dir.0 * dir.0 + piece.dir.1 * dir.1).abs().min(1.0);
                    if cos < cos_max {
                        continue;
                    }
                    let angle = cos.acos().to_degrees();
                    let cost = 0.5 * (d / SIGMA_M).powi(2) + 0.5 * (angle / SIGMA_DEG).powi(2);
                    match best.iter_mut().find(|(l, _)| *l == line) {
                        Some(entry) => entry.1 = entry.1.min(cost),
                        None => best.push((line, cost)),
                    }
                }
            }
        }
        best.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        best.truncate(MAX_CANDIDATES);
        best
    }
}

fn cell(v: f64) -> i64 {
    (v / CELL_M).floor() as i64
}

/// Flat distance from `p` to the segment `a`–`b` and the segment's direction (none for a
/// segment of no length).
fn point_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> (f64, Option<(f64, f64)>) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (cx, cy) = (a.0 + dx * t - p.0, a.1 + dy * t - p.1);
    let len = len2.sqrt();
    (
        (cx * cx + cy * cy).sqrt(),
        (len > 0.0).then(|| (dx / len, dy / len)),
    )
}

/// The cheapest state of every piece: `Some(line)` or `None` (on no line).
fn viterbi(candidates: &[Vec<(usize, f64)>]) -> Vec<Option<usize>> {
    // State k of piece i: candidates[i][k] for k < len, "none" at k == len.
    let mut back: Vec<Vec<usize>> = Vec::with_capacity(candidates.len());
    let mut previous: Vec<(Option<usize>, f64)> = Vec::new();
    for (i, list) in candidates.iter().enumerate() {
        let states: Vec<(Option<usize>, f64)> = list
            .iter()
            .map(|&(l, c)| (Some(l), c))
            .chain(std::iter::once((None, OFF_MAP_COST)))
            .collect();
        let mut costs = Vec::with_capacity(states.len());
        let mut from = Vec::with_capacity(states.len());
        for &(state, emission) in &states {
            if i == 0 {
                costs.push((state, emission));
                from.push(0);
                continue;
            }
            let (k, total) = previous
                .iter()
                .enumerate()
                .map(|(k, &(before, cost))| {
                    let switch = if before == state { 0.0 } else { SWITCH_COST };
                    (k, cost + switch)
                })
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
                .unwrap_or((0, 0.0));
            costs.push((state, total + emission));
            from.push(k);
        }
        back.push(from);
        previous = costs;
    }
    let Some((mut k, _)) = previous
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.1.total_cmp(&b.1.1).then(a.0.cmp(&b.0)))
        .map(|(k, s)| (k, s.1))
    else {
        return Vec::new();
    };
    let mut out = vec![None; candidates.len()];
    for i in (0..candidates.len()).rev() {
        out[i] = candidates[i].get(k).map(|&(l, _)| l);
        k = back[i][k];
    }
    out
}

/// Consecutive pieces on one line, as runs.
fn runs(pieces: &[Piece], states: &[Option<usize>]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut sums: Vec<(f64, f64)> = Vec::new();
    let mut previous: Option<usize> = None;
    for (piece, state) in pieces.iter().zip(states) {
        let Some(line) = *state else {
            previous = None;
            continue;
        };
        let continues = previous == Some(line)
            && out
                .last()
                .is_some_and(|r| (piece.from_m - r.to_m).abs() < 1.0);
        if !continues {
            out.push(Run {
                line,
                from_m: piece.from_m,
                to_m: piece.from_m,
                length_m: 0.0,
                centroid: piece.at,
            });
            sums.push((0.0, 0.0));
        }
        if let (Some(run), Some(sum)) = (out.last_mut(), sums.last_mut()) {
            run.to_m = piece.from_m + piece.length_m;
            run.length_m += piece.length_m;
            sum.0 += piece.at.0 * piece.length_m;
            sum.1 += piece.at.1 * piece.length_m;
        }
        previous = Some(line);
    }
    for (run, sum) in out.iter_mut().zip(sums) {
        if run.length_m > 0.0 {
            run.centroid = (sum.0 / run.length_m, sum.1 / run.length_m);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (lat, lon) `north_m` north and `east_m` east of (47.14, 9.52), Vaduz.
    fn at(north_m: f64, east_m: f64) -> (f64, f64) {
        let cos = 47.14_f64.to_radians().cos();
        (
            47.14 + north_m / METRES_PER_DEGREE,
            9.52 + east_m / (METRES_PER_DEGREE * cos),
        )
    }

    /// A day through these (north, east) corners, a vertex every 20 m.
    fn day(corners: &[(f64, f64)]) -> Vec<StagePoint> {
        let mut out: Vec<StagePoint> = Vec::new();
        let mut along = 0.0;
        for w in corners.windows(2) {
            let (a, b) = (w[0], w[1]);
            let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
            let n = (length / 20.0).ceil() as usize;
            for k in 0..n {
                let t = k as f64 / n as f64;
                let (lat, lon) = at(a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                out.push(StagePoint {
                    lat,
                    lon,
                    ele: None,
                    distance_m: along + length * t,
                });
            }
            along += length;
        }
        let last = corners[corners.len() - 1];
        let (lat, lon) = at(last.0, last.1);
        out.push(StagePoint {
            lat,
            lon,
            ele: None,
            distance_m: along,
        });
        out
    }

    fn way(corners: &[(f64, f64)]) -> Vec<(f64, f64)> {
        corners.iter().map(|c| at(c.0, c.1)).collect()
    }

    fn ridden_on(runs: &[Run], line: usize) -> f64 {
        runs.iter()
            .filter(|r| r.line == line)
            .map(|r| r.length_m)
            .sum()
    }

    #[test]
    fn a_parallel_street_and_a_crossing_street_are_not_ridden() {
        // The day runs 1 km north on way 0; way 1 runs beside it 12 m east, way 2 crosses it.
        let day = day(&[(0.0, 0.0), (1_000.0, 0.0)]);
        let ridden = way(&[(-50.0, 0.0), (1_050.0, 0.0)]);
        let parallel = way(&[(0.0, 12.0), (1_000.0, 12.0)]);
        let crossing = way(&[(500.0, -300.0), (500.0, 300.0)]);
        let runs = ride(&day, &[&ridden, &parallel, &crossing]);
        assert!((ridden_on(&runs, 0) - 1_000.0).abs() < 1.0, "{runs:?}");
        assert_eq!(ridden_on(&runs, 1), 0.0, "{runs:?}");
        assert_eq!(ridden_on(&runs, 2), 0.0, "{runs:?}");
        // Each metre of the day is on at most one way.
        let total: f64 = runs.iter().map(|r| r.length_m).sum();
        assert!(total <= 1_000.0 + 1e-6);
    }

    #[test]
    fn a_noisy_track_keeps_to_the_way_it_follows() {
        // A recording zig-zags 6 m either side of way 0; way 1 is 15 m east.
        let corners: Vec<(f64, f64)> = (0..=50)
            .map(|i| (f64::from(i) * 20.0, if i % 2 == 0 { -6.0 } else { 6.0 }))
            .collect();
        let day = day(&corners);
        let length = day.last().expect("points").distance_m;
        let ridden = way(&[(0.0, 0.0), (1_000.0, 0.0)]);
        let parallel = way(&[(0.0, 15.0), (1_000.0, 15.0)]);
        let runs = ride(&day, &[&ridden, &parallel]);
        assert!(ridden_on(&runs, 0) > 0.95 * length, "{runs:?}");
        assert_eq!(ridden_on(&runs, 1), 0.0);
    }

    #[test]
    fn a_turn_goes_from_one_way_to_the_next() {
        // North 500 m on way 0, then east 500 m on way 1.
        let day = day(&[(0.0, 0.0), (500.0, 0.0), (500.0, 500.0)]);
        let north = way(&[(0.0, 0.0), (500.0, 0.0), (900.0, 0.0)]);
        let east = way(&[(500.0, -400.0), (500.0, 0.0), (500.0, 500.0)]);
        let runs = ride(&day, &[&north, &east]);
        assert!((ridden_on(&runs, 0) - 500.0).abs() < 25.0, "{runs:?}");
        assert!((ridden_on(&runs, 1) - 500.0).abs() < 25.0, "{runs:?}");
        assert_eq!(runs.len(), 2, "{runs:?}");
    }

    #[test]
    fn a_stretch_far_from_every_way_is_on_none() {
        let day = day(&[(0.0, 0.0), (1_000.0, 0.0)]);
        let short = way(&[(0.0, 0.0), (300.0, 0.0)]);
        let runs = ride(&day, &[&short]);
        assert!((ridden_on(&runs, 0) - 300.0).abs() < 25.0, "{runs:?}");
    }

    #[test]
    fn a_way_ridden_twice_is_two_runs() {
        // Out and back on the same way.
        let day = day(&[(0.0, 0.0), (1_000.0, 0.0), (0.0, 0.0)]);
        let both = way(&[(0.0, 0.0), (1_000.0, 0.0)]);
        let runs = ride(&day, &[&both]);
        assert!((ridden_on(&runs, 0) - 2_000.0).abs() < 1.0, "{runs:?}");
    }

    #[test]
    fn nothing_to_match_gives_nothing() {
        assert!(ride(&[], &[]).is_empty());
        let day = day(&[(0.0, 0.0), (100.0, 0.0)]);
        assert!(ride(&day, &[]).is_empty());
        let nan = [StagePoint {
            lat: f64::NAN,
            lon: 9.0,
            ele: None,
            distance_m: 0.0,
        }];
        assert!(ride(&nan, &[&way(&[(0.0, 0.0), (1.0, 0.0)])]).is_empty());
    }

    /// A long day in a dense network: 150 km north with 1,500 ways of 100 m along it (the
    /// road it rides, cut as OSM cuts roads) and 3,000 crossing or parallel streets around
    /// it. Matching must stay a small part of an analysis; the time is printed for the
    /// benchmarks (`cargo test --release -p etappe-analysis --lib a_long_day_in_a_dense_network
    /// -- --nocapture`).
    #[test]
    fn a_long_day_in_a_dense_network_is_matched_fast_enough() {
        let route = day(&[(0.0, 0.0), (150_000.0, 0.0)]);
        let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
        for i in 0..1_500 {
            let from = f64::from(i) * 100.0;
            lines.push(way(&[(from, 0.0), (from + 100.0, 0.0)]));
            // A street crossing the route and one parallel 40 m east, every 100 m.
            lines.push(way(&[(from + 50.0, -200.0), (from + 50.0, 200.0)]));
            lines.push(way(&[(from, 40.0), (from + 100.0, 40.0)]));
        }
        let refs: Vec<&[(f64, f64)]> = lines.iter().map(Vec::as_slice).collect();
        let started = std::time::Instant::now();
        let runs = ride(&route, &refs);
        let elapsed = started.elapsed();
        eprintln!(
            "matched 150 km ({} points) against {} ways in {elapsed:?}",
            route.len(),
            refs.len()
        );
        let on_the_road: f64 = runs
            .iter()
            .filter(|r| r.line % 3 == 0)
            .map(|r| r.length_m)
            .sum();
        assert!(on_the_road > 149_000.0, "{on_the_road}");
        // 12 ms in release, 57 ms in a debug build here (2 cores): a second is a regression.
        assert!(elapsed.as_secs_f64() < 1.0, "{elapsed:?}");
    }
}
