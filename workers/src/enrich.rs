//! The enrichment jobs: scanning for places to sleep around the days' ends (Overpass) and
//! re-routing a day through a waypoint (BRouter/Valhalla, or a straight spur offline). Their
//! results are enrichments: they land as events without moving the trip's version.

use etappe_domain::ids::TripId;
use etappe_domain::text::strip_controls;
use etappe_domain::trip::settings::AccommodationType;
use etappe_domain::trip::stage::{Accommodation, Detour, Point};
use etappe_domain::trip::{StageAccommodations, TripCommand};
use etappe_route::geometry::{cumulative_distances, elevation_gain_loss};
use etappe_route::gpx::TrackPoint;
use etappe_upstream::{OsmFeatures, RoutePoint, UpstreamError, spur_detour};
use uuid::Uuid;

use crate::pipeline::{Applied, JobError, Outcome, Pipeline};
use crate::track;

/// Our accommodation type as the adapter names it.
fn upstream_type(kind: AccommodationType) -> etappe_upstream::AccommodationType {
    use etappe_upstream::AccommodationType as U;
    match kind {
        AccommodationType::CampSite => U::CampSite,
        AccommodationType::Hostel => U::Hostel,
        AccommodationType::AlpineHut => U::AlpineHut,
        AccommodationType::Chalet => U::Chalet,
        AccommodationType::GuestHouse => U::GuestHouse,
        AccommodationType::Hotel => U::Hotel,
        AccommodationType::WildernessHut => U::WildernessHut,
    }
}

fn to_candidate(found: &etappe_upstream::Accommodation) -> Accommodation {
    Accommodation {
        name: found.name.as_deref().map(strip_controls),
        kind: found.kind.osm_value().to_owned(),
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
    }
}

/// Candidates kept per day: enough to choose from, small enough to read.
const CANDIDATES_PER_DAY: usize = 8;

impl Pipeline {
    /// Scans around each day's end (or one day's) and records what was found; without a
    /// provider, records the category as unavailable, never inventing places.
    pub(crate) async fn scan_accommodations(
        &self,
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        radius_km: f64,
        only: Option<Uuid>,
        traceparent: Option<&str>,
    ) -> Result<Outcome, JobError> {
        let Some(view) = self.view(trip_id).await? else {
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
            .apply(
                trip_id,
                &format!("{job_id}:scan"),
                traceparent,
                || match &found {
                    Ok(stages) => TripCommand::RecordAccommodations {
                        generation,
                        stages: stages.clone(),
                    },
                    Err(reason) => TripCommand::FailAccommodations {
                        generation,
                        reason: reason.clone(),
                    },
                },
            )
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
        let types: Vec<_> = trip
            .settings
            .enabled_accommodation_types
            .iter()
            .map(|t| upstream_type(*t))
            .collect();
        let mut results = Vec::new();
        for stage in trip
            .stages
            .iter()
            .filter(|s| only.is_none_or(|id| id == s.id) && !s.is_rest_day)
        {
            let found = source
                .accommodations_near(
                    stage.end.lat,
                    stage.end.lon,
                    (radius_km * 1000.0).round() as u32,
                    &types,
                )
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

    /// Re-routes a day through a waypoint: the configured router from the day's start via
    /// the point to its end; without one (or when it fails for good), a straight spur out and
    /// back from the nearest point of the day, flagged estimated.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn reroute_stage(
        &self,
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        stage_id: Uuid,
        waypoint: Point,
        traceparent: Option<&str>,
    ) -> Result<Outcome, JobError> {
        let Some(view) = self.view(trip_id).await? else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        let (Some(stage), Some(route)) = (
            view.trip.stages.iter().find(|s| s.id == stage_id),
            view.trip.route.as_ref(),
        ) else {
            return Ok(Outcome::Dropped("the day no longer exists".into()));
        };
        let track_points = match self.store.get_blob(&route.track_key).await? {
            Some(bytes) => track::decode(&bytes).unwrap_or_default(),
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
        let as_route = |p: &TrackPoint| RoutePoint {
            lat: p.lat,
            lon: p.lon,
            ele: p.ele,
        };
        let (points, estimated, router) = match self.upstreams.router_name {
            "offline" => (spur(&day, via), true, "offline"),
            name => {
                let (first, end) = (as_route(&day[0]), as_route(&day[day.len() - 1]));
                match self.upstreams.router.route_via(first, via, end).await {
                    Ok(path) => (
                        path.points
                            .iter()
                            .map(|p| TrackPoint {
                                lat: p.lat,
                                lon: p.lon,
                                ele: p.ele,
                            })
                            .collect(),
                        path.estimated,
                        name,
                    ),
                    Err(e) if e.retryable => return Err(JobError::Transient(e.to_string())),
                    // "No route" is an answer: fall back to the spur, and say so.
                    Err(_) => (spur(&day, via), true, "offline"),
                }
            }
        };
        let distance_km = cumulative_distances(&points).last().copied().unwrap_or(0.0) / 1000.0;
        let (ascent, descent) = elevation_gain_loss(&points);
        let key = format!("detour:{trip_id}:{stage_id}:{job_id}");
        self.store.put_blob(&key, &track::encode(&points)).await?;
        let original = stage
            .detour
            .as_ref()
            .map_or(stage.distance_km, |d| d.original_distance_km);
        let detour = Detour {
            waypoint,
            track_key: key,
            original_distance_km: original,
            estimated,
            router: router.to_owned(),
        };
        let applied = self
            .apply(trip_id, &format!("{job_id}:detour"), traceparent, || {
                TripCommand::RecordDetour {
                    generation,
                    stage_id,
                    detour: detour.clone(),
                    distance_km: (distance_km * 100.0).round() / 100.0,
                    ascent_m: ascent.round(),
                    descent_m: descent.round(),
                }
            })
            .await?;
        Ok(outcome(applied))
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

/// The day with a straight out-and-back spur to `via` from its nearest point.
fn spur(day: &[TrackPoint], via: RoutePoint) -> Vec<TrackPoint> {
    let route: Vec<RoutePoint> = day
        .iter()
        .map(|p| RoutePoint {
            lat: p.lat,
            lon: p.lon,
            ele: p.ele,
        })
        .collect();
    let (nearest, path) = spur_detour(&route, via);
    let to_track = |p: &RoutePoint| TrackPoint {
        lat: p.lat,
        lon: p.lon,
        ele: p.ele,
    };
    let mut points: Vec<TrackPoint> = day.iter().take(nearest + 1).copied().collect();
    // The spur starts and ends at the nearest point, already in the list.
    points.extend(path.points.iter().skip(1).map(to_track));
    points.extend(day.iter().skip(nearest + 1).copied());
    points
}

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
        let points = spur(&day, via);
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
