//! The enrichment jobs: scanning for places to sleep around the days' ends (Overpass) and
//! re-routing a day through a waypoint (BRouter/Valhalla, or a straight spur offline). Their
//! results are enrichments: they land as events without moving the trip's version.

use etappe_domain::text::strip_controls;
use etappe_domain::trip::edits::Measure;
use etappe_domain::trip::stage::{Accommodation, DaySpan, Detour, Point, SpurJunction};
use etappe_domain::trip::{StageAccommodations, TripCommand};
use etappe_route::detour::{Junction, candidates, choose, splice};
use etappe_route::geometry::{cumulative_distances, known_climb};
use etappe_route::gpx::TrackPoint;
use etappe_upstream::{
    BedSearch, OsmFeatures, RideProfile, RoutePoint, UpstreamError, spur_detour,
};
use uuid::Uuid;

use crate::pipeline::{Applied, JobError, JobScope, Outcome, Pipeline};
use etappe_track::stored;

/// Our accommodation type as the adapter names it.
pub(crate) fn to_candidate(found: &etappe_upstream::Accommodation) -> Accommodation {
    Accommodation {
        name: found.name.as_deref().map(strip_controls),
        kind: found.kind.as_str().to_owned(),
        lat: found.lat,
        lon: found.lon,
        distance_to_end_m: Some(found.distance_to_end_m),
        price_min_eur: Some(found.price_min_eur),
        price_max_eur: Some(found.price_max_eur),
        exact_price: found.exact_price,
        url: found.website.as_deref().map(strip_controls),
        phone: found.phone.as_deref().map(strip_controls),
        address: found.address.as_deref().map(strip_controls),
        source: "osm".into(),
        chosen_by: None,
    }
}

/// Candidates kept per day: enough to choose from, small enough to read.
const CANDIDATES_PER_DAY: usize = 8;

impl Pipeline {
    /// Scans around each day's end (or one day's) and records what was found; without a
    /// provider, records the category as unavailable, never inventing places.
    pub(crate) async fn scan_accommodations(
        &self,
        scope: JobScope<'_>,
        radius_km: f64,
        only: Option<Uuid>,
    ) -> Result<Outcome, JobError> {
        let Some(view) = self.view(scope.trip_id).await? else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        let found = match self.upstreams.osm_source().await {
            Some(source) => match self
                .scan(source.as_ref(), &view.trip, radius_km, only)
                .await
            {
                Ok(found) => Ok(found),
                Err(e) if e.retryable => return Err(JobError::Transient(e.to_string())),
                Err(e) => Err(format!("{} failed: {e}", source.source())),
            },
            None => Err(self.upstreams.no_osm_source_reason()),
        };
        let applied = self
            .apply_step(scope, "scan", || match &found {
                Ok(stages) => TripCommand::RecordAccommodations {
                    generation: scope.generation,
                    stages: stages.clone(),
                },
                Err(reason) => TripCommand::FailAccommodations {
                    generation: scope.generation,
                    reason: reason.clone(),
                },
            })
            .await?;
        Ok(outcome(applied))
    }

    /// Asks the OpenStreetMap source around each chosen day's end (rest days sleep where
    /// the day before ended). The first failure is the answer.
    pub(crate) async fn scan(
        &self,
        source: &dyn OsmFeatures,
        trip: &etappe_domain::trip::Trip,
        radius_km: f64,
        only: Option<Uuid>,
    ) -> Result<Vec<StageAccommodations>, UpstreamError> {
        let types = &trip.settings.enabled_accommodation_types;
        let mut results = Vec::new();
        for stage in trip
            .stages
            .iter()
            .filter(|s| only.is_none_or(|id| id == s.id) && !s.is_rest_day)
        {
            let found = source
                .accommodations_near(BedSearch {
                    lat: stage.end.lat,
                    lon: stage.end.lon,
                    radius_m: (radius_km * 1000.0).round() as u32,
                    types,
                })
                .await;
            results.push(StageAccommodations {
                stage_id: stage.id,
                accommodations: found?
                    .into_iter()
                    .take(CANDIDATES_PER_DAY)
                    .map(|a| to_candidate(&a))
                    .collect(),
            });
        }
        Ok(results)
    }

    /// Re-routes a day through a waypoint as a spur (`etappe_route::detour`): it leaves the
    /// day's own track near the point, reaches it by the configured router, comes back, and
    /// keeps the rest of the day. Without a router (or when it finds no way), a straight spur
    /// out and back from the nearest point, flagged estimated. The spur's heights come from
    /// the elevation source as the route's do (`pipeline::heights`), so a day whose climbing
    /// was known stays known, the spur's climbing included; a source failing for now retries
    /// the job. Only where no source gives a height is the day's climbing unknown.
    pub(crate) async fn reroute_stage(
        &self,
        scope: JobScope<'_>,
        stage_id: Uuid,
        waypoint: Point,
    ) -> Result<Outcome, JobError> {
        let Some(view) = self.view(scope.trip_id).await? else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        let (Some(stage), Some(route)) = (
            view.trip.stages.iter().find(|s| s.id == stage_id),
            view.trip.route.as_ref(),
        ) else {
            return Ok(Outcome::Dropped("the day no longer exists".into()));
        };
        let track_points = match self.store.get_blob(&route.track_key).await? {
            Some(bytes) => stored::decode(&bytes).unwrap_or_default(),
            None => Vec::new(),
        };
        let last = stage.last_point.min(track_points.len().saturating_sub(1));
        let day: Vec<TrackPoint> = track_points
            .get(stage.first_point..=last)
            .map(<[TrackPoint]>::to_vec)
            .unwrap_or_default();
        if day.len() < 2 {
            return Ok(Outcome::Dropped("the day has no route to re-route".into()));
        }
        let via = RoutePoint::new(waypoint.lat, waypoint.lon);
        let profile = view
            .trip
            .source
            .plan
            .as_ref()
            .map_or(RideProfile::default(), |plan| plan.profile);
        let router = &self.upstreams.router;
        let routed = if router.routes() {
            match self.routed_spur(&day, via, profile).await {
                Ok(found) => found,
                Err(e) if e.retryable => return Err(JobError::Transient(e.to_string())),
                // "No route" is an answer: the straight spur stands in, and says so.
                Err(e) => {
                    tracing::info!(failure = %e.failure, "no routed spur; a straight one stands in");
                    None
                }
            }
        } else {
            None
        };
        let (mut points, junction, estimated, router_name) = match routed {
            Some((points, junction)) => (points, junction, false, router.name()),
            None => {
                let (points, junction) = straight_spur(&day, via);
                (points, junction, true, "offline")
            }
        };
        // Only the spur lacks heights (the router gives none, or some): the day's own points
        // keep theirs. Before anything is written, so a retry leaves nothing behind.
        self.fill_heights_or_retry(&mut points).await?;
        let climb = known_climb(&points, &[]);
        let original = stage
            .detour
            .as_ref()
            .map_or(stage.distance_km, |d| d.original_distance_km);
        let (original_ascent, original_descent) = match &stage.detour {
            Some(d) => (d.original_ascent_m, d.original_descent_m),
            None => (stage.ascent_m, stage.descent_m),
        };
        // The day's length plus what the spur adds: counted this way, a gap between the
        // source's pieces inside the day stays uncounted, as it was.
        let distance_km = original + junction.added_m() / 1000.0;
        let key = format!("detour:{}:{stage_id}:{}", scope.trip_id, scope.job_id);
        self.store.put_blob(&key, &stored::encode(&points)).await?;
        let detour = Detour {
            waypoint,
            track_key: key,
            original_distance_km: original,
            estimated,
            router: router_name.to_owned(),
            original_ascent_m: original_ascent,
            original_descent_m: original_descent,
            junction: Some(SpurJunction {
                leave_point: stage.first_point + junction.leave,
                rejoin_point: stage.first_point + junction.rejoin,
                skipped_m: junction.skipped_m.round(),
                spur_m: junction.spur_m.round(),
            }),
            spliced_day: Some(DaySpan {
                first_point: stage.first_point,
                last_point: stage.last_point,
            }),
        };
        let applied = self
            .apply_step(scope, "detour", || TripCommand::RecordDetour {
                generation: scope.generation,
                stage_id,
                detour: detour.clone(),
                measure: Measure {
                    distance_km,
                    ascent_m: climb.map(|c| c.0),
                    descent_m: climb.map(|c| c.1),
                }
                .rounded(),
            })
            .await?;
        Ok(outcome(applied))
    }

    /// The routed spur through `via` spliced into `day`, with its junctions; `None` when the
    /// day has no point to branch from.
    async fn routed_spur(
        &self,
        day: &[TrackPoint],
        via: RoutePoint,
        profile: RideProfile,
    ) -> Result<Option<(Vec<TrackPoint>, Junction)>, UpstreamError> {
        let router = &self.upstreams.router;
        let Some(found) = candidates(day, (via.lat, via.lon)) else {
            return Ok(None);
        };
        let at = |i: usize| as_route(&day[i]);
        let leave: Vec<RoutePoint> = found.leave.iter().map(|&i| at(i)).collect();
        let rejoin: Vec<RoutePoint> = found.rejoin.iter().map(|&i| at(i)).collect();
        // The matrix only chooses the junctions: when the engine will not give one (an
        // instance without the service, a refusal), the spur goes out and back from the
        // nearest point; a failure worth retrying is retried.
        let matrix = |result: Result<Option<Vec<Vec<Option<f64>>>>, UpstreamError>| match result {
            Ok(found) => Ok(found),
            Err(e) if e.retryable => Err(e),
            Err(e) => {
                tracing::info!(failure = %e.failure, "no distance matrix; the spur goes out and back");
                Ok(None)
            }
        };
        let out = matrix(router.distances(&leave, &[via], profile).await)?;
        let back = matrix(router.distances(&[via], &rejoin, profile).await)?;
        let chosen = match (out, back) {
            (Some(out), Some(back)) => {
                let out: Vec<(usize, Option<f64>)> = found
                    .leave
                    .iter()
                    .zip(&out)
                    .map(|(&i, row)| (i, row.first().copied().flatten()))
                    .collect();
                let back: Vec<(usize, Option<f64>)> = match back.first() {
                    Some(row) => found
                        .rejoin
                        .iter()
                        .copied()
                        .zip(row.iter().copied())
                        .collect(),
                    None => Vec::new(),
                };
                choose(day, &out, &back)
            }
            // No matrix service (BRouter): out and back from the nearest point.
            _ => None,
        };
        let (leave_at, rejoin_at) =
            chosen.map_or((found.nearest, found.nearest), |j| (j.leave, j.rejoin));
        let path = router
            .route(&[at(leave_at), via, at(rejoin_at)], profile)
            .await?;
        let spur: Vec<TrackPoint> = path.points.iter().map(as_track).collect();
        let points = splice(day, leave_at, &spur, rejoin_at);
        let along = cumulative_distances(day);
        let skipped_m = along[rejoin_at] - along[leave_at];
        // The routed length, not the matrix's estimate; never below what it skips, so a
        // detour never shortens the day.
        let junction = Junction {
            leave: leave_at,
            rejoin: rejoin_at,
            skipped_m,
            spur_m: (path.distance_km * 1000.0).max(skipped_m),
        };
        Ok(Some((points, junction)))
    }
}

fn as_route(p: &TrackPoint) -> RoutePoint {
    RoutePoint {
        lat: p.lat,
        lon: p.lon,
        ele: p.ele,
    }
}

fn as_track(p: &RoutePoint) -> TrackPoint {
    TrackPoint {
        lat: p.lat,
        lon: p.lon,
        ele: p.ele,
    }
}

/// A written (or already written) result completes the job; a refusal (trip gone, generation
/// superseded, day merged away) drops it.
fn outcome(applied: Applied) -> Outcome {
    match applied {
        Applied::Refused(refused) => Outcome::Dropped(refused.to_string()),
        Applied::Done(_) => Outcome::Completed,
    }
}

/// The day with a straight out-and-back spur to `via` from its nearest point (what stands
/// in when no router answers), with its junction.
fn straight_spur(day: &[TrackPoint], via: RoutePoint) -> (Vec<TrackPoint>, Junction) {
    let route: Vec<RoutePoint> = day.iter().map(as_route).collect();
    let (nearest, path) = spur_detour(&route, via);
    let mut points: Vec<TrackPoint> = day.iter().take(nearest + 1).copied().collect();
    // The spur starts and ends at the nearest point, already in the list.
    points.extend(path.points.iter().skip(1).map(as_track));
    points.extend(day.iter().skip(nearest + 1).copied());
    let junction = Junction {
        leave: nearest,
        rejoin: nearest,
        skipped_m: 0.0,
        spur_m: path.distance_km * 1000.0,
    };
    (points, junction)
}

#[cfg(test)]
mod detour_heights;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spur_leaves_the_day_at_its_nearest_point_and_comes_back() {
        let day: Vec<TrackPoint> = (0..11)
            .map(|i| TrackPoint {
                lat: 45.0 + f64::from(i) * 0.009,
                lon: 6.0,
                ele: None,
            })
            .collect();
        let via = RoutePoint::new(45.045, 6.02);
        let (points, junction) = straight_spur(&day, via);
        assert!((junction.added_m() - junction.spur_m).abs() < 1e-9);
        let before = cumulative_distances(&day).last().copied().unwrap_or(0.0);
        let after = cumulative_distances(&points).last().copied().unwrap_or(0.0);
        let off = RoutePoint::new(45.045, 6.0).distance_m(&via);
        assert!(
            (after - before - 2.0 * off).abs() < 50.0,
            "{before} {after} {off}"
        );
        assert_eq!(points.first(), day.first());
        assert_eq!(points.last(), day.last());
        assert!(points.iter().any(|p| (p.lon - 6.02).abs() < 1e-6));
    }
}
