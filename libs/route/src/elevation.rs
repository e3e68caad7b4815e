//! Filling in the heights a route lacks (pure: the look-ups are the caller's). Routes from
//! routers and many planners carry no `<ele>`; an elevation source (the Open-Meteo API, local
//! SRTM tiles) answers for a few points, and the rest is interpolated along distance.
//!
//! - [`missing_runs`]: the stretches without a height;
//! - [`sample_plan`]: which of their points to look up, one every [`SAMPLE_SPACING_M`] (the
//!   resolution of the Copernicus GLO-90 data: asking denser buys nothing);
//! - [`fill`]: writes the looked-up heights and interpolates between them;
//! - [`interpolate_short_gaps`]: without any source, closes gaps shorter than
//!   [`SHORT_GAP_M`] between two recorded heights (a GPS dropout in a tunnel), and keeps
//!   longer ones missing rather than inventing a profile.
//!
//! A height is known when it is present and finite; recorded heights are never replaced.

use std::ops::Range;

use crate::TrackPoint;
use crate::geometry::cumulative_distances;

/// The recommended look-up spacing, metres: GLO-90's resolution.
pub const SAMPLE_SPACING_M: f64 = 90.0;
/// The longest gap [`interpolate_short_gaps`] should close, metres.
pub const SHORT_GAP_M: f64 = 500.0;
/// Distances are sums of great-circle steps: a millimetre of slack keeps a sample every
/// 90 m on a track of 10 m steps from slipping to 100 m through rounding.
const DISTANCE_SLACK_M: f64 = 1e-3;

/// What [`fill`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FillReport {
    /// Points that had no height and have one now (looked up or interpolated).
    pub filled: usize,
    /// Points still without a height.
    pub still_missing: usize,
}

fn known(point: &TrackPoint) -> Option<f64> {
    point.ele.filter(|e| e.is_finite())
}

/// The runs of consecutive points without a finite elevation, in order.
pub fn missing_runs(points: &[TrackPoint]) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, point) in points.iter().enumerate() {
        match (known(point).is_none(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push(s..points.len());
    }
    runs
}

/// The indices of the points to look up, ascending: in each missing run its first and last
/// point, and between them a point whenever the distance along the track from the last one
/// chosen reaches `spacing_m` (so every point where neighbours are that far apart). A
/// spacing that is not a positive number chooses every missing point.
pub fn sample_plan(points: &[TrackPoint], spacing_m: f64) -> Vec<usize> {
    let runs = missing_runs(points);
    if runs.is_empty() {
        return Vec::new();
    }
    let distances = cumulative_distances(points);
    let at = |i: usize| distances.get(i).copied().unwrap_or(0.0);
    let every_point = !(spacing_m.is_finite() && spacing_m > 0.0);
    let mut plan = Vec::new();
    for run in runs {
        let last = run.end.saturating_sub(1);
        let mut chosen_at = f64::NEG_INFINITY;
        for i in run {
            if i == last || every_point || at(i) - chosen_at >= spacing_m - DISTANCE_SLACK_M {
                plan.push(i);
                chosen_at = at(i);
            }
        }
    }
    plan
}

/// Writes the looked-up heights (`(index, height)`; out-of-range indices, non-finite
/// heights and points that already have one are passed over), then, in each missing run
/// that got at least one height, interpolates the points between two heights linearly
/// along distance, or carries the one height next to them where the other side has none
/// (the track's end, or a look-up that came back empty). A run no height came back for
/// stays missing, and so does every point looked up without an answer.
pub fn fill(points: &mut [TrackPoint], sampled: &[(usize, Option<f64>)]) -> FillReport {
    let runs = missing_runs(points);
    let missing_before: usize = runs.iter().map(ExactSizeIterator::len).sum();
    // Looked up and answered nothing: interpolation stops there rather than bridging it.
    let mut blocked = vec![false; points.len()];
    let mut answered_runs = vec![false; runs.len()];
    for &(i, height) in sampled {
        let Some(point) = points.get_mut(i) else {
            continue;
        };
        if known(point).is_some() {
            continue;
        }
        match height.filter(|h| h.is_finite()) {
            Some(h) => {
                point.ele = Some(h);
                // The runs are sorted and disjoint: the first ending after `i` holds it.
                let r = runs.partition_point(|r| r.end <= i);
                if let Some(answered) = answered_runs.get_mut(r) {
                    *answered = true;
                }
            }
            None => {
                if let Some(b) = blocked.get_mut(i) {
                    *b = true;
                }
            }
        }
    }
    let distances = cumulative_distances(points);
    for (run, _) in runs.iter().zip(&answered_runs).filter(|(_, a)| **a) {
        interpolate_run(points, &distances, run, &blocked);
    }
    let missing_after = points.iter().filter(|p| known(p).is_none()).count();
    FillReport {
        filled: missing_before.saturating_sub(missing_after),
        still_missing: missing_after,
    }
}

/// The nearest height on one side of a missing point, if interpolation may use it.
#[derive(Clone, Copy)]
enum Anchor {
    Height {
        distance: f64,
        height: f64,
    },
    /// A look-up without an answer, or the track's end: nothing to interpolate from.
    None,
}

/// Fills the missing points of `run` from their nearest anchors on each side: one pass
/// from the right records each point's next anchor, one from the left fills.
fn interpolate_run(
    points: &mut [TrackPoint],
    distances: &[f64],
    run: &Range<usize>,
    blocked: &[bool],
) {
    let distance = |i: usize| distances.get(i).copied().unwrap_or(0.0);
    let is_blocked = |i: usize| blocked.get(i).copied().unwrap_or(false);
    let anchor_at = |points: &[TrackPoint], i: usize| match points.get(i).and_then(known) {
        Some(height) => Anchor::Height {
            distance: distance(i),
            height,
        },
        None => Anchor::None,
    };
    // The run is maximal: the points just outside it, when there, have recorded heights.
    let mut next = anchor_at(points, run.end);
    let mut after = vec![Anchor::None; run.len()];
    for (slot, i) in after.iter_mut().zip(run.clone()).rev() {
        *slot = next;
        if is_blocked(i) {
            next = Anchor::None;
        } else if let Some(height) = points.get(i).and_then(known) {
            next = Anchor::Height {
                distance: distance(i),
                height,
            };
        }
    }
    let mut previous = match run.start.checked_sub(1) {
        Some(before) => anchor_at(points, before),
        None => Anchor::None,
    };
    for (i, next) in run.clone().zip(after) {
        if is_blocked(i) {
            previous = Anchor::None;
            continue;
        }
        let Some(point) = points.get_mut(i) else {
            continue;
        };
        if let Some(height) = known(point) {
            previous = Anchor::Height {
                distance: distance(i),
                height,
            };
            continue;
        }
        point.ele = match (previous, next) {
            (
                Anchor::Height {
                    distance: d0,
                    height: h0,
                },
                Anchor::Height {
                    distance: d1,
                    height: h1,
                },
            ) => Some(between(d0, h0, d1, h1, distance(i))),
            (Anchor::Height { height, .. }, Anchor::None)
            | (Anchor::None, Anchor::Height { height, .. }) => Some(height),
            (Anchor::None, Anchor::None) => None,
        };
    }
}

/// The height at distance `at` on the line from (`d0`, `h0`) to (`d1`, `h1`); two anchors at
/// the same distance (a repeated point) give their mean.
fn between(d0: f64, h0: f64, d1: f64, h1: f64, at: f64) -> f64 {
    let span = d1 - d0;
    if span.is_nan() || span <= 0.0 {
        return (h0 + h1) / 2.0;
    }
    let t = ((at - d0) / span).clamp(0.0, 1.0);
    h0 + (h1 - h0) * t
}

/// Without any source: fills each missing run that lies between two known heights less
/// than `max_gap_m` apart along the track, linearly along distance. Runs at the track's
/// ends and longer gaps stay missing. Returns the number of points filled.
pub fn interpolate_short_gaps(points: &mut [TrackPoint], max_gap_m: f64) -> usize {
    let runs = missing_runs(points);
    if runs.is_empty() {
        return 0;
    }
    let distances = cumulative_distances(points);
    let at = |i: usize| distances.get(i).copied().unwrap_or(0.0);
    let mut filled = 0;
    for run in runs {
        let Some(before) = run.start.checked_sub(1) else {
            continue;
        };
        let after = run.end;
        let (Some(h0), Some(h1)) = (
            points.get(before).and_then(known),
            points.get(after).and_then(known),
        ) else {
            continue;
        };
        let (d0, d1) = (at(before), at(after));
        // A NaN limit closes nothing.
        if max_gap_m.is_nan() || d1 - d0 >= max_gap_m {
            continue;
        }
        for i in run {
            if let Some(point) = points.get_mut(i) {
                point.ele = Some(between(d0, h0, d1, h1, at(i)));
                filled += 1;
            }
        }
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{BASE_ELEVATION_M, Profile, synthetic_route};

    fn point(lat: f64, ele: Option<f64>) -> TrackPoint {
        TrackPoint { lat, lon: 7.0, ele }
    }

    /// Points going north every ~111 m (0.001°), with the given heights.
    fn track(eles: &[Option<f64>]) -> Vec<TrackPoint> {
        eles.iter()
            .enumerate()
            .map(|(i, &e)| point(45.0 + i as f64 * 0.001, e))
            .collect()
    }

    fn heights(points: &[TrackPoint]) -> Vec<Option<f64>> {
        points.iter().map(|p| p.ele).collect()
    }

    /// The synthetic ramp's height at each point, and the same route stripped of it.
    fn ramp(total_km: f64, spacing_m: f64) -> (Vec<f64>, Vec<TrackPoint>) {
        let route = synthetic_route(total_km, spacing_m, Profile::Ramp { gain_m: 500.0 });
        let truth = route
            .iter()
            .map(|p| p.ele.expect("synthetic height"))
            .collect();
        let bare = route
            .iter()
            .map(|p| TrackPoint { ele: None, ..*p })
            .collect();
        (truth, bare)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn runs_are_the_stretches_without_a_finite_height() {
        let points = track(&[
            None,
            Some(1.0),
            Some(f64::NAN),
            None,
            Some(2.0),
            Some(f64::INFINITY),
        ]);
        assert_eq!(missing_runs(&points), [0..1, 2..4, 5..6]);
        assert!(missing_runs(&track(&[Some(1.0), Some(2.0)])).is_empty());
        assert_eq!(missing_runs(&track(&[None, None])), vec![0..2]);
        assert!(missing_runs(&[]).is_empty());
    }

    #[test]
    fn a_route_without_heights_is_sampled_every_90_m() {
        let (_, bare) = ramp(10.0, 10.0);
        assert_eq!(bare.len(), 1001);
        let plan = sample_plan(&bare, SAMPLE_SPACING_M);
        // 0, 90, …, 9,990 m (112 points) and the last at 10 km.
        assert_eq!(plan.len(), 113);
        assert_eq!(plan.first(), Some(&0));
        assert_eq!(plan.get(1), Some(&9), "the point at 90 m, not 100 m");
        assert_eq!(plan.last(), Some(&1000));
        assert!(plan.windows(2).all(|w| w[0] < w[1]));
        let distances = cumulative_distances(&bare);
        for pair in plan.windows(2) {
            let step = distances[pair[1]] - distances[pair[0]];
            assert!(step <= 90.0 + 1e-6, "{step} m between samples");
        }
    }

    #[test]
    fn sparse_points_are_all_sampled_and_known_ones_never() {
        // ~111 m apart: every missing point is further than 90 m from its neighbour.
        let points = track(&[Some(5.0), None, None, None, Some(9.0), None]);
        assert_eq!(sample_plan(&points, SAMPLE_SPACING_M), [1, 2, 3, 5]);
        // A wide spacing keeps each run's first and last point only.
        assert_eq!(sample_plan(&points, 10_000.0), [1, 3, 5]);
        assert_eq!(sample_plan(&points, 0.0), [1, 2, 3, 5]);
        assert_eq!(sample_plan(&points, f64::NAN), [1, 2, 3, 5]);
        assert_eq!(sample_plan(&track(&[Some(1.0)]), 90.0), Vec::<usize>::new());
        assert_eq!(sample_plan(&track(&[None]), 90.0), [0]);
        assert_eq!(sample_plan(&[], 90.0), Vec::<usize>::new());
    }

    #[test]
    fn filling_the_samples_of_a_ramp_reproduces_it() {
        let (truth, mut points) = ramp(10.0, 10.0);
        let plan = sample_plan(&points, SAMPLE_SPACING_M);
        let sampled: Vec<(usize, Option<f64>)> =
            plan.iter().map(|&i| (i, Some(truth[i]))).collect();
        let report = fill(&mut points, &sampled);
        assert_eq!(
            report,
            FillReport {
                filled: 1001,
                still_missing: 0
            }
        );
        for (p, t) in points.iter().zip(&truth) {
            let e = p.ele.expect("filled");
            assert!(close(e, *t), "{e} against {t}");
        }
        assert!(points.iter().any(|p| p.ele != Some(BASE_ELEVATION_M)));
    }

    #[test]
    fn runs_at_the_ends_carry_the_nearest_height() {
        // Missing at the start (0..3) and at the end (5..8); samples at 0, 2 and 7 only.
        let mut points = track(&[None, None, None, Some(50.0), Some(60.0), None, None, None]);
        let report = fill(
            &mut points,
            &[(0, Some(10.0)), (2, Some(30.0)), (7, Some(90.0))],
        );
        assert_eq!(report.still_missing, 0);
        assert_eq!(report.filled, 6);
        let h = heights(&points);
        assert_eq!(h[0], Some(10.0));
        assert!(close(h[1].expect("between samples"), 20.0), "{h:?}");
        // 5 and 6 lie between the recorded 60 m at 4 and the sample of 90 m at 7.
        assert!(close(h[5].expect("interpolated"), 70.0), "{h:?}");
        assert!(close(h[6].expect("interpolated"), 80.0), "{h:?}");

        // A start run whose only answer is its last point: carried back to the start.
        let mut points = track(&[None, None, Some(40.0)]);
        assert_eq!(fill(&mut points, &[(1, Some(30.0))]).still_missing, 0);
        assert_eq!(heights(&points), [Some(30.0), Some(30.0), Some(40.0)]);
        // And at the end, carried forward.
        let mut points = track(&[Some(40.0), None, None]);
        fill(&mut points, &[(1, Some(30.0))]);
        assert_eq!(heights(&points), [Some(40.0), Some(30.0), Some(30.0)]);
    }

    #[test]
    fn empty_answers_stay_missing_and_stop_interpolation() {
        // Route samples 0 and 4 of a run of five; 4 came back empty (a void).
        let mut points = track(&[None, None, None, None, None]);
        let report = fill(&mut points, &[(0, Some(100.0)), (4, None)]);
        // 1..3 carry the only height next to them; the empty look-up stays empty.
        assert_eq!(
            heights(&points),
            [Some(100.0), Some(100.0), Some(100.0), Some(100.0), None]
        );
        assert_eq!(
            report,
            FillReport {
                filled: 4,
                still_missing: 1
            }
        );

        // A run no height came back for stays missing, whatever surrounds it.
        let mut points = track(&[Some(10.0), None, None, None, Some(20.0), None, Some(30.0)]);
        let report = fill(&mut points, &[(1, None), (3, None), (5, Some(25.0))]);
        assert_eq!(
            heights(&points),
            [
                Some(10.0),
                None,
                None,
                None,
                Some(20.0),
                Some(25.0),
                Some(30.0)
            ]
        );
        assert_eq!(
            report,
            FillReport {
                filled: 1,
                still_missing: 3
            }
        );
    }

    #[test]
    fn recorded_heights_and_bad_samples_are_left_alone() {
        let mut points = track(&[Some(10.0), None, Some(30.0)]);
        let report = fill(
            &mut points,
            &[(0, Some(999.0)), (7, Some(1.0)), (1, Some(f64::NAN))],
        );
        // Index 1 was looked up and gave no usable height: it stays missing.
        assert_eq!(heights(&points), [Some(10.0), None, Some(30.0)]);
        assert_eq!(
            report,
            FillReport {
                filled: 0,
                still_missing: 1
            }
        );
        let mut none: Vec<TrackPoint> = Vec::new();
        assert_eq!(fill(&mut none, &[(0, Some(1.0))]), FillReport::default());
    }

    #[test]
    fn short_gaps_are_closed_and_long_ones_kept() {
        // Points ~111 m apart: 10 m, then a 2-point gap (333 m between the known heights),
        // 40 m, a 5-point gap (667 m), 100 m, and a run at the end.
        let mut points = track(&[
            Some(10.0),
            None,
            None,
            Some(40.0),
            None,
            None,
            None,
            None,
            None,
            Some(100.0),
            None,
        ]);
        let filled = interpolate_short_gaps(&mut points, SHORT_GAP_M);
        assert_eq!(filled, 2);
        let h = heights(&points);
        assert!(close(h[1].expect("short gap"), 20.0), "{h:?}");
        assert!(close(h[2].expect("short gap"), 30.0), "{h:?}");
        assert!(h[4..9].iter().all(Option::is_none), "the long gap is kept");
        assert_eq!(h[10], None, "nothing after the last height");
        assert_eq!(missing_runs(&points), [4..9, 10..11]);
        // A wider limit closes the long gap too, and nothing is filled twice.
        assert_eq!(interpolate_short_gaps(&mut points, 1_000.0), 5);
        assert!(close(points[6].ele.expect("filled"), 70.0));
        assert_eq!(interpolate_short_gaps(&mut points, 1_000.0), 0);
        let mut start_gap = track(&[None, Some(1.0)]);
        assert_eq!(interpolate_short_gaps(&mut start_gap, 1_000.0), 0);
    }

    #[test]
    fn repeated_points_take_the_mean() {
        let mut points = vec![
            point(45.0, Some(10.0)),
            point(45.0, None),
            point(45.0, Some(20.0)),
        ];
        assert_eq!(interpolate_short_gaps(&mut points, SHORT_GAP_M), 1);
        assert_eq!(points[1].ele, Some(15.0));
    }
}
