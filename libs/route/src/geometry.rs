//! Route measurements: great-circle distances, climbing totals that resist
//! GPS/barometer noise, and Douglas–Peucker simplification for map display.
//!
//! Constants and why:
//! - [`EARTH_RADIUS_M`] = 6,371,008.8 m, the IUGG mean radius: the sphere
//!   that minimises the error of haversine distances over all bearings.
//! - [`SMOOTHING_WINDOW_M`] = 100 m: elevations are averaged over a window
//!   of ±50 m of *distance* (not of point count), so dense 1 s recordings and
//!   sparse planner exports are smoothed alike. 100 m is long enough to
//!   average away GPS/DEM jitter (typically ±3–5 m point to point) and short
//!   enough to keep a real 20 m ramp. The window shrinks symmetrically near
//!   the ends of the track so that the first and last elevations are kept
//!   exactly (a clean linear climb keeps its full height).
//! - [`HYSTERESIS_M`] = 5 m: after smoothing, a climb or descent is only
//!   counted once the smoothed profile has moved 5 m away from the last
//!   turning point; the whole swing (turning point to turning point) is then
//!   counted. Residual wobble below 5 m never adds up, while every real
//!   climb of 5 m or more is counted in full.
//!
//! Simplification projects points on a local equirectangular plane (x scaled
//! by the cosine of the track's mean latitude). Over a few hundred
//! kilometres the distortion is below 2 %, far below what a 5–20 m display
//! tolerance can notice, and it costs no trigonometry per comparison.

use etappe_geo::{CosineWalk, haversine_with_cos_m};

use crate::TrackPoint;

/// Mean Earth radius (IUGG), metres.
pub use etappe_geo::EARTH_RADIUS_M;
/// Total width of the distance-based moving average applied to elevations.
pub const SMOOTHING_WINDOW_M: f64 = 100.0;
/// Minimum smoothed elevation swing counted as climbing or descending.
pub const HYSTERESIS_M: f64 = 5.0;

/// Great-circle distance between two points, metres.
pub fn haversine_m(a: &TrackPoint, b: &TrackPoint) -> f64 {
    etappe_geo::haversine_m(a.lat, a.lon, b.lat, b.lon)
}

/// Distance along the track from the first point to each point, metres.
/// Same length as `points`; starts at 0 and never decreases.
pub fn cumulative_distances(points: &[TrackPoint]) -> Vec<f64> {
    let mut out = Vec::with_capacity(points.len());
    let mut iter = points.iter();
    let Some(first) = iter.next() else {
        return out;
    };
    out.push(0.0);
    let mut total = 0.0;
    let mut prev_lat = first.lat.to_radians();
    let mut cosines = CosineWalk::new(prev_lat);
    let mut prev_cos = prev_lat.cos();
    let mut prev_lon = first.lon;
    for p in iter {
        let lat = p.lat.to_radians();
        let cos = cosines.cos(lat);
        total += haversine_with_cos_m(prev_lat, prev_cos, lat, cos, p.lon - prev_lon);
        out.push(total);
        (prev_lat, prev_cos, prev_lon) = (lat, cos, p.lon);
    }
    out
}

/// Total ascent and descent in metres, `(gain, loss)`, both ≥ 0, after
/// distance-based smoothing and hysteresis (see the module documentation).
/// Points without elevation are skipped; fewer than two elevations give
/// `(0.0, 0.0)`.
pub fn elevation_gain_loss(points: &[TrackPoint]) -> (f64, f64) {
    let cumulative = cumulative_distances(points);
    elevation_gain_loss_with(points, &cumulative)
}

/// Like [`cumulative_distances`], but the step onto each index in `breaks`
/// (sorted ascending) counts nothing: it is a gap between recorded pieces,
/// not ridden (see [`crate::pieces`]).
pub fn cumulative_distances_with_breaks(points: &[TrackPoint], breaks: &[usize]) -> Vec<f64> {
    let raw = cumulative_distances(points);
    let mut out = Vec::with_capacity(raw.len());
    let mut pending = breaks.iter().copied().peekable();
    let (mut total, mut previous) = (0.0, 0.0);
    for (i, &d) in raw.iter().enumerate() {
        while pending.next_if(|&b| b < i).is_some() {}
        if pending.next_if_eq(&i).is_none() {
            total += d - previous;
        }
        previous = d;
        out.push(total);
    }
    out
}

/// The climbing of a day, the one figure the app shows and exports
/// (`(gain, loss)` as in [`elevation_gain_loss`]): each piece between
/// `breaks` (indices into `points`, sorted) is smoothed and summed on its
/// own, so the height difference across a gap is never climbed.
pub fn day_climb(points: &[TrackPoint], breaks: &[usize]) -> (f64, f64) {
    day_climb_with(points, &cumulative_distances(points), breaks)
}

/// [`day_climb`] with the points' distances already measured: `cumulative` holds each point's
/// distance along the route, from any start and with the breaks' steps counted or not (only
/// differences inside a piece are read). A route is measured once, not once per figure.
pub fn day_climb_with(points: &[TrackPoint], cumulative: &[f64], breaks: &[usize]) -> (f64, f64) {
    let (mut gain, mut loss) = (0.0, 0.0);
    for (start, end) in pieces(points.len().min(cumulative.len()), breaks) {
        let (g, l) = elevation_gain_loss_with(
            points.get(start..end).unwrap_or_default(),
            cumulative.get(start..end).unwrap_or_default(),
        );
        gain += g;
        loss += l;
    }
    (gain, loss)
}

/// The pieces of `len` points between `breaks` (sorted), as `start..end` index ranges.
fn pieces(len: usize, breaks: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    breaks
        .iter()
        .copied()
        .chain(std::iter::once(len))
        .filter_map(move |b| {
            let end = b.min(len);
            (end > start).then(|| {
                let piece = (start, end);
                start = end;
                piece
            })
        })
}

/// Climbing from the first point to each point, metres (one value per point, starting at 0,
/// never decreasing): where along the route the climbing lies, for cutting days by effort.
/// Each piece between `breaks` is smoothed as [`day_climb`] smooths it and its rises are
/// summed point by point; the whole is then scaled so the last value is [`day_climb`]'s gain,
/// so the days' share of the climbing adds up to the figure the rider sees. Points without a
/// height climb nothing.
pub fn cumulative_ascent(points: &[TrackPoint], breaks: &[usize]) -> Vec<f64> {
    cumulative_ascent_with(points, &cumulative_distances(points), breaks)
}

/// [`cumulative_ascent`] with the points' distances already measured (as
/// [`day_climb_with`] reads them). Each piece is smoothed once: its rises place the climbing
/// and its swings give [`day_climb`]'s gain, the total the rises are scaled to.
pub fn cumulative_ascent_with(
    points: &[TrackPoint],
    cumulative: &[f64],
    breaks: &[usize],
) -> Vec<f64> {
    let mut rises = vec![0.0; points.len()];
    let mut gain = 0.0;
    for (start, end) in pieces(points.len().min(cumulative.len()), breaks) {
        let heights: Vec<(usize, f64, f64)> = (start..end)
            .filter_map(|i| {
                let e = points.get(i)?.ele.filter(|e| e.is_finite())?;
                Some((i, *cumulative.get(i)?, e))
            })
            .collect();
        if heights.len() >= 2 {
            let samples: Vec<(f64, f64)> = heights.iter().map(|&(_, d, e)| (d, e)).collect();
            let smoothed = smooth(&samples, SMOOTHING_WINDOW_M * 0.5);
            for (pair, &(i, _, _)) in smoothed.windows(2).zip(heights.iter().skip(1)) {
                if let ([a, b], Some(rise)) = (pair, rises.get_mut(i)) {
                    *rise += (b - a).max(0.0);
                }
            }
            gain += hysteresis(&smoothed, HYSTERESIS_M).0;
        }
    }
    let raw: f64 = rises.iter().sum();
    let scale = if raw > 0.0 { gain / raw } else { 0.0 };
    let mut total = 0.0;
    rises
        .iter()
        .map(|r| {
            total += r * scale;
            total
        })
        .collect()
}

/// [`day_climb`] when every point has a height, else `None`: climbing is unknown rather than
/// the sum of whatever heights happen to be there (a route without elevation is not flat).
pub fn known_climb(points: &[TrackPoint], breaks: &[usize]) -> Option<(f64, f64)> {
    points
        .iter()
        .all(|p| p.ele.is_some_and(f64::is_finite))
        .then(|| day_climb(points, breaks))
}

/// [`elevation_gain_loss`] with the cumulative distances already computed
/// (any constant offset is fine: only differences are used).
pub(crate) fn elevation_gain_loss_with(points: &[TrackPoint], cumulative: &[f64]) -> (f64, f64) {
    let samples: Vec<(f64, f64)> = points
        .iter()
        .zip(cumulative)
        .filter_map(|(p, &d)| p.ele.filter(|e| e.is_finite()).map(|e| (d, e)))
        .collect();
    if samples.len() < 2 {
        return (0.0, 0.0);
    }
    let smoothed = smooth(&samples, SMOOTHING_WINDOW_M * 0.5);
    hysteresis(&smoothed, HYSTERESIS_M)
}

/// Centred moving average over ±`half_window_m` of distance, in O(n) with a
/// sliding sum. Near the ends the half-width shrinks to the distance to the
/// end, keeping the window symmetric so linear trends are not biased.
fn smooth(samples: &[(f64, f64)], half_window_m: f64) -> Vec<f64> {
    let (Some(&(d_first, _)), Some(&(d_last, _))) = (samples.first(), samples.last()) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(samples.len());
    let (mut lo, mut hi) = (0usize, 0usize);
    let mut sum = 0.0;
    for &(d, e) in samples {
        let half = half_window_m.min(d - d_first).min(d_last - d).max(0.0);
        let (left, right) = (d - half, d + half);
        while let Some(&(dh, eh)) = samples.get(hi) {
            if dh > right {
                break;
            }
            sum += eh;
            hi += 1;
        }
        while let Some(&(dl, el)) = samples.get(lo) {
            if dl >= left || lo + 1 >= hi {
                break;
            }
            sum -= el;
            lo += 1;
        }
        let count = hi.saturating_sub(lo);
        out.push(if count == 0 { e } else { sum / count as f64 });
    }
    out
}

/// Direction state of the hysteresis walk.
enum Trend {
    /// No swing of `threshold` seen yet: track both extremes from the start.
    Unknown {
        min: f64,
        max: f64,
    },
    Up {
        from: f64,
        peak: f64,
    },
    Down {
        from: f64,
        trough: f64,
    },
}

/// Sums swings between turning points, where a turning point is only
/// confirmed once the profile has moved `threshold` away from it.
fn hysteresis(values: &[f64], threshold: f64) -> (f64, f64) {
    let mut iter = values.iter().copied();
    let Some(first) = iter.next() else {
        return (0.0, 0.0);
    };
    let (mut gain, mut loss) = (0.0, 0.0);
    let mut trend = Trend::Unknown {
        min: first,
        max: first,
    };
    for v in iter {
        trend = match trend {
            Trend::Unknown { min, max } => {
                let (min, max) = (min.min(v), max.max(v));
                if v - min >= threshold {
                    Trend::Up { from: min, peak: v }
                } else if max - v >= threshold {
                    Trend::Down {
                        from: max,
                        trough: v,
                    }
                } else {
                    Trend::Unknown { min, max }
                }
            }
            Trend::Up { from, peak } => {
                if v >= peak {
                    Trend::Up { from, peak: v }
                } else if peak - v >= threshold {
                    gain += peak - from;
                    Trend::Down {
                        from: peak,
                        trough: v,
                    }
                } else {
                    Trend::Up { from, peak }
                }
            }
            Trend::Down { from, trough } => {
                if v <= trough {
                    Trend::Down { from, trough: v }
                } else if v - trough >= threshold {
                    loss += from - trough;
                    Trend::Up {
                        from: trough,
                        peak: v,
                    }
                } else {
                    Trend::Down { from, trough }
                }
            }
        };
    }
    // The last swing is complete by definition: the track ends there.
    match trend {
        Trend::Up { from, peak } => gain += peak - from,
        Trend::Down { from, trough } => loss += from - trough,
        Trend::Unknown { .. } => {}
    }
    (gain, loss)
}

/// Douglas–Peucker simplification: keeps the first and last point and every
/// point needed so that no dropped point lies farther than `tolerance_m`
/// (horizontal metres) from the simplified line. Elevation is carried along
/// but not considered. Iterative with an explicit stack, so a million-point
/// track cannot overflow the call stack. A tolerance that is NaN or ≤ 0
/// returns the points unchanged.
pub fn simplify(points: &[TrackPoint], tolerance_m: f64) -> Vec<TrackPoint> {
    if points.len() <= 2 || tolerance_m.is_nan() || tolerance_m <= 0.0 {
        return points.to_vec();
    }
    let xy = project(points);
    let tolerance_sq = tolerance_m * tolerance_m;
    let last = points.len() - 1;
    let mut keep = vec![false; points.len()];
    if let Some(k) = keep.first_mut() {
        *k = true;
    }
    if let Some(k) = keep.last_mut() {
        *k = true;
    }
    let mut stack = vec![(0usize, last)];
    while let Some((start, end)) = stack.pop() {
        let (Some(&a), Some(&b)) = (xy.get(start), xy.get(end)) else {
            continue;
        };
        let Some(inner) = xy.get(start + 1..end) else {
            continue;
        };
        let mut best = (0.0f64, 0usize);
        for (offset, &p) in inner.iter().enumerate() {
            let d = segment_distance_sq(p, a, b);
            if d > best.0 {
                best = (d, start + 1 + offset);
            }
        }
        if best.0 > tolerance_sq {
            if let Some(k) = keep.get_mut(best.1) {
                *k = true;
            }
            stack.push((start, best.1));
            stack.push((best.1, end));
        }
    }
    points
        .iter()
        .zip(&keep)
        .filter_map(|(p, &k)| k.then_some(*p))
        .collect()
}

/// Local equirectangular projection around the first point, metres. The x
/// scale uses the mean latitude; longitude differences are wrapped so a
/// track crossing the antimeridian stays continuous.
fn project(points: &[TrackPoint]) -> Vec<(f64, f64)> {
    let Some(origin) = points.first() else {
        return Vec::new();
    };
    let mean_lat = points.iter().map(|p| p.lat).sum::<f64>() / points.len() as f64;
    let kx = EARTH_RADIUS_M * mean_lat.to_radians().cos();
    let ky = EARTH_RADIUS_M;
    points
        .iter()
        .map(|p| {
            let mut dlon = p.lon - origin.lon;
            if dlon > 180.0 {
                dlon -= 360.0;
            } else if dlon < -180.0 {
                dlon += 360.0;
            }
            (
                kx * dlon.to_radians(),
                ky * (p.lat - origin.lat).to_radians(),
            )
        })
        .collect()
}

/// Squared distance from `p` to the segment `a`–`b` (not the infinite line:
/// for loops and back-and-forth tracks the line distance would drop points
/// that stick out beyond a segment's ends).
fn segment_distance_sq(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len_sq = dx * dx + dy * dy;
    let t = if len_sq > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len_sq).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (cx, cy) = (a.0 + t * dx - p.0, a.1 + t * dy - p.1);
    cx * cx + cy * cy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{Profile, synthetic_route};

    fn pt(lat: f64, lon: f64, ele: Option<f64>) -> TrackPoint {
        TrackPoint { lat, lon, ele }
    }

    #[test]
    fn haversine_matches_known_distances() {
        // One degree of latitude on the mean sphere: R·π/180.
        let d = haversine_m(&pt(0.0, 0.0, None), &pt(1.0, 0.0, None));
        assert!((d - 111_195.08).abs() < 0.01, "{d}");
        // Paris Notre-Dame → London Charing Cross ≈ 343.9 km on this sphere.
        let d = haversine_m(&pt(48.8530, 2.3499, None), &pt(51.5072, -0.1276, None));
        assert!((d - 343_900.0).abs() < 1_000.0, "{d}");
        // Antipodes: half the circumference, no NaN.
        let d = haversine_m(&pt(0.0, 0.0, None), &pt(0.0, 180.0, None));
        assert!((d - std::f64::consts::PI * EARTH_RADIUS_M).abs() < 1e-6);
        assert_eq!(haversine_m(&pt(45.0, 6.0, None), &pt(45.0, 6.0, None)), 0.0);
    }

    #[test]
    fn cumulative_distances_add_up() {
        assert!(cumulative_distances(&[]).is_empty());
        assert_eq!(cumulative_distances(&[pt(1.0, 1.0, None)]), vec![0.0]);
        let pts = synthetic_route(10.0, 100.0, Profile::Flat);
        let cum = cumulative_distances(&pts);
        assert_eq!(cum.len(), pts.len());
        assert!(cum.windows(2).all(|w| w[1] >= w[0]));
        let last = cum.last().copied().unwrap_or_default();
        assert!((last - 10_000.0).abs() < 1e-6, "{last}");
    }

    #[test]
    fn noisy_flat_track_has_near_zero_gain() {
        let pts = synthetic_route(
            50.0,
            10.0,
            Profile::Noisy {
                amplitude_m: 3.0,
                seed: 7,
            },
        );
        let raw_gain: f64 = pts
            .windows(2)
            .filter_map(|w| Some((w[1].ele? - w[0].ele?).max(0.0)))
            .sum();
        let (gain, loss) = elevation_gain_loss(&pts);
        // The raw device-style sum counts thousands of metres of noise.
        assert!(raw_gain > 3_000.0, "raw {raw_gain}");
        assert!(gain < 15.0 && loss < 15.0, "gain {gain} loss {loss}");
    }

    #[test]
    fn clean_climb_is_counted_in_full() {
        let pts = synthetic_route(20.0, 10.0, Profile::Ramp { gain_m: 1_000.0 });
        let (gain, loss) = elevation_gain_loss(&pts);
        assert!((gain - 1_000.0).abs() < 1.0, "gain {gain}");
        assert!(loss < 1e-6, "loss {loss}");
    }

    #[test]
    fn repeated_climbs_and_noise_on_a_climb() {
        // 10 climbs of 120 m each, then back down: 1,200 m up, 1,200 m down.
        let pts = synthetic_route(
            100.0,
            25.0,
            Profile::Climbs {
                height_m: 120.0,
                period_km: 10.0,
            },
        );
        let (gain, loss) = elevation_gain_loss(&pts);
        assert!((gain - 1_200.0).abs() < 5.0, "gain {gain}");
        assert!((loss - 1_200.0).abs() < 5.0, "loss {loss}");

        // ±3 m noise on top of a 1,000 m ramp must not inflate the gain much.
        let mut noisy = synthetic_route(20.0, 10.0, Profile::Ramp { gain_m: 1_000.0 });
        let noise = synthetic_route(
            20.0,
            10.0,
            Profile::Noisy {
                amplitude_m: 3.0,
                seed: 11,
            },
        );
        for (p, n) in noisy.iter_mut().zip(&noise) {
            p.ele = Some(p.ele.unwrap_or_default() + n.ele.unwrap_or_default() - 200.0);
        }
        let (gain, _) = elevation_gain_loss(&noisy);
        assert!((gain - 1_000.0).abs() < 15.0, "gain {gain}");
    }

    #[test]
    fn points_without_elevation_are_skipped() {
        let mut pts = synthetic_route(20.0, 10.0, Profile::Ramp { gain_m: 1_000.0 });
        for (i, p) in pts.iter_mut().enumerate() {
            if i % 3 == 1 {
                p.ele = None;
            }
        }
        let (gain, _) = elevation_gain_loss(&pts);
        assert!((gain - 1_000.0).abs() < 1.0, "gain {gain}");
        let none: Vec<_> = pts.iter().map(|p| pt(p.lat, p.lon, None)).collect();
        assert_eq!(elevation_gain_loss(&none), (0.0, 0.0));
        assert_eq!(elevation_gain_loss(&[]), (0.0, 0.0));
    }

    #[test]
    fn hysteresis_counts_whole_swings_only() {
        assert_eq!(hysteresis(&[0.0, 4.0, 0.0, 4.0, 0.0], 5.0), (0.0, 0.0));
        assert_eq!(hysteresis(&[0.0, 3.0, 10.0, 6.0, 20.0], 5.0), (20.0, 0.0));
        assert_eq!(
            hysteresis(&[10.0, 12.0, 0.0, 30.0, 24.0], 5.0),
            (30.0, 18.0)
        );
    }

    #[test]
    fn simplify_keeps_shape_within_tolerance() {
        let pts = synthetic_route(50.0, 10.0, Profile::Flat);
        let simple = simplify(&pts, 10.0);
        assert_eq!(simple.first(), pts.first());
        assert_eq!(simple.last(), pts.last());
        assert!(
            simple.len() < pts.len() / 10,
            "{} of {}",
            simple.len(),
            pts.len()
        );
        assert!(simple.len() > 10, "{}", simple.len());
        // Every original point stays within tolerance of the simplified line
        // (checked in the same projection, with a little slack for it).
        let all = project(&pts);
        let kept: Vec<usize> = pts
            .iter()
            .enumerate()
            .filter(|(_, p)| simple.contains(p))
            .map(|(i, _)| i)
            .collect();
        for w in kept.windows(2) {
            for i in w[0]..=w[1] {
                let d = segment_distance_sq(all[i], all[w[0]], all[w[1]]).sqrt();
                assert!(d <= 10.0 + 1e-6, "point {i} is {d} m off");
            }
        }
    }

    #[test]
    fn simplify_edge_cases() {
        assert!(simplify(&[], 5.0).is_empty());
        let two = [pt(0.0, 0.0, None), pt(1.0, 1.0, None)];
        assert_eq!(simplify(&two, 5.0), two.to_vec());
        let line: Vec<_> = (0..100)
            .map(|i| pt(0.0, f64::from(i) * 1e-4, None))
            .collect();
        assert_eq!(simplify(&line, 1.0).len(), 2);
        assert_eq!(simplify(&line, 0.0).len(), 100);
        assert_eq!(simplify(&line, f64::NAN).len(), 100);
        // A closed loop keeps its far side.
        let square = [
            pt(0.0, 0.0, None),
            pt(0.0, 0.01, None),
            pt(0.01, 0.01, None),
            pt(0.01, 0.0, None),
            pt(0.0, 0.0, None),
        ];
        assert_eq!(simplify(&square, 5.0).len(), 5);
        // Antimeridian crossing stays a straight line.
        let dateline = [
            pt(0.0, 179.9, None),
            pt(0.0, 180.0, None),
            pt(0.0, -179.9, None),
        ];
        assert_eq!(simplify(&dateline, 1.0).len(), 2);
    }

    #[test]
    fn simplify_a_million_points_without_recursion() {
        let pts = synthetic_route(1_000.0, 1.0, Profile::Flat);
        assert!(pts.len() > 1_000_000);
        let simple = simplify(&pts, 5.0);
        assert!(simple.len() >= 2 && simple.len() < pts.len() / 50);
    }
}
