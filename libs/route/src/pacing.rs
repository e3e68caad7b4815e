//! Cutting a route into cycling days: [`pace_route`] is what the planner runs
//! (effort-aware day lengths from [`day_lengths_km`]: climbing makes days
//! shorter, see [`etappe_geo::effort`]; breaks not counted, cuts interpolated
//! between sparse points); [`pace`] implements the upstream product's
//! original rule exactly and [`pace_balanced`] fixes its overlong last day:
//! both are kept as the reference the findings below were measured on (the
//! rule's climbing penalty only reshapes days, never adds one), not as
//! something the planner runs; [`one_day_per_track`] paces a Komoot collection (one tour = one
//! day).
//!
//! `maxDistancePerDay` is a hard cap for [`pace_route`]: without dates no day
//! exceeds it (beyond [`SNAP_M`]); when fixed dates leave more than N·cap,
//! the days are equal and the analysis warns with `daily_distance_over_cap`.
//!
//! The rule ([`pace`]), with D the route length in km and D+ its climbing in
//! metres (smoothed, see [`crate::geometry`]):
//! - N = the caller's `days` when set (end date − start date + 1), else
//!   max(1, ⌈D / maxDistancePerDay⌉);
//! - climbing penalty p = (D+ / elevationPenalty) / N km per day;
//! - base = (D + p·N) / Σ_{i=0}^{N−1} f^i, f = fatigueFactor;
//! - day n (0-based) target = base·f^n − p, then at least 30 km, then at
//!   most maxDistancePerDay (if the cap is below 30 km, the cap wins);
//! - walking the track, day n ends at the first point where the day's
//!   distance reaches its target; consecutive days share that point; the
//!   last day takes all remaining points.
//!
//! Decisions where the rule is silent:
//! - The track is never cut into a day without distance: if it runs out
//!   before N days (a 20 km route over 3 dates: targets are ≥ 30 km), the day
//!   that reaches the end is the last one, so fewer than N days may result.
//! - "Reaches" tolerates 1 mm ([`CUT_TOLERANCE_M`]) so that floating-point
//!   rounding of summed distances cannot push a cut one point further;
//!   likewise ⌈D / max⌉ ignores an excess below 1 mm.
//! - Nonsensical settings are neutralised rather than rejected: a
//!   non-positive or non-finite cap means "no cap", a fatigue factor that is
//!   not a positive finite number means 1, a non-positive or non-finite
//!   penalty means no penalty, `days: Some(0)` means 1 day. N is also
//!   capped at the number of segments of the track, which only matters for
//!   tracks of a handful of points.
//!
//! Findings about the rule (measured by the tests below):
//! - The penalty never changes the total: Σ(base·f^n − p) = D for any p.
//!   With f = 1 it has no effect at all; with f < 1 it moves distance from
//!   the later days to the first ones (a steeper fatigue curve). It shortens
//!   the late days of a hilly trip, not the trip's days on average.
//! - The cap truncates the long early days but the distance they lose is
//!   not handed to anyone but the last day, which can therefore exceed the
//!   cap: 400 km, 80 km/day, f = 0.9 gives 80, 80, 79.1, 71.2 and 89.7 km.
//!   [`pace_balanced`] redistributes that excess instead.

use serde::Serialize;

use crate::TrackPoint;
use crate::geometry::{
    cumulative_ascent_with, cumulative_distances, day_climb_with, elevation_gain_loss_with,
    haversine_m,
};
use crate::pieces::{Gap, JoinedRoute};

/// Shortest day the upstream rule ([`pace`], [`pace_balanced`]) plans, km.
pub const MIN_DAY_KM: f64 = 30.0;
/// Shortest day the planner ([`day_lengths_km`]) makes, km of effort: families and loaded
/// tourers in the mountains ride 20 km days, so only a day too short to be one is refused;
/// a trip given N days gets N days even when that makes them shorter still.
pub const SHORTEST_DAY_KM: f64 = 10.0;
/// Slack when comparing distances, metres (see the module documentation).
pub const CUT_TOLERANCE_M: f64 = 1e-3;

/// Distance a route may exceed a whole number of maximal days before it needs one more day.
pub const DAY_COUNT_SLACK_KM: f64 = 0.1;

/// The user's pacing preferences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacingSettings {
    /// Longest day, km.
    pub max_distance_per_day_km: f64,
    /// Ratio of each day's planned distance to the previous day's (≤ 1 for
    /// tiring riders).
    pub fatigue_factor: f64,
    /// Metres of climbing that cost as much as one km of distance.
    pub elevation_penalty: f64,
    /// Number of days when the trip has start and end dates.
    pub days: Option<u32>,
}

/// One day of the trip: points `start_index..=end_index` of the point list.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DaySplit {
    pub start_index: usize,
    /// Inclusive; equals the next day's `start_index` in [`pace`].
    pub end_index: usize,
    pub distance_m: f64,
    pub ascent_m: f64,
    pub descent_m: f64,
}

/// A point list and its days, for sources that come as several tracks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PacedRoute {
    pub points: Vec<TrackPoint>,
    pub days: Vec<DaySplit>,
}

/// The rule's numbers for one route, with settings already sanitised.
struct Plan {
    days: u32,
    base_km: f64,
    penalty_km: f64,
    fatigue: f64,
    cap_km: f64,
    floor_km: f64,
}

impl Plan {
    fn new(distance_km: f64, ascent_m: f64, settings: &PacingSettings, max_days: u32) -> Self {
        let cap_km = positive(settings.max_distance_per_day_km).unwrap_or(f64::INFINITY);
        let fatigue = positive(settings.fatigue_factor).unwrap_or(1.0);
        let days = match settings.days {
            Some(d) => d.max(1),
            None => {
                // A route measured at 300.0004 km is a 300 km route: without some slack the
                // day count would jump by one on rounding noise.
                let exact = (distance_km - DAY_COUNT_SLACK_KM) / cap_km;
                let n = exact.ceil();
                if n.is_finite() && n >= 1.0 {
                    // Saturating float→int conversion: huge values clamp to u32::MAX.
                    n as u32
                } else {
                    1
                }
            }
        };
        let days = days.min(max_days.max(1));
        let penalty_km = match positive(settings.elevation_penalty) {
            Some(per_km) => ascent_m.max(0.0) / per_km / f64::from(days),
            None => 0.0,
        };
        let weights: f64 = (0..days).map(|i| fatigue.powf(f64::from(i))).sum();
        let base_km = (distance_km + penalty_km * f64::from(days)) / weights;
        Self {
            days,
            base_km,
            penalty_km,
            fatigue,
            cap_km,
            floor_km: MIN_DAY_KM.min(cap_km),
        }
    }

    /// The rule's uncapped wish for day `n` (after the 30 km floor).
    fn wish_km(&self, n: u32) -> f64 {
        (self.base_km * self.fatigue.powf(f64::from(n)) - self.penalty_km).max(self.floor_km)
    }

    /// The rule's target for day `n`.
    fn target_km(&self, n: u32) -> f64 {
        self.wish_km(n).min(self.cap_km)
    }
}

fn positive(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

/// Cuts the track into days by the product's rule (module documentation).
/// Empty input gives no day; a single point gives one day of 0 m; otherwise
/// the days cover the track from its first to its last point.
pub fn pace(points: &[TrackPoint], settings: &PacingSettings) -> Vec<DaySplit> {
    let cumulative = cumulative_distances(points);
    let Some(plan) = plan_for(points, &cumulative, settings) else {
        return single_day(points, &cumulative);
    };
    cut(points, &cumulative, plan.days, |day, day_start_m| {
        day_start_m + plan.target_km(day) * 1000.0
    })
}

/// Like [`pace`], but never leaves the cap's excess to the last day.
///
/// Day lengths keep the rule's shape (fatigue and penalty: the wish
/// base·f^n − p, floored at 30 km) and are scaled by one common factor λ,
/// each clamped to [30 km, cap], with λ chosen so the days add up to the
/// route; cuts are placed at the running sums of those lengths, so rounding
/// to points does not accumulate. Consequences:
/// - when N·cap ≥ D (always true when N comes from the distance), no day is
///   longer than the cap plus one point spacing;
/// - when fixed dates make that impossible (N·cap < D), the excess is
///   spread evenly (every day gets D/N) instead of all landing on the last
///   day;
/// - a route too short for N days of 30 km is paced by [`pace`].
pub fn pace_balanced(points: &[TrackPoint], settings: &PacingSettings) -> Vec<DaySplit> {
    let cumulative = cumulative_distances(points);
    let Some(plan) = plan_for(points, &cumulative, settings) else {
        return single_day(points, &cumulative);
    };
    let total_km = cumulative.last().copied().unwrap_or_default() / 1000.0;
    let n = plan.days;
    if total_km < f64::from(n) * plan.floor_km {
        return pace(points, settings);
    }
    let wishes: Vec<f64> = (0..n).map(|i| plan.wish_km(i)).collect();
    let lengths = balanced_lengths(&wishes, total_km, plan.floor_km, plan.cap_km);
    let mut ends_m = Vec::with_capacity(lengths.len());
    let mut running = 0.0;
    for len in &lengths {
        running += len * 1000.0;
        ends_m.push(running);
    }
    cut(points, &cumulative, n, |day, _| {
        ends_m.get(day as usize).copied().unwrap_or(f64::INFINITY)
    })
}

/// What the planner uses: [`pace_balanced`]'s day lengths on a joined route
/// (breaks count no distance and no climb), with each cut placed at its exact
/// distance. Where no point lies within [`SNAP_M`] past a cut, a point is
/// interpolated there (position and elevation, linearly along the segment)
/// and becomes the shared end and start of the two days, so sparse planner
/// files (points kilometres apart) are cut where the rule says, not at the
/// next point. The returned route carries those points and its gaps
/// re-indexed. Consequences:
/// - without dates, no day is longer than the cap plus [`SNAP_M`] (plus
///   [`DAY_COUNT_SLACK_KM`] spread over the days when the route exceeds a
///   whole number of caps by less than that);
/// - with dates that force more than the cap, every day rides D/N (the
///   analysis then warns with `daily_distance_over_cap`).
pub fn pace_route(route: &JoinedRoute, settings: &PacingSettings) -> (JoinedRoute, Vec<DaySplit>) {
    let cumulative = route.cumulative_m();
    let lengths = day_lengths_km_with(route, &cumulative, settings);
    let cut = cut_by_lengths(route, &cumulative, lengths);
    (cut.route, cut.days)
}

/// A route cut into days, with the distance from its start to each of its points (breaks not
/// counted): the figures its totals and climbing are read from, measured once.
#[derive(Clone, Debug, PartialEq)]
pub struct CutRoute {
    pub route: JoinedRoute,
    pub cumulative_m: Vec<f64>,
    pub days: Vec<DaySplit>,
}

/// [`pace_route`] with the days' lengths already planned by [`day_lengths_km_with`] and the
/// route already measured (`cumulative`: [`JoinedRoute::cumulative_m`]): a long route is
/// measured once, not once per step.
pub fn cut_by_lengths(
    route: &JoinedRoute,
    cumulative: &[f64],
    lengths: Option<Vec<f64>>,
) -> CutRoute {
    let Some(lengths) = lengths else {
        return CutRoute {
            days: single_day(&route.points, cumulative),
            route: route.clone(),
            cumulative_m: cumulative.to_vec(),
        };
    };
    let mut goals_m = Vec::with_capacity(lengths.len());
    let mut running = 0.0;
    for len in lengths.iter().take(lengths.len().saturating_sub(1)) {
        running += len * 1000.0;
        goals_m.push(running);
    }
    cut_route_at(route, cumulative, &goals_m)
}

/// The days' lengths [`pace_route`] cuts, km, in order (they add up to the route's ridden
/// length); `None` for a route of fewer than two points.
///
/// Effort-aware (see [`etappe_geo::effort`]): the route is measured in effort, its distance
/// plus its climbing over `elevation_penalty` (metres per flat km), point by point, so the
/// climbing counts where it lies. Then, in effort km E:
/// - N = the caller's `days` when set (exactly that many days), else ⌈E / cap⌉;
/// - the days' efforts keep the fatigue shape (day n wishes f^n) scaled by one factor so they
///   add up to E, each within [min(10 km, E/N), cap] (as [`pace_balanced`] does; when dates
///   leave more than N·cap every day gets E/N);
/// - each day ends where the route's running effort reaches the running sum of those
///   efforts, interpolated between points.
///
/// A flat route is paced exactly as by distance; a hilly one gets more, shorter days, and
/// the climbing days of a trip are the short ones. Without heights (or with no penalty) the
/// climbing counts nothing: unknown is not made up.
pub fn day_lengths_km(route: &JoinedRoute, settings: &PacingSettings) -> Option<Vec<f64>> {
    day_lengths_km_with(route, &route.cumulative_m(), settings)
}

/// [`day_lengths_km`] of a route already measured (`cumulative`: [`JoinedRoute::cumulative_m`]).
pub fn day_lengths_km_with(
    route: &JoinedRoute,
    cumulative: &[f64],
    settings: &PacingSettings,
) -> Option<Vec<f64>> {
    let points = &route.points;
    if points.len() < 2 || cumulative.len() != points.len() {
        return None;
    }
    let per_flat_km = positive(settings.elevation_penalty);
    let effort_m: Vec<f64> = match per_flat_km {
        Some(m) => cumulative_ascent_with(points, cumulative, &route.breaks())
            .iter()
            .zip(cumulative)
            .map(|(ascent, distance)| distance + ascent / m * 1000.0)
            .collect(),
        None => cumulative.to_vec(),
    };
    let total_effort_km = effort_m.last().copied().unwrap_or_default() / 1000.0;
    let total_km = cumulative.last().copied().unwrap_or_default() / 1000.0;
    let cap_km = positive(settings.max_distance_per_day_km).unwrap_or(f64::INFINITY);
    let fatigue = positive(settings.fatigue_factor).unwrap_or(1.0);
    let days = match settings.days {
        Some(d) => d.max(1),
        None => {
            let n = ((total_effort_km - DAY_COUNT_SLACK_KM) / cap_km).ceil();
            if n.is_finite() && n >= 1.0 {
                n as u32
            } else {
                1
            }
        }
    };
    let days = days.min(u32::try_from(points.len() - 1).unwrap_or(u32::MAX).max(1));
    let floor_km = SHORTEST_DAY_KM
        .min(cap_km)
        .min(total_effort_km / f64::from(days));
    let wishes: Vec<f64> = (0..days).map(|i| fatigue.powf(f64::from(i))).collect();
    let efforts = balanced_lengths(&wishes, total_effort_km, floor_km, cap_km);
    // Each day's end: where the running effort reaches the running sum, as a distance.
    let mut ends_km = Vec::with_capacity(efforts.len());
    let mut running = 0.0;
    for effort in efforts.iter().take(efforts.len().saturating_sub(1)) {
        running += effort * 1000.0;
        ends_km.push(distance_at_effort(&effort_m, cumulative, running) / 1000.0);
    }
    ends_km.push(total_km);
    let mut previous = 0.0;
    Some(
        ends_km
            .into_iter()
            .map(|end| {
                let length = (end - previous).max(0.0);
                previous = end.max(previous);
                length
            })
            .collect(),
    )
}

/// The ridden distance (metres) where the running effort reaches `goal_m`, interpolated
/// linearly between the two points around it.
fn distance_at_effort(effort_m: &[f64], cumulative: &[f64], goal_m: f64) -> f64 {
    let j = effort_m.partition_point(|&e| e < goal_m);
    match (
        j.checked_sub(1)
            .and_then(|i| Some((effort_m.get(i)?, cumulative.get(i)?))),
        effort_m.get(j).zip(cumulative.get(j)),
    ) {
        (Some((e0, d0)), Some((e1, d1))) if e1 > e0 => d0 + (goal_m - e0) / (e1 - e0) * (d1 - d0),
        (_, Some((_, d))) => *d,
        (Some((_, d)), None) => *d,
        (None, None) => 0.0,
    }
}

/// The route cut into days at `goals_m` (ridden metres from the start, ascending): each goal
/// becomes a day's end, interpolated between points as [`pace_route`] does; the last day
/// runs to the route's end.
pub fn pace_route_at(route: &JoinedRoute, goals_m: &[f64]) -> (JoinedRoute, Vec<DaySplit>) {
    let cut = cut_route_at(route, &route.cumulative_m(), goals_m);
    (cut.route, cut.days)
}

/// [`pace_route_at`] of a route already measured (`cumulative`: [`JoinedRoute::cumulative_m`]),
/// with the cut route's own distances.
pub fn cut_route_at(route: &JoinedRoute, cumulative: &[f64], goals_m: &[f64]) -> CutRoute {
    let (cut_route, cuts, cut_cumulative) = cut_at(route, cumulative, goals_m);
    let cut_breaks = cut_route.breaks();
    let last = cut_route.points.len().saturating_sub(1);
    let mut days = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for end in cuts.into_iter().chain(std::iter::once(last)) {
        if end <= start {
            continue;
        }
        days.push(split_with_breaks(
            &cut_route.points,
            &cut_cumulative,
            &cut_breaks,
            start,
            end,
        ));
        start = end;
    }
    CutRoute {
        route: cut_route,
        cumulative_m: cut_cumulative,
        days,
    }
}

/// A cut this close before an existing point (metres) is moved onto that
/// point rather than interpolated: dense recordings keep their points.
pub const SNAP_M: f64 = 5.0;

/// Walks the route and returns it with a point at every goal distance
/// (interpolated unless a point lies within [`SNAP_M`] after the goal), the
/// indices of the cut points in the new list, and the new list's distances from
/// the start (breaks not counted): the route's own `cumulative` carried over, and
/// only the steps on either side of an inserted point measured afresh.
fn cut_at(
    route: &JoinedRoute,
    cumulative: &[f64],
    goals_m: &[f64],
) -> (JoinedRoute, Vec<usize>, Vec<f64>) {
    let mut out = JoinedRoute {
        points: Vec::with_capacity(route.points.len() + goals_m.len()),
        gaps: Vec::with_capacity(route.gaps.len()),
    };
    let mut out_m: Vec<f64> = Vec::with_capacity(route.points.len() + goals_m.len());
    let mut cuts: Vec<usize> = Vec::with_capacity(goals_m.len());
    let mut goals = goals_m.iter().copied().peekable();
    let mut gaps = route.gaps.iter().peekable();
    let mut last_cut_m = 0.0;
    let mut previous: Option<(&TrackPoint, f64)> = None;
    for (i, (p, &d)) in route.points.iter().zip(cumulative).enumerate() {
        if let Some(gap) = gaps.next_if(|g| g.index == i) {
            out.gaps.push(Gap {
                index: out.points.len(),
                ..*gap
            });
        }
        let mut inserted = false;
        if let Some((q, dq)) = previous
            && d > dq
        {
            // Goals strictly inside this segment and farther than SNAP_M before its end.
            while let Some(goal) = goals.next_if(|&g| g - CUT_TOLERANCE_M < d && d - g > SNAP_M) {
                if goal - last_cut_m < CUT_TOLERANCE_M || goal <= dq {
                    continue;
                }
                let t = ((goal - dq) / (d - dq)).clamp(0.0, 1.0);
                let cut = interpolate(q, p, t);
                push_measured(&mut out.points, &mut out_m, cut, None);
                inserted = true;
                cuts.push(out.points.len() - 1);
                last_cut_m = goal;
            }
        }
        // The step onto `p` as the route measured it, unless a cut point now comes first.
        let step = previous.filter(|_| !inserted).map(|(_, dq)| d - dq);
        push_measured(&mut out.points, &mut out_m, *p, step);
        // Goals reached at this point (the rest lie within SNAP_M before it):
        // cut here, once.
        while goals.next_if(|&g| g - CUT_TOLERANCE_M < d).is_some() {
            let here = out.points.len() - 1;
            if i > 0 && cuts.last() != Some(&here) && d - last_cut_m > CUT_TOLERANCE_M {
                cuts.push(here);
                last_cut_m = d;
            }
        }
        previous = Some((p, d));
    }
    (out, cuts, out_m)
}

/// Appends `p` and its distance from the start: the last one's plus `step` when the route
/// measured that step already (breaks count 0 there), else plus the step measured now (onto
/// or from a cut point). The first point is at 0.
fn push_measured(
    points: &mut Vec<TrackPoint>,
    out_m: &mut Vec<f64>,
    p: TrackPoint,
    step: Option<f64>,
) {
    let at = match (points.last(), out_m.last(), step) {
        (Some(_), Some(&last_m), Some(known)) => last_m + known,
        (Some(last), Some(&last_m), None) => last_m + haversine_m(last, &p),
        _ => 0.0,
    };
    points.push(p);
    out_m.push(at);
}

/// The point a fraction `t` of the way from `a` to `b`. Linear in degrees:
/// over one segment of a route (a few km at most) the difference to the
/// great circle is centimetres.
fn interpolate(a: &TrackPoint, b: &TrackPoint, t: f64) -> TrackPoint {
    let mut dlon = b.lon - a.lon;
    if dlon > 180.0 {
        dlon -= 360.0;
    } else if dlon < -180.0 {
        dlon += 360.0;
    }
    let mut lon = a.lon + t * dlon;
    if lon > 180.0 {
        lon -= 360.0;
    } else if lon < -180.0 {
        lon += 360.0;
    }
    TrackPoint {
        lat: a.lat + t * (b.lat - a.lat),
        lon,
        ele: match (a.ele, b.ele) {
            (Some(x), Some(y)) => Some(x + t * (y - x)),
            (Some(x), None) => Some(x),
            (None, y) => y,
        },
    }
}

/// A day from `start` to `end`, with distance and climb that skip breaks.
fn split_with_breaks(
    points: &[TrackPoint],
    cumulative: &[f64],
    breaks: &[usize],
    start: usize,
    end: usize,
) -> DaySplit {
    let distance_m = match (cumulative.get(start), cumulative.get(end)) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    let inner: Vec<usize> = breaks
        .iter()
        .filter(|&&b| b > start && b <= end)
        .map(|b| b - start)
        .collect();
    let (ascent_m, descent_m) = day_climb_with(
        points.get(start..=end).unwrap_or_default(),
        cumulative.get(start..=end).unwrap_or_default(),
        &inner,
    );
    DaySplit {
        start_index: start,
        end_index: end,
        distance_m,
        ascent_m,
        descent_m,
    }
}

/// Day lengths min(cap, max(floor, λ·wish)) summing to `total`, by bisection
/// on λ (the sum is monotone in λ). When the cap cannot be honoured the days
/// are equal (D/N each); without a cap, proportional to the wishes.
fn balanced_lengths(wishes: &[f64], total: f64, floor: f64, cap: f64) -> Vec<f64> {
    let wish_sum: f64 = wishes.iter().sum();
    let proportional = || -> Vec<f64> {
        wishes
            .iter()
            .map(|w| {
                if wish_sum.is_finite() && wish_sum > 0.0 {
                    total * w / wish_sum
                } else {
                    // Absurd settings (e.g. a fatigue factor of 1e9) overflow
                    // the wishes; equal days are the only sane reading.
                    total / wishes.len().max(1) as f64
                }
            })
            .collect()
    };
    let n = wishes.len() as f64;
    let min_wish = wishes.iter().copied().fold(f64::INFINITY, f64::min);
    // A route of exactly N·cap (the usual case when N = ⌈D/cap⌉ divides
    // evenly) must still be capped, hence the tolerance.
    let over_cap = total - n * cap > CUT_TOLERANCE_M / 1000.0;
    if over_cap && cap.is_finite() {
        // Fixed dates leave more than N·cap: every day rides the cap plus an
        // equal share of the excess, i.e. the days are equal. No day is
        // singled out to take the rest.
        return vec![total / n.max(1.0); wishes.len()];
    }
    if !cap.is_finite() || min_wish <= 0.0 || min_wish.is_nan() {
        return proportional();
    }
    let shaped = |lambda: f64| -> f64 {
        wishes
            .iter()
            .map(|w| (lambda * w).max(floor).min(cap))
            .sum()
    };
    // At λ = cap/min_wish every day is at the cap, so the sum is ≥ total.
    let (mut lo, mut hi) = (0.0, cap / min_wish);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if shaped(mid) < total {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    wishes
        .iter()
        .map(|w| (hi * w).max(floor).min(cap))
        .collect()
}

/// The plan for a track of at least two points, `None` otherwise.
fn plan_for(points: &[TrackPoint], cumulative: &[f64], settings: &PacingSettings) -> Option<Plan> {
    let (ascent_m, _) = elevation_gain_loss_with(points, cumulative);
    plan_with_ascent(points, cumulative, ascent_m, settings)
}

fn plan_with_ascent(
    points: &[TrackPoint],
    cumulative: &[f64],
    ascent_m: f64,
    settings: &PacingSettings,
) -> Option<Plan> {
    if points.len() < 2 {
        return None;
    }
    let total_m = cumulative.last().copied().unwrap_or_default();
    let segments = u32::try_from(points.len() - 1).unwrap_or(u32::MAX);
    Some(Plan::new(total_m / 1000.0, ascent_m, settings, segments))
}

fn single_day(points: &[TrackPoint], cumulative: &[f64]) -> Vec<DaySplit> {
    if points.is_empty() {
        return Vec::new();
    }
    vec![day_split(points, cumulative, 0, points.len() - 1)]
}

/// Walks the track: day `n` (except the last) ends at the first point whose
/// cumulative distance reaches `day_end(n, cumulative distance at the day's
/// start)`. Stops early when the track is exhausted.
fn cut(
    points: &[TrackPoint],
    cumulative: &[f64],
    days: u32,
    day_end: impl Fn(u32, f64) -> f64,
) -> Vec<DaySplit> {
    let last = points.len().saturating_sub(1);
    let mut out = Vec::new();
    let mut start = 0usize;
    for day in 0..days {
        let end = if day + 1 == days {
            last
        } else {
            let start_m = cumulative.get(start).copied().unwrap_or_default();
            let goal = day_end(day, start_m) - CUT_TOLERANCE_M;
            let after = cumulative.get(start + 1..).unwrap_or_default();
            (start + 1 + after.partition_point(|&c| c < goal)).min(last)
        };
        out.push(day_split(points, cumulative, start, end));
        if end >= last {
            break;
        }
        start = end;
    }
    out
}

/// A day from `start` to `end` of a route without breaks.
fn day_split(points: &[TrackPoint], cumulative: &[f64], start: usize, end: usize) -> DaySplit {
    split_with_breaks(points, cumulative, &[], start, end)
}

/// Paces a Komoot collection: the tracks are concatenated into one point
/// list and each non-empty track becomes one day. Days do not share points
/// here (the tracks are separate tours), and the gap between one tour's end
/// and the next one's start is not counted in any day's distance.
pub fn one_day_per_track(tracks: &[Vec<TrackPoint>]) -> PacedRoute {
    let total: usize = tracks.iter().map(Vec::len).sum();
    let mut points = Vec::with_capacity(total);
    let mut days = Vec::with_capacity(tracks.len());
    for track in tracks.iter().filter(|t| !t.is_empty()) {
        let offset = points.len();
        let cumulative = cumulative_distances(track);
        let mut day = day_split(track, &cumulative, 0, track.len() - 1);
        day.start_index += offset;
        day.end_index += offset;
        days.push(day);
        points.extend_from_slice(track);
    }
    PacedRoute { points, days }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{Profile, synthetic_route};

    fn settings(max: f64, f: f64, penalty: f64, days: Option<u32>) -> PacingSettings {
        PacingSettings {
            max_distance_per_day_km: max,
            fatigue_factor: f,
            elevation_penalty: penalty,
            days,
        }
    }

    fn km(days: &[DaySplit]) -> Vec<f64> {
        days.iter().map(|d| d.distance_m / 1000.0).collect()
    }

    /// Days are contiguous, share boundaries and cover the whole track.
    fn assert_covers(days: &[DaySplit], points: usize) {
        assert_eq!(days.first().map(|d| d.start_index), Some(0));
        assert_eq!(days.last().map(|d| d.end_index), Some(points - 1));
        for w in days.windows(2) {
            assert_eq!(w[0].end_index, w[1].start_index);
        }
        for d in days {
            assert!(d.end_index > d.start_index, "{d:?}");
        }
    }

    #[test]
    fn flat_400_km_at_80_per_day_gives_five_equal_days() {
        let pts = synthetic_route(400.0, 100.0, Profile::Flat);
        let days = pace(&pts, &settings(80.0, 1.0, 25.0, None));
        assert_covers(&days, pts.len());
        assert_eq!(days.len(), 5);
        let starts: Vec<usize> = days.iter().map(|d| d.start_index).collect();
        assert_eq!(starts, vec![0, 800, 1600, 2400, 3200]);
        for d in km(&days) {
            assert!((d - 80.0).abs() <= 0.1, "{d}");
        }
    }

    #[test]
    fn uneven_spacing_cuts_at_the_first_point_reaching_the_target() {
        // 100 km at 300 m spacing, 40 km/day: N = 3, target 33.33 km.
        let pts = synthetic_route(100.0, 300.0, Profile::Flat);
        let days = pace(&pts, &settings(40.0, 1.0, 25.0, None));
        // The first point at or past 33.33 km is 112 × 300 m = 33.6 km.
        assert_eq!(days.len(), 3);
        assert_eq!(days[0].end_index, 112);
        assert_eq!(days[1].end_index, 224);
        assert_covers(&days, pts.len());
    }

    #[test]
    fn fatigue_makes_days_decrease() {
        let pts = synthetic_route(400.0, 100.0, Profile::Flat);
        let days = pace(&pts, &settings(120.0, 0.9, 25.0, Some(5)));
        assert_covers(&days, pts.len());
        let d = km(&days);
        assert_eq!(d.len(), 5);
        // base = 400 / (1 + .9 + .81 + .729 + .6561) = 97.676 km.
        let base = 400.0 / 4.0951;
        for (n, &dn) in d.iter().take(4).enumerate() {
            let target = base * 0.9f64.powi(n as i32);
            assert!(
                dn >= target - 0.002 && dn < target + 0.1,
                "day {n}: {dn} vs {target}"
            );
        }
        assert!(d.windows(2).all(|w| w[1] < w[0]), "{d:?}");
    }

    #[test]
    fn fixed_dates_give_exactly_that_many_days() {
        let pts = synthetic_route(400.0, 100.0, Profile::Flat);
        let days = pace(&pts, &settings(80.0, 1.0, 25.0, Some(3)));
        assert_covers(&days, pts.len());
        assert_eq!(days.len(), 3);
        // 400/3 = 133 km wished, capped at 80: the last day takes the rest.
        let d = km(&days);
        assert!((d[0] - 80.0).abs() <= 0.1 && (d[1] - 80.0).abs() <= 0.1);
        assert!((d[2] - 240.0).abs() <= 0.2, "{d:?}");
    }

    #[test]
    fn climbing_penalty_shortens_the_later_days() {
        // 10 climbs of 200 m: D+ ≈ 2,000 m; 2,000/20 = 100 km of penalty,
        // 20 km per day over 5 days.
        let hilly = synthetic_route(
            400.0,
            100.0,
            Profile::Climbs {
                height_m: 200.0,
                period_km: 40.0,
            },
        );
        let s = settings(200.0, 0.9, 20.0, Some(5));
        let no_penalty = PacingSettings {
            elevation_penalty: 0.0,
            ..s
        };
        let with = km(&pace(&hilly, &s));
        let without = km(&pace(&hilly, &no_penalty));
        assert_eq!(with.len(), 5);
        assert_eq!(without.len(), 5);
        // Targets: base' = (400 + 100)/4.0951 = 122.1; day n = base'·0.9^n − 20.
        assert!((with[0] - (500.0 / 4.0951 - 20.0)).abs() < 0.1, "{with:?}");
        assert!(with[0] > without[0], "first day longer");
        for n in 2..5 {
            assert!(with[n] < without[n], "day {n}: {with:?} vs {without:?}");
        }
        // Total unchanged: the penalty only reshapes the days.
        let (a, b): (f64, f64) = (with.iter().sum(), without.iter().sum());
        assert!((a - b).abs() < 1e-6);

        // With f = 1 the penalty is a no-op.
        let flat_f = settings(200.0, 1.0, 20.0, Some(5));
        let flat_f0 = PacingSettings {
            elevation_penalty: 0.0,
            ..flat_f
        };
        assert_eq!(pace(&hilly, &flat_f), pace(&hilly, &flat_f0));
    }

    #[test]
    fn cap_leaves_last_day_overlong_and_balanced_fixes_it() {
        let pts = synthetic_route(400.0, 100.0, Profile::Flat);
        let s = settings(80.0, 0.9, 25.0, None);
        let rule = km(&pace(&pts, &s));
        // Targets 80, 80, 79.1, 71.2 km (rounded up to the 100 m spacing),
        // so the last day gets 89.5 km: 9.5 km over the cap.
        assert_eq!(rule.len(), 5);
        assert!((rule[4] - 89.5).abs() < 0.3, "{rule:?}");
        assert!(rule[4] > 80.0 + 9.0);

        let balanced_days = pace_balanced(&pts, &s);
        assert_covers(&balanced_days, pts.len());
        let balanced = km(&balanced_days);
        assert_eq!(balanced.len(), 5);
        for d in &balanced {
            assert!(*d <= 80.0 + 0.1, "{balanced:?}");
        }
        // Still shaped by fatigue: never increasing (within one spacing).
        assert!(
            balanced.windows(2).all(|w| w[1] <= w[0] + 0.1),
            "{balanced:?}"
        );
        let sum: f64 = balanced.iter().sum();
        assert!((sum - 400.0).abs() < 1e-6);
    }

    #[test]
    fn balanced_spreads_excess_when_dates_force_it() {
        let pts = synthetic_route(400.0, 100.0, Profile::Flat);
        // Evenly, whatever the fatigue factor: the cap is broken on every day alike.
        for f in [1.0, 0.9] {
            let s = settings(80.0, f, 25.0, Some(3));
            let d = km(&pace_balanced(&pts, &s));
            assert_eq!(d.len(), 3);
            for x in &d {
                assert!((x - 133.33).abs() < 0.2, "{d:?}");
            }
        }
    }

    #[test]
    fn balanced_equals_rule_when_nothing_is_capped() {
        let pts = synthetic_route(400.0, 100.0, Profile::Flat);
        let s = settings(80.0, 1.0, 25.0, None);
        assert_eq!(pace(&pts, &s), pace_balanced(&pts, &s));
    }

    #[test]
    fn short_routes_never_get_empty_days() {
        // 20 km over 3 dates: every target is 30 km, the track ends on day 1.
        let pts = synthetic_route(20.0, 100.0, Profile::Flat);
        let days = pace(&pts, &settings(80.0, 1.0, 25.0, Some(3)));
        assert_eq!(days.len(), 1);
        assert_covers(&days, pts.len());
        // 70 km over 3 dates: 30 km, 30 km (floor), then the last 10 km.
        let pts = synthetic_route(70.0, 100.0, Profile::Flat);
        let d = km(&pace(&pts, &settings(80.0, 1.0, 25.0, Some(3))));
        assert_eq!(d.len(), 3);
        assert!(
            (d[0] - 30.0).abs() < 0.1 && (d[2] - 10.0).abs() < 0.2,
            "{d:?}"
        );
        // 65 km in one go under the cap: one day.
        let pts = synthetic_route(65.0, 100.0, Profile::Flat);
        assert_eq!(pace(&pts, &settings(80.0, 1.0, 25.0, None)).len(), 1);
        // Too short for 4 × 30 km: balanced falls back to the rule (30, 30, 5).
        assert_eq!(
            pace_balanced(&pts, &settings(80.0, 1.0, 25.0, Some(4))).len(),
            3
        );
    }

    #[test]
    fn degenerate_inputs_and_settings() {
        assert!(pace(&[], &settings(80.0, 1.0, 25.0, None)).is_empty());
        let one = synthetic_route(0.0, 10.0, Profile::Flat);
        let days = pace(&one, &settings(80.0, 1.0, 25.0, None));
        assert_eq!(days.len(), 1);
        assert_eq!((days[0].start_index, days[0].end_index), (0, 0));
        let pts = synthetic_route(200.0, 500.0, Profile::Flat);
        for s in [
            settings(0.0, 1.0, 25.0, None),
            settings(f64::NAN, f64::NAN, f64::NAN, Some(0)),
            settings(-5.0, -1.0, -3.0, None),
            settings(f64::INFINITY, f64::INFINITY, f64::INFINITY, Some(u32::MAX)),
            settings(10.0, 1.0, 25.0, None),
            settings(1e-9, 1e9, 1e-9, None),
        ] {
            for days in [pace(&pts, &s), pace_balanced(&pts, &s)] {
                assert!(!days.is_empty(), "{s:?}");
                assert_covers(&days, pts.len());
                assert!(days.iter().all(|d| d.distance_m.is_finite()), "{s:?}");
            }
        }
        // A cap below the 30 km floor wins.
        let d = km(&pace(&pts, &settings(10.0, 1.0, 25.0, None)));
        assert_eq!(d.len(), 20);
        assert!((d[0] - 10.0).abs() < 0.5, "{d:?}");
    }

    /// A repeatable stream of numbers in [0, 1) (xorshift64 from `seed`): random cases
    /// that fail the same way every run.
    fn unit_random(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A hilly route of 1–901 km, its points up to `max_spacing_m` apart, and its length.
    fn random_route(unit: &mut impl FnMut() -> f64, max_spacing_m: f64) -> (f64, Vec<TrackPoint>) {
        let total_km = 1.0 + unit() * 900.0;
        let spacing = 50.0 + unit() * max_spacing_m;
        let profile = Profile::Climbs {
            height_m: unit() * 800.0,
            period_km: 5.0 + unit() * 100.0,
        };
        (total_km, synthetic_route(total_km, spacing, profile))
    }

    /// Settings anywhere in their ranges, dated (1–15 days) half of the time.
    fn random_settings(unit: &mut impl FnMut() -> f64) -> PacingSettings {
        settings(
            10.0 + unit() * 200.0,
            0.5 + unit() * 0.6,
            unit() * 50.0,
            (unit() < 0.5).then(|| 1 + (unit() * 15.0) as u32),
        )
    }

    #[test]
    fn random_routes_and_settings_always_cover_the_track() {
        let mut unit = unit_random(0x9E37_79B9_7F4A_7C15u64);
        for _ in 0..200 {
            let (total_km, pts) = random_route(&mut unit, 2_000.0);
            let s = random_settings(&mut unit);
            for days in [pace(&pts, &s), pace_balanced(&pts, &s)] {
                assert_covers(&days, pts.len());
                if let Some(n) = s.days {
                    assert!(days.len() <= n as usize, "{s:?}");
                }
                let sum: f64 = days.iter().map(|d| d.distance_m).sum();
                assert!((sum / 1000.0 - total_km).abs() < 1e-6, "{s:?}");
            }
        }
    }

    fn joined(points: Vec<TrackPoint>) -> JoinedRoute {
        JoinedRoute {
            points,
            gaps: Vec::new(),
        }
    }

    #[test]
    fn pace_route_cuts_sparse_points_at_the_cap() {
        // A planner file: a point every 7 km. The rule would cut at 84 km.
        let pts = synthetic_route(400.0, 7_000.0, Profile::Flat);
        let s = settings(80.0, 0.9, 25.0, None);
        let (route, days) = pace_route(&joined(pts.clone()), &s);
        assert_covers(&days, route.points.len());
        let d = km(&days);
        assert_eq!(d.len(), 5, "{d:?}");
        for x in &d {
            assert!(*x <= 80.0 + SNAP_M / 1000.0, "{d:?}");
        }
        assert!(
            route.points.len() > pts.len(),
            "cut points were interpolated"
        );
        let sum: f64 = d.iter().sum();
        assert!((sum - 400.0).abs() < 1e-3, "{sum}");
    }

    #[test]
    fn pace_route_spreads_forced_excess_evenly() {
        // The reported case: 365 km, a 40 km cap and two dated days gave [40, 325].
        let pts = synthetic_route(365.0, 100.0, Profile::Flat);
        for f in [1.0, 0.8] {
            let (_, days) = pace_route(&joined(pts.clone()), &settings(40.0, f, 25.0, Some(2)));
            let d = km(&days);
            assert_eq!(d.len(), 2);
            for x in &d {
                assert!((x - 182.5).abs() < 0.01, "{d:?}");
            }
        }
    }

    #[test]
    fn pace_route_counts_no_distance_across_a_break() {
        let mut a = synthetic_route(100.0, 100.0, Profile::Flat);
        let b: Vec<TrackPoint> = synthetic_route(100.0, 100.0, Profile::Flat)
            .into_iter()
            .map(|p| TrackPoint {
                lat: p.lat + 1.0,
                ..p
            })
            .collect();
        let length = |p: &[TrackPoint]| cumulative_distances(p).last().copied().unwrap_or(0.0);
        let ridden_km = (length(&a) + length(&b)) / 1000.0;
        let index = a.len();
        a.extend(b);
        let route = JoinedRoute {
            points: a,
            gaps: vec![Gap {
                index,
                length_m: 111_000.0,
                bridged: false,
            }],
        };
        let (cut, days) = pace_route(&route, &settings(80.0, 1.0, 25.0, None));
        assert_eq!(days.len(), 3, "about 200 km ridden: {:?}", km(&days));
        let sum: f64 = km(&days).iter().sum();
        assert!((sum - ridden_km).abs() < 1e-3, "{sum} vs {ridden_km}");
        assert_eq!(cut.gaps.len(), 1);
        assert!(
            cut.gaps[0].index >= index,
            "re-indexed after inserted points"
        );
    }

    #[test]
    fn the_cut_route_is_measured_as_a_fresh_measure_would_measure_it() {
        // Hilly, with a break in the middle and a bridged gap, goals inside segments and on
        // points: the distances carried over through the cut are the cut route's own, and
        // each day's climbing read off them is the climbing of the day's points alone.
        let mut points = synthetic_route(
            120.0,
            37.0,
            Profile::Climbs {
                height_m: 300.0,
                period_km: 15.0,
            },
        );
        let second: Vec<TrackPoint> = points
            .iter()
            .map(|p| TrackPoint {
                lat: p.lat + 0.5,
                ..*p
            })
            .collect();
        let index = points.len();
        points.extend(second);
        let route = JoinedRoute {
            points,
            gaps: vec![
                Gap {
                    index: 400,
                    length_m: 120.0,
                    bridged: true,
                },
                Gap {
                    index,
                    length_m: 55_000.0,
                    bridged: false,
                },
            ],
        };
        let goals = [
            10_000.0, 33_333.3, 74_000.0, 118_500.0, 150_012.5, 201_000.0,
        ];
        let cumulative = route.cumulative_m();
        let (cut, cuts, carried) = cut_at(&route, &cumulative, &goals);
        let fresh = cut.cumulative_m();
        assert_eq!(carried.len(), fresh.len());
        for (i, (a, b)) in carried.iter().zip(&fresh).enumerate() {
            assert!((a - b).abs() < 1e-6, "point {i}: {a} carried, {b} measured");
        }
        assert!(cuts.len() >= 5, "{cuts:?}");
        let (_, days) = pace_route_at(&route, &goals);
        for day in &days {
            let slice = &cut.points[day.start_index..=day.end_index];
            let inner: Vec<usize> = cut
                .breaks()
                .iter()
                .filter(|&&b| b > day.start_index && b <= day.end_index)
                .map(|b| b - day.start_index)
                .collect();
            let (up, down) = crate::geometry::day_climb(slice, &inner);
            assert!((day.ascent_m - up).abs() < 1e-6, "{day:?}: {up}");
            assert!((day.descent_m - down).abs() < 1e-6, "{day:?}: {down}");
        }
    }

    #[test]
    fn random_routes_never_exceed_the_cap_without_dates() {
        let mut unit = unit_random(0x2545_F491_4F6C_DD1Du64);
        for _ in 0..200 {
            let (total_km, pts) = random_route(&mut unit, 8_000.0);
            let s = random_settings(&mut unit);
            let (route, days) = pace_route(&joined(pts), &s);
            assert_covers(&days, route.points.len());
            let d = km(&days);
            let sum: f64 = d.iter().sum();
            assert!((sum - total_km).abs() < 1e-3, "{s:?} {d:?}");
            if let Some(n) = s.days {
                assert!(days.len() <= n as usize, "{s:?}");
            } else {
                let slack = SNAP_M / 1000.0 + DAY_COUNT_SLACK_KM;
                for x in &d {
                    assert!(*x <= s.max_distance_per_day_km + slack, "{s:?} {d:?}");
                }
            }
        }
    }

    #[test]
    fn day_ascent_follows_the_profile() {
        let pts = synthetic_route(
            160.0,
            50.0,
            Profile::Climbs {
                height_m: 300.0,
                period_km: 80.0,
            },
        );
        let days = pace(&pts, &settings(80.0, 1.0, 1e9, None));
        assert_eq!(days.len(), 2);
        for d in &days {
            assert!((d.ascent_m - 300.0).abs() < 2.0, "{d:?}");
            assert!((d.descent_m - 300.0).abs() < 2.0, "{d:?}");
        }
    }

    #[test]
    fn one_day_per_track_concatenates() {
        let a = synthetic_route(30.0, 100.0, Profile::Flat);
        let b = synthetic_route(45.0, 100.0, Profile::Ramp { gain_m: 500.0 });
        let paced = one_day_per_track(&[a.clone(), Vec::new(), b.clone()]);
        assert_eq!(paced.points.len(), a.len() + b.len());
        assert_eq!(paced.days.len(), 2);
        assert_eq!(
            (paced.days[0].start_index, paced.days[0].end_index),
            (0, a.len() - 1)
        );
        assert_eq!(
            (paced.days[1].start_index, paced.days[1].end_index),
            (a.len(), a.len() + b.len() - 1)
        );
        assert!((paced.days[0].distance_m - 30_000.0).abs() < 1e-6);
        assert!((paced.days[1].distance_m - 45_000.0).abs() < 1e-6);
        assert!((paced.days[1].ascent_m - 500.0).abs() < 1.0);
        assert!(one_day_per_track(&[]).days.is_empty());
    }

    // ---------- effort-aware days ----------

    /// An 82 km route: flat, or climbing `height_m` every 10 km (the loop climbs
    /// 3,235 m over 82 km).
    fn eighty_two_km(height_m: f64) -> JoinedRoute {
        let profile = if height_m > 0.0 {
            Profile::Climbs {
                height_m,
                period_km: 10.0,
            }
        } else {
            Profile::Flat
        };
        joined(synthetic_route(82.0, 50.0, profile))
    }

    #[test]
    fn a_hilly_trip_gets_more_shorter_days_and_a_flat_one_is_paced_by_distance() {
        let s = settings(30.0, 1.0, 50.0, None);
        let flat = day_lengths_km(&eighty_two_km(0.0), &s).expect("days");
        // Flat: ⌈82 / 30⌉ = 3 days of 27.3 km, as by distance.
        assert_eq!(flat.len(), 3);
        assert!(
            flat.iter().all(|d| (d - 82.0 / 3.0).abs() < 0.01),
            "{flat:?}"
        );
        // 8.2 climbs of 400 m ≈ 3,280 m: effort 82 + 65.6 = 147.6 km, so 5 days.
        let hilly = day_lengths_km(&eighty_two_km(400.0), &s).expect("days");
        assert_eq!(hilly.len(), 5, "{hilly:?}");
        assert!(hilly.iter().all(|d| *d < 20.0), "{hilly:?}");
        let total: f64 = hilly.iter().sum();
        assert!(
            (total - 82.0).abs() < 1e-6,
            "the days cover the route: {total}"
        );
    }

    #[test]
    fn the_climbing_day_is_the_short_one() {
        // 40 km flat, then 40 km climbing 1,000 m: at 60 km of effort a day, the flat half
        // takes more km than the climb.
        let mut points = synthetic_route(40.0, 50.0, Profile::Flat);
        let climb = synthetic_route(40.0, 50.0, Profile::Ramp { gain_m: 1_000.0 });
        let offset = points.last().map_or(0.0, |p| p.lon) - climb[0].lon;
        points.extend(climb.iter().skip(1).map(|p| TrackPoint {
            lon: p.lon + offset,
            ..*p
        }));
        let days = day_lengths_km(&joined(points), &settings(60.0, 1.0, 50.0, None)).expect("days");
        assert_eq!(days.len(), 2, "effort 80 + 20 = 100 km: {days:?}");
        assert!(days[0] > 45.0 && days[1] < 35.0, "{days:?}");
    }

    #[test]
    fn dates_give_exactly_that_many_days_even_short_ones() {
        // 576 km over 30 dates at 30 km a day: 30 days of 19.2 km (the old 30 km floor made 20).
        let route = joined(synthetic_route(576.0, 200.0, Profile::Flat));
        let days = day_lengths_km(&route, &settings(30.0, 1.0, 50.0, Some(30))).expect("days");
        assert_eq!(days.len(), 30);
        assert!(days.iter().all(|d| (d - 19.2).abs() < 0.01), "{days:?}");
        // And a 20 km daily maximum is honoured without dates.
        let days = day_lengths_km(&route, &settings(20.0, 1.0, 50.0, None)).expect("days");
        assert_eq!(days.len(), 29);
        assert!(days.iter().all(|d| *d <= 20.0 + 1e-6), "{days:?}");
    }

    #[test]
    fn unknown_heights_count_as_no_climbing() {
        let mut points = synthetic_route(
            82.0,
            50.0,
            Profile::Climbs {
                height_m: 400.0,
                period_km: 10.0,
            },
        );
        for p in &mut points {
            p.ele = None;
        }
        let days = day_lengths_km(&joined(points), &settings(30.0, 1.0, 50.0, None)).expect("days");
        assert_eq!(days.len(), 3);
    }
}
