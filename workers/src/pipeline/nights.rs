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

use etappe_analysis::osm::PASS_APART_M;
use etappe_domain::trip::nights::{
    BedOnRoute, MAX_OFF_ROUTE_M, NightNote, NightRules, PlacedNight, night_outcome, pacer_beds,
    place_nights,
};
use etappe_domain::trip::settings::{AccommodationType, TripSettings};
use etappe_domain::trip::stage::Accommodation;
use etappe_geo::Polyline;
use etappe_route::geometry::cumulative_distances;
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
        let (beds, unavailable) = match self.beds_along(route, &cumulative).await? {
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

    /// The places to sleep within [`MAX_OFF_ROUTE_M`] of the route, of every type (the pacer
    /// keeps the rider's; a night with none names the others it passed), once per pass of
    /// the route, in route order; `Err` with the reason when none could be looked for.
    async fn beds_along(
        &self,
        route: &JoinedRoute,
        cumulative: &[f64],
    ) -> Result<Result<Vec<BedOnRoute>, String>, JobError> {
        let Some(source) = self.upstreams.osm_source().await else {
            return Ok(Err(self.upstreams.no_osm_source_reason()));
        };
        let samples = sample_indices(cumulative, SAMPLE_EVERY_M);
        let mut seen = HashSet::new();
        let mut places = Vec::new();
        let mut failed = 0usize;
        let mut first_failure = None;
        for &at in &samples {
            let p = &route.points[at];
            let found = match source
                .accommodations_near(BedSearch {
                    lat: p.lat,
                    lon: p.lon,
                    radius_m: SAMPLE_RADIUS_M,
                    types: &AccommodationType::ALL,
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
            places.extend(
                found
                    .into_iter()
                    .filter(|place| seen.insert((place.osm_type, place.osm_id))),
            );
        }
        if !samples.is_empty() && failed == samples.len() {
            return Ok(Err(format!(
                "{} failed: {}",
                source.source(),
                first_failure.unwrap_or_default()
            )));
        }
        Ok(Ok(beds_at_every_pass(route, cumulative, &places)))
    }
}

/// Each place projected on the route at every pass within [`MAX_OFF_ROUTE_M`], in route
/// order: a hotel on a lap is a bed at every lap, a hut beside a hairpin is found where the
/// road passes nearest it (not at the first point of the route that happens to be close).
fn beds_at_every_pass(
    route: &JoinedRoute,
    cumulative: &[f64],
    places: &[etappe_upstream::Accommodation],
) -> Vec<BedOnRoute> {
    let line = Polyline::new(
        route.points.iter().map(|p| (p.lat, p.lon)).collect(),
        cumulative.to_vec(),
    );
    let mut beds = Vec::new();
    for place in places {
        for pass in line.passes((place.lat, place.lon), MAX_OFF_ROUTE_M, PASS_APART_M) {
            let mut accommodation = to_candidate(place);
            accommodation.distance_to_end_m = Some(pass.off_m.round());
            beds.push(BedOnRoute {
                accommodation,
                point_index: pass.segment,
                along_m: pass.along_m,
                off_route_m: pass.off_m,
            });
        }
    }
    beds.sort_by(|a, b| a.along_m.total_cmp(&b.along_m));
    beds
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

#[cfg(test)]
mod tests {
    use super::*;
    use etappe_route::gpx::TrackPoint;

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

    fn hotel_at(lat: f64, lon: f64) -> etappe_upstream::Accommodation {
        etappe_upstream::Accommodation {
            name: Some("Lap Hotel".into()),
            kind: AccommodationType::Hotel,
            lat,
            lon,
            distance_to_end_m: 0.0,
            price_min_eur: 80.0,
            price_max_eur: 120.0,
            exact_price: false,
            website: None,
            phone: None,
            address: None,
            opening_hours: None,
            osm_type: etappe_upstream::OsmType::Node,
            osm_id: 7,
        }
    }

    #[test]
    fn an_out_and_back_finds_its_hotel_on_both_passes_at_the_true_foot() {
        // 10 km north, then the same road back south; the hotel sits 100 m east of km 5.
        let (mut points, _) = line(11);
        let back: Vec<TrackPoint> = points.iter().rev().skip(1).cloned().collect();
        points.extend(back);
        let route = JoinedRoute {
            points,
            gaps: Vec::new(),
        };
        let cumulative = route.cumulative_m();
        let beds = beds_at_every_pass(&route, &cumulative, &[hotel_at(45.045, 6.00127)]);
        assert_eq!(beds.len(), 2, "{beds:?}");
        let total = cumulative.last().copied().unwrap_or_default();
        assert!(
            (beds[0].along_m - 5_004.0).abs() < 50.0,
            "{}",
            beds[0].along_m
        );
        assert!(
            (beds[1].along_m - (total - 5_004.0)).abs() < 50.0,
            "{}",
            beds[1].along_m
        );
        for bed in &beds {
            assert!((bed.off_route_m - 100.0).abs() < 5.0, "{}", bed.off_route_m);
        }
    }

    #[test]
    fn a_place_beyond_reach_is_no_bed() {
        let (points, _) = line(11);
        let route = JoinedRoute {
            points,
            gaps: Vec::new(),
        };
        let cumulative = route.cumulative_m();
        // 0.03° of longitude at 45° N is about 2.4 km: beyond the 2 km reach.
        let beds = beds_at_every_pass(&route, &cumulative, &[hotel_at(45.045, 6.03)]);
        assert!(beds.is_empty(), "{beds:?}");
    }
}
