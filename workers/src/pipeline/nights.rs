//! Nights at accommodation in the route job. The places to sleep of the rider's types along
//! the whole route are asked of the OpenStreetMap source around points every
//! [`SAMPLE_EVERY_M`] of it, projected onto the route, and handed to the domain's pacer
//! (`etappe_domain::trip::nights`), which picks each night's bed; the route is then cut
//! there. The beds are stored beside the track, so a later choice re-flows over the beds the
//! pacer saw.
//!
//! Why samples and not one corridor query: the port's one question is "beds around a
//! point", which both sources answer (the local index from its grid, Overpass from its
//! cache); 250 questions for 1,000 km cost the local index well under a second (see the
//! README's figures).

use std::collections::HashSet;

use etappe_domain::trip::nights::{
    BedOnRoute, MAX_OFF_ROUTE_M, NightNote, NightRules, PlacedNight, night_outcome, pacer_beds,
    place_nights,
};
use etappe_domain::trip::settings::TripSettings;
use etappe_domain::trip::stage::Accommodation;
use etappe_route::geometry::cumulative_distances;
use etappe_route::gpx::TrackPoint;
use etappe_route::pieces::JoinedRoute;
use etappe_upstream::BedSearch;

use crate::enrich::to_candidate;

use super::{JobError, Pipeline};

/// Metres of route between two points the beds are asked around.
pub(crate) const SAMPLE_EVERY_M: f64 = 4_000.0;
/// The radius asked around each: with points 4 km apart, any place within 2 km of the
/// route ([`MAX_OFF_ROUTE_M`]) is within √(2² + 2²) ≈ 2.83 km of one.
pub(crate) const SAMPLE_RADIUS_M: u32 = 3_000;

/// The nights of a route as the pacer placed them, with what it placed them among.
pub(super) struct PacedNights {
    pub(super) placed: Vec<PlacedNight>,
    /// Ridden metres along the joined route (breaks not counted) in `along_m`.
    pub(super) beds: Vec<BedOnRoute>,
    /// The pacer's beds' indices into `beds`.
    pub(super) index: Vec<usize>,
    pub(super) lengths_km: Vec<f64>,
    /// Why no bed could be looked for, when none could.
    pub(super) unavailable: Option<String>,
}

impl PacedNights {
    /// Where the days end, ridden metres from the start.
    pub(super) fn goals_m(&self) -> Vec<f64> {
        self.placed.iter().map(|p| p.end_m).collect()
    }

    /// Day `day`'s chosen place and note (none for the last day, which has no night here).
    pub(super) fn night_of(&self, day: usize) -> (Option<Accommodation>, Option<NightNote>) {
        let Some(placed) = self.placed.get(day) else {
            return (None, None);
        };
        let start_m = day
            .checked_sub(1)
            .and_then(|d| self.placed.get(d))
            .map_or(0.0, |p| p.end_m);
        match &self.unavailable {
            Some(reason) => (
                None,
                Some(NightNote::not_looked_for(placed, start_m, reason)),
            ),
            None => night_outcome(placed, start_m, &self.index, &self.beds),
        }
    }

    /// The beds as stored for re-flows: each at the point of the cut track it lies nearest,
    /// measured as the day edits measure the track (`cut` is the route after the cut).
    pub(super) fn stored_beds(&self, cut: &JoinedRoute) -> Vec<BedOnRoute> {
        let ridden = cut.cumulative_m();
        let measured = cumulative_distances(&cut.points);
        self.beds
            .iter()
            .map(|bed| {
                let after = ridden.partition_point(|d| *d < bed.along_m);
                let index = match after.checked_sub(1) {
                    Some(before)
                        if after >= ridden.len()
                            || bed.along_m - ridden[before] < ridden[after] - bed.along_m =>
                    {
                        before
                    }
                    _ => after.min(ridden.len().saturating_sub(1)),
                };
                BedOnRoute {
                    point_index: index,
                    along_m: measured.get(index).copied().unwrap_or_default(),
                    ..bed.clone()
                }
            })
            .collect()
    }
}

impl Pipeline {
    /// Places the nights of `route`, planned as `lengths_km`, at the beds along it. A source
    /// that fails for a moment is a retry; no source (or one that covers none of the route)
    /// paces the planned cuts and says on each night that no bed could be looked for.
    pub(super) async fn place_route_nights(
        &self,
        route: &JoinedRoute,
        lengths_km: Vec<f64>,
        settings: &TripSettings,
    ) -> Result<PacedNights, JobError> {
        let cumulative = route.cumulative_m();
        let total_m = cumulative.last().copied().unwrap_or_default();
        let rules = NightRules::for_plan(settings.max_distance_per_day, &lengths_km);
        let (beds, unavailable) = match self.beds_along(route, &cumulative, settings).await? {
            Ok(beds) => (beds, None),
            Err(reason) => (Vec::new(), Some(reason)),
        };
        let (pacer, index) = pacer_beds(&beds, &settings.enabled_accommodation_types);
        let placed = place_nights(total_m, &lengths_km, &pacer, &rules, &[]);
        Ok(PacedNights {
            placed,
            beds,
            index,
            lengths_km,
            unavailable,
        })
    }

    /// The places to sleep of the trip's types within [`MAX_OFF_ROUTE_M`] of the route, in
    /// route order; `Err` with the reason when none could be looked for.
    async fn beds_along(
        &self,
        route: &JoinedRoute,
        cumulative: &[f64],
        settings: &TripSettings,
    ) -> Result<Result<Vec<BedOnRoute>, String>, JobError> {
        let Some(source) = self.upstreams.osm_source().await else {
            return Ok(Err(self.upstreams.no_osm_source_reason()));
        };
        let types = &settings.enabled_accommodation_types;
        let samples = sample_indices(cumulative, SAMPLE_EVERY_M);
        let mut seen = HashSet::new();
        let mut beds = Vec::new();
        let mut failed = 0usize;
        let mut first_failure = None;
        for &at in &samples {
            let p = &route.points[at];
            let found = match source
                .accommodations_near(BedSearch {
                    lat: p.lat,
                    lon: p.lon,
                    radius_m: SAMPLE_RADIUS_M,
                    types,
                })
                .await
            {
                Ok(found) => found,
                Err(e) if e.retryable => return Err(JobError::Transient(e.to_string())),
                // Outside the imported extract, say: that stretch has no beds to offer.
                Err(e) => {
                    failed += 1;
                    first_failure.get_or_insert_with(|| e.to_string());
                    continue;
                }
            };
            for place in found {
                if !seen.insert((place.osm_type, place.osm_id)) {
                    continue;
                }
                let Some((along_m, off_route_m)) =
                    project(&route.points, cumulative, at, place.lat, place.lon)
                else {
                    continue;
                };
                if off_route_m > MAX_OFF_ROUTE_M {
                    continue;
                }
                let mut accommodation = to_candidate(&place);
                accommodation.distance_to_end_m = Some(off_route_m.round());
                beds.push(BedOnRoute {
                    accommodation,
                    point_index: 0,
                    along_m,
                    off_route_m,
                });
            }
        }
        if !samples.is_empty() && failed == samples.len() {
            return Ok(Err(format!(
                "{} failed: {}",
                source.source(),
                first_failure.unwrap_or_default()
            )));
        }
        beds.sort_by(|a, b| a.along_m.total_cmp(&b.along_m));
        Ok(Ok(beds))
    }
}

/// Indices of the points about `every_m` apart along the route, the first and last included.
fn sample_indices(cumulative: &[f64], every_m: f64) -> Vec<usize> {
    let mut out = Vec::new();
    let mut next = 0.0;
    for (i, d) in cumulative.iter().enumerate() {
        if *d >= next {
            out.push(i);
            next = d + every_m;
        }
    }
    if let Some(last) = cumulative.len().checked_sub(1)
        && out.last() != Some(&last)
    {
        out.push(last);
    }
    out
}

/// Where a place lies along the route: the ridden metres to the foot of its perpendicular
/// on the nearest segment within reach of the sample at `around`, and its distance from it.
fn project(
    points: &[TrackPoint],
    cumulative: &[f64],
    around: usize,
    lat: f64,
    lon: f64,
) -> Option<(f64, f64)> {
    // A place found within 3 km of the sample lies nearest a segment within 3 km + 2 km
    // of it along the route; 6 km leaves room for a winding road.
    const REACH_M: f64 = 6_000.0;
    let here = *cumulative.get(around)?;
    let first = cumulative.partition_point(|d| *d < here - REACH_M);
    let last = cumulative
        .partition_point(|d| *d <= here + REACH_M)
        .min(points.len());
    // Metres on a plane tangent at the place: exact enough within a few kilometres.
    let m_per_deg = 6_371_008.8_f64.to_radians();
    let cos = lat.to_radians().cos();
    let xy = |p: &TrackPoint| ((p.lon - lon) * cos * m_per_deg, (p.lat - lat) * m_per_deg);
    let mut best: Option<(f64, f64)> = None;
    for j in first..last {
        let a = &points[j];
        let (ax, ay) = xy(a);
        let (along, dist) = match points.get(j + 1).filter(|_| j + 1 < last) {
            Some(b) if cumulative[j + 1] > cumulative[j] => {
                let (bx, by) = xy(b);
                let (dx, dy) = (bx - ax, by - ay);
                let len2 = dx * dx + dy * dy;
                let t = if len2 > 0.0 {
                    (-(ax * dx + ay * dy) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let (px, py) = (ax + t * dx, ay + t * dy);
                (
                    cumulative[j] + t * (cumulative[j + 1] - cumulative[j]),
                    (px * px + py * py).sqrt(),
                )
            }
            _ => (cumulative[j], (ax * ax + ay * ay).sqrt()),
        };
        if best.is_none_or(|(_, d)| dist < d) {
            best = Some((along, dist));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize) -> (Vec<TrackPoint>, Vec<f64>) {
        let points: Vec<TrackPoint> = (0..n)
            .map(|i| TrackPoint {
                lat: 45.0 + i as f64 * 0.009,
                lon: 6.0,
                ele: None,
            })
            .collect();
        let cumulative = cumulative_distances(&points);
        (points, cumulative)
    }

    #[test]
    fn a_place_projects_to_the_foot_of_its_perpendicular() {
        let (points, cumulative) = line(101);
        // Half way between points 40 and 41, 1 km east.
        let lat: f64 = 45.0 + 40.5 * 0.009;
        let lon = 6.0 + 1000.0 / (6_371_008.8_f64.to_radians() * lat.to_radians().cos());
        let (along, off) = project(&points, &cumulative, 41, lat, lon).expect("near");
        assert!((along - cumulative[40] - 500.5).abs() < 5.0, "{along}");
        assert!((off - 1000.0).abs() < 5.0, "{off}");
    }

    #[test]
    fn samples_cover_the_route_to_its_end() {
        let (_, cumulative) = line(101);
        let samples = sample_indices(&cumulative, SAMPLE_EVERY_M);
        assert_eq!(samples.first(), Some(&0));
        assert_eq!(samples.last(), Some(&100));
        for pair in samples.windows(2) {
            let gap = cumulative[pair[1]] - cumulative[pair[0]];
            assert!(gap <= SAMPLE_EVERY_M + 1_001.0, "{gap}");
        }
    }
}
