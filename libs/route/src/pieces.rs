//! Joining the pieces of a route file (GPX `<trkseg>`s and `<rte>`s) into
//! the one point list the planner paces, without inventing riding.
//!
//! The rule, for the step from one piece's last point to the next piece's
//! first point (its length is the great-circle distance between the two):
//! - below [`GAP_WARNING_M`] (100 m): a GPS restart or a pause; bridged,
//!   counted as riding, no gap recorded;
//! - [`GAP_WARNING_M`] to [`GAP_BREAK_M`] (100–500 m): bridged and counted
//!   (a rider plausibly rides it), but recorded as a gap so the day gets a
//!   warning;
//! - above [`GAP_BREAK_M`] (500 m): a break. It counts no distance and no
//!   climb, exports do not draw it (GPX: a new `<trkseg>`; FIT: the records
//!   across it do not advance the distance), and the day gets a critical
//!   alert naming its length and where it is.
//!
//! Order: when every piece has a time, pieces are ridden in the order of
//! their first time (a stable sort, so pieces with equal times keep their
//! file order); otherwise, file order. A recorded ride is then replayed as
//! it happened even when an app wrote its segments out of order, and a
//! planner file (no times) stays as its author arranged it.

use serde::Serialize;

use crate::RouteError;
use crate::geometry::{cumulative_distances_with_breaks, haversine_m};
use crate::gpx::{ParsedRoute, TrackPoint};

/// Shortest jump between pieces that is recorded as a gap, metres.
pub const GAP_WARNING_M: f64 = 100.0;
/// Longest jump between pieces that is still bridged, metres.
pub const GAP_BREAK_M: f64 = 500.0;

/// A jump between two pieces of the source.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Gap {
    /// Index of the first point after the jump.
    pub index: usize,
    /// Great-circle length of the jump, metres.
    pub length_m: f64,
    /// `true` for a bridged gap (counted as riding), `false` for a break.
    pub bridged: bool,
}

/// The indices of the points after a break (gaps not bridged), in the gaps' order.
pub fn break_indices(gaps: &[Gap]) -> Vec<usize> {
    gaps.iter()
        .filter(|g| !g.bridged)
        .map(|g| g.index)
        .collect()
}

/// One point list with the gaps found between its pieces.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JoinedRoute {
    pub points: Vec<TrackPoint>,
    /// Sorted by index.
    pub gaps: Vec<Gap>,
}

impl JoinedRoute {
    /// Indices of the points after a break (the steps that are not ridden).
    pub fn breaks(&self) -> Vec<usize> {
        break_indices(&self.gaps)
    }

    /// Distance from the first point to each point, breaks not counted.
    pub fn cumulative_m(&self) -> Vec<f64> {
        cumulative_distances_with_breaks(&self.points, &self.breaks())
    }

    /// The ridden length, metres.
    pub fn distance_m(&self) -> f64 {
        self.cumulative_m().last().copied().unwrap_or_default()
    }
}

/// Orders and joins the pieces by the module's rule. Refuses a route that
/// has no length ([`RouteError::NoDistance`]: a single point, or every point
/// at one place), which could only become a 0 km day.
pub fn join_pieces(route: &ParsedRoute) -> Result<JoinedRoute, RouteError> {
    let mut order: Vec<usize> = (0..route.tracks.len()).collect();
    let timed: Option<Vec<i64>> = (route.starts.len() == route.tracks.len())
        .then(|| route.starts.iter().copied().collect::<Option<Vec<i64>>>())
        .flatten();
    if let Some(times) = timed {
        order.sort_by_key(|&i| times.get(i).copied().unwrap_or(i64::MAX));
    }
    let total: usize = route.tracks.iter().map(Vec::len).sum();
    let mut joined = JoinedRoute {
        points: Vec::with_capacity(total),
        gaps: Vec::new(),
    };
    for piece in order.iter().filter_map(|&i| route.tracks.get(i)) {
        if let (Some(last), Some(first)) = (joined.points.last(), piece.first()) {
            let length_m = haversine_m(last, first);
            if length_m >= GAP_WARNING_M {
                joined.gaps.push(Gap {
                    index: joined.points.len(),
                    length_m,
                    bridged: length_m <= GAP_BREAK_M,
                });
            }
        }
        joined.points.extend_from_slice(piece);
    }
    if joined.distance_m() <= 0.0 {
        return Err(RouteError::NoDistance {
            points: joined.points.len(),
        });
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(lat: f64, lon: f64, ele: f64) -> TrackPoint {
        TrackPoint {
            lat,
            lon,
            ele: Some(ele),
        }
    }

    /// A piece going north from `lat` for `n` steps of 100 m at height `ele`.
    fn piece(lat: f64, lon: f64, n: usize, ele: f64) -> Vec<TrackPoint> {
        (0..n)
            .map(|i| pt(lat + i as f64 * 0.1 / 111.195, lon, ele))
            .collect()
    }

    #[test]
    fn a_far_jump_counts_no_distance_and_no_climb() {
        // Two 1 km pieces at 200 m and 600 m height, 5 km apart.
        let a = piece(45.0, 6.0, 11, 200.0);
        let b = piece(45.0, 6.07, 11, 600.0);
        let route = ParsedRoute {
            tracks: vec![a, b],
            ..Default::default()
        };
        let joined = join_pieces(&route).expect("a route");
        assert_eq!(joined.gaps.len(), 1);
        let gap = joined.gaps[0];
        assert_eq!((gap.index, gap.bridged), (11, false));
        assert!(gap.length_m > 5_000.0 && gap.length_m < 6_000.0, "{gap:?}");
        assert!((joined.distance_m() - 2_000.0).abs() < 1.0);
        let (climb, _) = crate::geometry::day_climb(&joined.points, &joined.breaks());
        assert!(climb < 1.0, "the 400 m step is not climbed: {climb}");
    }

    #[test]
    fn short_jumps_are_bridged_and_middle_ones_recorded() {
        let a = piece(45.0, 6.0, 11, 0.0);
        // 50 m east of a's end: silent; then 300 m further east: recorded, bridged.
        let end = a[10];
        let b = piece(end.lat, end.lon + 0.05 / 78.7, 11, 0.0);
        let end_b = b[10];
        let c = piece(end_b.lat, end_b.lon + 0.3 / 78.7, 11, 0.0);
        let route = ParsedRoute {
            tracks: vec![a, b, c],
            ..Default::default()
        };
        let joined = join_pieces(&route).expect("a route");
        assert_eq!(joined.gaps.len(), 1, "{:?}", joined.gaps);
        assert!(joined.gaps[0].bridged);
        assert_eq!(joined.gaps[0].index, 22);
        // 3 km of pieces + 50 m + 300 m bridged.
        assert!(
            (joined.distance_m() - 3_350.0).abs() < 5.0,
            "{}",
            joined.distance_m()
        );
    }

    #[test]
    fn timed_pieces_are_ridden_in_time_order_untimed_in_file_order() {
        let a = piece(45.0, 6.0, 3, 0.0);
        let b = piece(46.0, 6.0, 3, 0.0);
        let timed = ParsedRoute {
            tracks: vec![a.clone(), b.clone()],
            starts: vec![Some(2_000), Some(1_000)],
            ..Default::default()
        };
        let joined = join_pieces(&timed).expect("a route");
        assert_eq!(joined.points.first(), b.first());
        let partly = ParsedRoute {
            starts: vec![Some(2_000), None],
            ..timed
        };
        assert_eq!(
            join_pieces(&partly).expect("a route").points.first(),
            a.first()
        );
    }

    #[test]
    fn a_route_without_length_is_refused() {
        let still = vec![pt(45.0, 6.0, 1.0); 5];
        let route = ParsedRoute {
            tracks: vec![still.clone(), still],
            ..Default::default()
        };
        assert_eq!(
            join_pieces(&route),
            Err(RouteError::NoDistance { points: 10 })
        );
        let single = ParsedRoute {
            tracks: vec![vec![pt(1.0, 1.0, 0.0)]],
            ..Default::default()
        };
        assert_eq!(
            join_pieces(&single),
            Err(RouteError::NoDistance { points: 1 })
        );
    }
}
