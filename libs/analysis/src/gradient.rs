//! Detection of sustained steep climbs along a stage.
//!
//! Definition (the contract tested below):
//!
//! 1. **Samples.** Only points with a finite elevation, finite distance and
//!    finite coordinates are used, in track order; a point whose cumulative
//!    distance goes backwards is dropped, since distance must be monotone
//!    for windows to make sense.
//! 2. **Despiking.** Each elevation is replaced by the median of itself and
//!    two neighbours on each side (by index). Near the ends the window
//!    shrinks symmetrically (3 samples for the second and the second-to-last
//!    sample), and the first and last samples take the median of themselves
//!    and their two inward neighbours, so the window is always odd and a bad
//!    end sample is removed too. A median leaves any monotone stretch
//!    unchanged, so real climbs keep their profile (only the two end samples
//!    may move by one sample step), while one or two isolated bad samples
//!    (GPS or DEM spikes, drop-outs to 0 m) disappear entirely.
//! 3. **Windows.** For each sample *i*, its window ends at the first sample
//!    *j* with `d[j] − d[i] ≥ 500 m`; the window grade is
//!    `(e[j] − e[i]) / (d[j] − d[i])`. A window is steep when its grade is
//!    ≥ 8 % (uphill in the direction of travel only: the rule is about effort).
//! 4. **Runs.** A run is a maximal sequence of consecutive samples whose
//!    windows are all steep; it spans from its first window's start to its
//!    last window's end. So along a run every sliding ≥ 500 m window climbs
//!    at least 8 %.
//! 5. **Report.** The worst run is the one with the steepest window (ties:
//!    the longer run). It is reported with its start point, length, overall
//!    average grade (rise over length, which can be below 8 % when the run
//!    is carried by a short wall) and steepest window grade.

/// Minimum horizontal length of a window, in metres.
pub const MIN_WINDOW_M: f64 = 500.0;
/// Minimum average grade of a window for it to count as steep (8 %).
pub const MIN_GRADE: f64 = 0.08;
/// Samples taken on each side of a point by the despiking median.
const MEDIAN_HALF_WIDTH: usize = 2;

use crate::model::StagePoint;

/// The worst steep run of a stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteepRun {
    /// Start of the run (the original track point).
    pub start_lat: f64,
    /// Start of the run (the original track point).
    pub start_lon: f64,
    /// Distance of the run start from the stage start, in metres.
    pub start_distance_m: f64,
    /// Horizontal length of the run, in metres.
    pub length_m: f64,
    /// Elevation gained over the run (despiked), in metres.
    pub rise_m: f64,
    /// Rise over length, as a fraction (0.095 = 9.5 %).
    pub average_grade: f64,
    /// Grade of the steepest ≥ 500 m window in the run, as a fraction.
    pub max_window_grade: f64,
    /// Number of separate steep runs on the stage (the worst is reported).
    pub run_count: usize,
}

/// A usable sample: position, distance and elevation.
#[derive(Debug, Clone, Copy)]
struct Sample {
    lat: f64,
    lon: f64,
    d: f64,
    e: f64,
}

fn samples(points: &[StagePoint]) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::with_capacity(points.len());
    for p in points {
        let Some(e) = p.ele else { continue };
        if !(e.is_finite() && p.distance_m.is_finite() && p.lat.is_finite() && p.lon.is_finite()) {
            continue;
        }
        if out.last().is_some_and(|last| p.distance_m < last.d) {
            continue;
        }
        out.push(Sample {
            lat: p.lat,
            lon: p.lon,
            d: p.distance_m,
            e,
        });
    }
    out
}

/// Running median over an odd window: `[i − k, i + k]` with
/// `k = min(2, i, n − 1 − i)`, except that the two end samples use their
/// two inward neighbours (a window of one would let an end spike through).
fn despiked(samples: &[Sample]) -> Vec<f64> {
    let n = samples.len();
    let mut out = Vec::with_capacity(n);
    let mut buf: Vec<f64> = Vec::with_capacity(2 * MEDIAN_HALF_WIDTH + 1);
    for i in 0..n {
        let half = MEDIAN_HALF_WIDTH.min(i).min(n - 1 - i);
        let (lo, hi) = match (half, n >= 3) {
            (0, true) if i == 0 => (0, 2),
            (0, true) => (n - 3, n - 1),
            _ => (i - half, i + half),
        };
        buf.clear();
        buf.extend(samples[lo..=hi].iter().map(|s| s.e));
        buf.sort_by(f64::total_cmp);
        out.push(buf[buf.len() / 2]);
    }
    out
}

/// A run being built or finished: sample indices and its steepest window.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: usize,
    end: usize,
    max_grade: f64,
}

/// Finds the worst sustained steep climb, or `None` if there is none.
pub fn worst_steep_run(points: &[StagePoint]) -> Option<SteepRun> {
    let s = samples(points);
    if s.len() < 2 {
        return None;
    }
    let e = despiked(&s);
    let n = s.len();

    let mut runs: Vec<Run> = Vec::new();
    let mut current: Option<Run> = None;
    // Two pointers: the window end only ever moves forward, so this is O(n).
    let mut j = 0;
    for i in 0..n {
        j = j.max(i);
        while j < n && s[j].d - s[i].d < MIN_WINDOW_M {
            j += 1;
        }
        if j >= n {
            // No window of 500 m starts here or later.
            break;
        }
        let grade = (e[j] - e[i]) / (s[j].d - s[i].d);
        if grade >= MIN_GRADE {
            current = Some(match current {
                Some(run) => Run {
                    first: run.first,
                    end: j,
                    max_grade: run.max_grade.max(grade),
                },
                None => Run {
                    first: i,
                    end: j,
                    max_grade: grade,
                },
            });
        } else if let Some(run) = current.take() {
            runs.push(run);
        }
    }
    if let Some(run) = current.take() {
        runs.push(run);
    }

    let run_count = runs.len();
    let length = |r: &Run| s[r.end].d - s[r.first].d;
    let worst = runs.iter().copied().reduce(|best, r| {
        let better = r.max_grade > best.max_grade
            || (r.max_grade == best.max_grade && length(&r) > length(&best));
        if better { r } else { best }
    })?;
    let length_m = length(&worst);
    let rise_m = e[worst.end] - e[worst.first];
    Some(SteepRun {
        start_lat: s[worst.first].lat,
        start_lon: s[worst.first].lon,
        start_distance_m: s[worst.first].d,
        length_m,
        rise_m,
        average_grade: rise_m / length_m,
        max_window_grade: worst.max_grade,
        run_count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points every `step` metres with elevation given by `profile(d)`.
    fn track(total_m: f64, step: f64, profile: impl Fn(f64) -> f64) -> Vec<StagePoint> {
        let n = (total_m / step).round() as usize;
        (0..=n)
            .map(|k| {
                let d = k as f64 * step;
                StagePoint {
                    lat: 45.0 + d / 111_000.0,
                    lon: 6.0,
                    ele: Some(profile(d)),
                    distance_m: d,
                }
            })
            .collect()
    }

    /// Flat, then a climb at `grade` from 2 km for `len` metres, then flat.
    fn climb(grade: f64, len: f64) -> impl Fn(f64) -> f64 {
        move |d| 300.0 + grade * (d - 2_000.0).clamp(0.0, len)
    }

    #[test]
    fn flat_track_has_no_run() {
        assert_eq!(worst_steep_run(&track(10_000.0, 10.0, |_| 100.0)), None);
    }

    #[test]
    fn empty_and_tiny_tracks() {
        assert_eq!(worst_steep_run(&[]), None);
        let one = track(0.0, 10.0, |_| 0.0);
        assert_eq!(worst_steep_run(&one), None);
        // Too short for any 500 m window even though it is a wall.
        assert_eq!(worst_steep_run(&track(400.0, 10.0, |d| d * 0.3)), None);
    }

    #[test]
    fn sustained_climb_is_found_with_its_extent() {
        // 12.5 % is exact in binary, so the boundaries below are exact.
        let run = worst_steep_run(&track(10_000.0, 25.0, climb(0.125, 1_500.0)));
        let run = run.unwrap_or_else(|| panic!("expected a steep run"));
        assert_eq!(run.run_count, 1);
        assert_eq!(run.max_window_grade, 0.125);
        // A window is steep once ≥ 320 of its 500 m are on the ramp: the
        // first such window (25 m sampling) starts at 1,825 m, the last
        // starts at 3,175 m and ends at 3,675 m.
        assert_eq!(run.start_distance_m, 1_825.0, "{run:?}");
        assert_eq!(run.length_m, 1_850.0, "{run:?}");
        assert_eq!(run.rise_m, 187.5);
        assert!((run.start_lat - (45.0 + 1_825.0 / 111_000.0)).abs() < 1e-12);
    }

    #[test]
    fn exactly_eight_percent_over_exactly_500_m_counts() {
        // 2 m per 25 m is exactly 8 %, and 40 / 500 rounds to the same
        // double as the literal 0.08.
        let run = worst_steep_run(&track(5_000.0, 25.0, climb(0.08, 500.0)));
        let run = run.unwrap_or_else(|| panic!("expected a steep run"));
        assert!((run.length_m - 500.0).abs() < 1e-9);
        assert!((run.average_grade - 0.08).abs() < 1e-12);
    }

    #[test]
    fn just_below_threshold_or_too_short_is_ignored() {
        assert_eq!(
            worst_steep_run(&track(5_000.0, 25.0, climb(0.079, 3_000.0))),
            None
        );
        // 8 % for only 475 m: every 500 m window includes flat road.
        assert_eq!(
            worst_steep_run(&track(5_000.0, 25.0, climb(0.08, 475.0))),
            None
        );
        // Steep descents do not count.
        assert_eq!(
            worst_steep_run(&track(5_000.0, 25.0, |d| 1_000.0 - 0.12 * d)),
            None
        );
    }

    #[test]
    fn single_spike_does_not_trigger() {
        for step in [10.0, 25.0, 100.0] {
            let mut pts = track(5_000.0, step, |_| 200.0);
            let mid = pts.len() / 2;
            pts[mid].ele = Some(280.0);
            assert_eq!(worst_steep_run(&pts), None, "step {step}");
            // A drop-out to 0 m is also a spike.
            pts[mid].ele = Some(0.0);
            assert_eq!(worst_steep_run(&pts), None, "step {step}");
            // Spikes at the very first and last samples too.
            let mut pts = track(5_000.0, step, |_| 200.0);
            pts[0].ele = Some(0.0);
            let last = pts.len() - 1;
            pts[last].ele = Some(500.0);
            assert_eq!(worst_steep_run(&pts), None, "step {step}");
        }
    }

    #[test]
    fn two_adjacent_spikes_do_not_trigger() {
        let mut pts = track(5_000.0, 20.0, |_| 200.0);
        pts[100].ele = Some(260.0);
        pts[101].ele = Some(265.0);
        assert_eq!(worst_steep_run(&pts), None);
    }

    #[test]
    fn spike_inside_a_real_climb_keeps_the_climb() {
        let mut pts = track(6_000.0, 25.0, climb(0.10, 2_000.0));
        pts[120].ele = Some(9_000.0);
        let run = worst_steep_run(&pts).unwrap_or_else(|| panic!("expected a run"));
        // The median shifts the three samples around the spike by one step
        // (2.5 m), so the steepest window reads at most 0.5 % high.
        assert!((run.max_window_grade - 0.10).abs() < 0.006, "{run:?}");
        assert_eq!(run.run_count, 1);
    }

    #[test]
    fn noisy_moderate_road_stays_quiet() {
        // 5 % road with ±3 m deterministic jitter, sampled every 20 m.
        let pts = track(10_000.0, 20.0, |d| {
            let k = (d / 20.0) as i64;
            let jitter = [0.0, 3.0, -2.0, 1.0, -3.0, 2.0, -1.0][k.rem_euclid(7) as usize];
            100.0 + 0.05 * d + jitter
        });
        assert_eq!(worst_steep_run(&pts), None);
    }

    #[test]
    fn worst_of_several_runs_is_reported() {
        // 9 % ramp at 2 km, then a 12 % ramp at 6 km.
        let pts = track(10_000.0, 25.0, |d| {
            300.0
                + 0.09 * (d - 2_000.0).clamp(0.0, 1_000.0)
                + 0.12 * (d - 6_000.0).clamp(0.0, 800.0)
        });
        let run = worst_steep_run(&pts).unwrap_or_else(|| panic!("expected a run"));
        assert_eq!(run.run_count, 2);
        assert!((run.max_window_grade - 0.12).abs() < 1e-9);
        assert!(run.start_distance_m > 5_000.0);
    }

    #[test]
    fn points_without_elevation_or_going_backwards_are_skipped() {
        let mut pts = track(4_000.0, 25.0, climb(0.10, 1_000.0));
        for p in pts.iter_mut().step_by(3) {
            p.ele = None;
        }
        pts[50].distance_m = 0.0;
        pts[60].ele = Some(f64::NAN);
        let run = worst_steep_run(&pts).unwrap_or_else(|| panic!("expected a run"));
        assert!((run.max_window_grade - 0.10).abs() < 0.005, "{run:?}");
        let none: Vec<StagePoint> = pts.iter().map(|p| StagePoint { ele: None, ..*p }).collect();
        assert_eq!(worst_steep_run(&none), None);
    }

    #[test]
    fn sparse_points_use_longer_windows() {
        // One point per kilometre: each window is 1 km long.
        let pts = track(5_000.0, 1_000.0, |d| if d >= 2_000.0 { 100.0 } else { 0.0 });
        // The 100 m step is a lasting plateau, not an isolated sample, so
        // the median keeps it even on data this sparse: a 10 % kilometre.
        let run = worst_steep_run(&pts).unwrap_or_else(|| panic!("expected a run"));
        assert!((run.max_window_grade - 0.10).abs() < 1e-9, "{run:?}");
    }
}
