//! The route job's fetching and pacing: the source fetched (one link, or a Komoot collection
//! within its budget), parsed, cut into days and labelled.

use etappe_domain::ids::derived_id;
use etappe_domain::text::strip_controls;
use etappe_domain::trip::settings::NightsMode;
use etappe_domain::trip::source::SourceType;
use etappe_domain::trip::stage::{Point, RouteSummary, Stage};
use etappe_domain::trip::{Category, Trip, TripCommand};
use etappe_route::geometry::{cumulative_distances_with_breaks, day_climb_with};
use etappe_route::gpx::{ParsedRoute, TrackPoint, parse_gpx};
use etappe_route::pacing::{
    DaySplit, PacingSettings, cut_by_lengths, cut_route_at, day_lengths_km_with, one_day_per_track,
};
use etappe_route::pieces::join_pieces;
use etappe_route::sources::{
    komoot_collection_tour_ids, parse_komoot_tour_html, parse_ridewithgps_json,
};
use uuid::Uuid;

use crate::progress::{ProgressState, Reporter};
use etappe_infra::fetch::FetchError;
use etappe_infra::fetch::origins::RouteService;
use etappe_track::stored;

use super::nights::PacedNights;
use super::{Applied, JobError, JobScope, Outcome, Pipeline, heights_known, round};
use etappe_domain::trip::nights::BedOnRoute;

/// A route cut into days: the track as stored, each day's split of it, and with nights at
/// accommodation the beds along it and the nights placed at them. `cumulative_m`: the
/// distance from the start to each stored point (breaks not counted) when the pacing measured
/// it already.
struct PacedRoute {
    stored: stored::StoredTrack,
    splits: Vec<DaySplit>,
    nights: Option<(Vec<BedOnRoute>, PacedNights)>,
    cumulative_m: Option<Vec<f64>>,
}

impl Pipeline {
    pub(super) async fn compute_route(
        &self,
        scope: JobScope<'_>,
        reporter: &mut Reporter<'_>,
    ) -> Result<Outcome, JobError> {
        let view = match self
            .apply_step(scope, "start", || TripCommand::StartRoute {
                generation: scope.generation,
                job_id: scope.job_id,
            })
            .await?
        {
            Applied::Refused(refused) => return Ok(Outcome::Dropped(refused.to_string())),
            Applied::Done(view) => view,
        };
        let Some(view) = view else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        let trip = view.trip;
        if trip.generation != scope.generation {
            return Ok(Outcome::Dropped(format!(
                "generation {} was superseded",
                scope.generation
            )));
        }
        if let Some(route) = &trip.route {
            return self.finish_redelivered(scope, &trip, route).await;
        }

        let fetched = if trip.source.source_type == SourceType::Plan {
            self.route_plan(&trip, reporter).await
        } else {
            reporter
                .report(10, "fetching", "fetching the route", ProgressState::Running)
                .await;
            self.fetch_route(&trip).await
        };
        let mut parsed = match fetched {
            Ok(parsed) => parsed,
            Err(RouteFailure::Transient(why)) => return Err(JobError::Transient(why)),
            Err(RouteFailure::Terminal(reason)) => {
                return self.fail_route(scope, reason).await;
            }
        };

        reporter
            .report(
                45,
                "heights",
                "looking up the heights the route lacks",
                ProgressState::Running,
            )
            .await;
        let mut elevation = self.fill_track_heights(&mut parsed.tracks).await;
        // A route whose climbing is unknown is cut by distance alone, and says so: its
        // missing climbing must not pass for a flat route's.
        let climbing_known = elevation.missing_points == 0;
        elevation.paced_without_climbing = !climbing_known;
        reporter
            .report(
                50,
                "pacing",
                "cutting the route into days",
                ProgressState::Running,
            )
            .await;
        let PacedRoute {
            stored,
            splits,
            nights,
            cumulative_m,
        } = match self.cut_into_days(&trip, &parsed, climbing_known).await? {
            Ok(paced) => paced,
            Err(reason) => return self.fail_route(scope, reason).await,
        };
        let points = &stored.points;
        if splits.is_empty() || points.len() < 2 {
            let reason = "the route has fewer than two usable points".to_owned();
            return self.fail_route(scope, reason).await;
        }

        reporter
            .report(
                70,
                "labelling",
                "naming where each day starts and ends",
                ProgressState::Running,
            )
            .await;
        let stages: Vec<Stage> = splits
            .iter()
            .enumerate()
            .filter_map(|(i, split)| {
                self.stage_of_split(
                    scope.job_id,
                    i,
                    split,
                    points,
                    nights.as_ref().map(|(_, p)| p),
                )
            })
            .collect();
        // Breaks between the source's pieces count no distance and no climb (etappe_route::pieces).
        let breaks = stored.breaks();
        let cumulative = cumulative_m
            .filter(|measured| measured.len() == points.len())
            .unwrap_or_else(|| cumulative_distances_with_breaks(points, &breaks));
        let total_m = cumulative.last().copied().unwrap_or(0.0);
        let (ascent, descent) = day_climb_with(points, &cumulative, &breaks);
        let track_key = stored::key(scope.trip_id, scope.generation);
        self.store
            .put_blob(&track_key, &stored::encode_stored(&stored))
            .await?;
        if let Some((beds, _)) = &nights {
            self.store
                .put_blob(&stored::beds_key(&track_key), &stored::encode_beds(beds))
                .await?;
        }
        let route = RouteSummary {
            // Third-party text: it becomes the trip's title when the rider gave none.
            title: parsed.name.as_deref().map(strip_controls),
            total_distance_km: round(total_m / 1000.0, 2),
            ascent_m: climbing_known.then(|| ascent.round()),
            descent_m: climbing_known.then(|| descent.round()),
            point_count: points.len(),
            track_key,
            elevation: Some(elevation),
        };
        let view = match self
            .apply_step(scope, "route", || TripCommand::RecordRoute {
                generation: scope.generation,
                route: route.clone(),
                stages: stages.clone(),
            })
            .await?
        {
            Applied::Refused(refused) => return Ok(Outcome::Dropped(refused.to_string())),
            Applied::Done(view) => view,
        };

        reporter
            .report(
                85,
                "analysing",
                "analysing each day",
                ProgressState::Running,
            )
            .await;
        let Some(view) = view else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        self.record_analysis(
            scope.job_id,
            &view.trip,
            &stored,
            Some(&cumulative),
            &Category::ALL,
            scope.traceparent,
        )
        .await
    }

    /// A redelivered route job whose route is already in: its first delivery died after
    /// recording the days (a killed worker) and before their analysis ended. The job is
    /// complete only with what follows its first step, so it goes on with the analysis still
    /// open (pending, or running under the dead worker); a job with nothing left is a
    /// duplicate and ends.
    async fn finish_redelivered(
        &self,
        scope: JobScope<'_>,
        trip: &Trip,
        route: &etappe_domain::trip::stage::RouteSummary,
    ) -> Result<Outcome, JobError> {
        let open = trip.open_analysis();
        if open.is_empty() {
            return Ok(Outcome::Dropped(
                "the route of this generation is already computed and analysed".into(),
            ));
        }
        tracing::warn!(
            trip_id = %scope.trip_id,
            generation = scope.generation,
            categories = ?open,
            "a redelivered route job goes on with the analysis its first delivery did not finish"
        );
        let stored = match self.store.get_blob(&route.track_key).await? {
            Some(bytes) => stored::decode_stored(&bytes).unwrap_or_default(),
            None => stored::StoredTrack::default(),
        };
        self.record_analysis(scope.job_id, trip, &stored, None, &open, scope.traceparent)
            .await
    }

    /// The route cut into days: one a track for a Komoot collection, else paced by
    /// distance (and climbing, when known) or, with nights at accommodation, to the beds
    /// along the route. `Ok(Err(reason))`: the route cannot be cut, for good.
    async fn cut_into_days(
        &self,
        trip: &Trip,
        parsed: &ParsedRoute,
        climbing_known: bool,
    ) -> Result<Result<PacedRoute, String>, JobError> {
        let mut nights = None;
        let mut cumulative_m = None;
        let (stored, splits) = if trip.source.source_type == SourceType::KomootCollection {
            let paced = one_day_per_track(&parsed.tracks);
            let stored = stored::StoredTrack {
                points: paced.points,
                gaps: Vec::new(),
                waypoints: parsed.waypoints.clone(),
            };
            (stored, paced.days)
        } else {
            let joined = match join_pieces(parsed) {
                Ok(joined) => joined,
                Err(refused) => return Ok(Err(describe_route_error(&refused))),
            };
            let s = &trip.settings;
            let settings = PacingSettings {
                max_distance_per_day_km: s.max_distance_per_day,
                fatigue_factor: s.fatigue_factor,
                elevation_penalty: if climbing_known {
                    s.elevation_penalty
                } else {
                    0.0
                },
                days: s.asked_day_count(),
            };
            // The route measured once, for the planning and the cutting alike.
            let cumulative = joined.cumulative_m();
            // With nights at accommodation the planned days end at beds (one night each).
            let planned = day_lengths_km_with(&joined, &cumulative, &settings);
            let paced_nights = match &planned {
                Some(lengths) if s.nights == NightsMode::AtAccommodation && lengths.len() > 1 => {
                    Some(self.place_route_nights(&joined, lengths.clone(), s).await?)
                }
                _ => None,
            };
            let cut = match &paced_nights {
                Some(paced) => cut_route_at(&joined, &cumulative, &paced.goals_m()),
                None => cut_by_lengths(&joined, &cumulative, planned),
            };
            if let Some(paced) = paced_nights.filter(|p| p.placed.len() + 1 == cut.days.len()) {
                nights = Some((paced.stored_beds(&cut.route), paced));
            }
            cumulative_m = Some(cut.cumulative_m);
            let mut stored = stored::StoredTrack::from(cut.route);
            stored.waypoints = parsed.waypoints.clone();
            (stored, cut.days)
        };
        Ok(Ok(PacedRoute {
            stored,
            splits,
            nights,
            cumulative_m,
        }))
    }

    /// Fails the route of `generation` for good with `reason` (the trip says why).
    async fn fail_route(&self, scope: JobScope<'_>, reason: String) -> Result<Outcome, JobError> {
        self.apply_step(scope, "failed", || TripCommand::FailRoute {
            generation: scope.generation,
            reason: reason.clone(),
        })
        .await?;
        Ok(Outcome::Failed(reason))
    }

    /// Day `day_index` of a freshly paced route: its ends labelled, its climbing where the
    /// heights are known, and its night where the pacer placed one at a bed.
    fn stage_of_split(
        &self,
        job_id: Uuid,
        day_index: usize,
        split: &DaySplit,
        points: &[TrackPoint],
        nights: Option<&PacedNights>,
    ) -> Option<Stage> {
        let start = points.get(split.start_index)?;
        let end = points.get(split.end_index)?;
        let known = points
            .get(split.start_index..=split.end_index)
            .is_some_and(heights_known);
        let (accommodation, night) = nights.map_or((None, None), |paced| paced.night_of(day_index));
        let planned_km = nights
            .and_then(|paced| paced.lengths_km.get(day_index))
            .map(|km| round(*km, 2));
        let start_place = self.labeller.label(start.lat, start.lon);
        let end_place = self.labeller.label(end.lat, end.lon);
        Some(Stage {
            id: derived_id(&format!("{job_id}:stage:{day_index}")),
            day_number: day_index as u32 + 1,
            distance_km: round(split.distance_m / 1000.0, 2),
            ascent_m: known.then(|| split.ascent_m.round()),
            descent_m: known.then(|| split.descent_m.round()),
            start: Point {
                lat: start.lat,
                lon: start.lon,
                ele: start.ele,
            },
            end: Point {
                lat: end.lat,
                lon: end.lon,
                ele: end.ele,
            },
            start_label: start_place.as_ref().map(|p| p.name.clone()),
            end_label: end_place.as_ref().map(|p| p.name.clone()),
            start_country: start_place.map(|p| p.country_code),
            end_country: end_place.map(|p| p.country_code),
            first_point: split.start_index,
            last_point: split.end_index,
            accommodation,
            planned_km,
            night,
            ..Default::default()
        })
    }

    pub(super) async fn fetch_route(&self, trip: &Trip) -> Result<ParsedRoute, RouteFailure> {
        let url = trip.source.url.as_str();
        let parse_gpx_bytes = |bytes: &[u8]| {
            parse_gpx(bytes).map_err(|e| RouteFailure::Terminal(describe_route_error(&e)))
        };
        match trip.source.source_type {
            SourceType::GpxUpload => {
                let bytes = self
                    .store
                    .get_blob(&stored::upload_key(trip.id))
                    .await
                    .map_err(|e| RouteFailure::Transient(e.to_string()))?
                    .ok_or_else(|| RouteFailure::Terminal("the uploaded file is missing".into()))?;
                parse_gpx(&bytes).map_err(|e| {
                    RouteFailure::Terminal(e.for_rider(etappe_route::RouteOrigin::File))
                })
            }
            SourceType::GpxLink => parse_gpx_bytes(&self.fetch(url).await?),
            SourceType::StravaRoute => {
                let id = last_segment(url);
                let export = format!("https://www.strava.com/routes/{id}/export_gpx");
                let export = self.source_origins.rebase(RouteService::Strava, &export);
                parse_gpx_bytes(&self.fetch(&export).await?)
            }
            SourceType::RideWithGps => {
                let id = last_segment(url);
                let json = format!("https://ridewithgps.com/routes/{id}.json");
                let json = self.source_origins.rebase(RouteService::RideWithGps, &json);
                let bytes = self.fetch(&json).await?;
                parse_ridewithgps_json(&bytes)
                    .map_err(|e| RouteFailure::Terminal(describe_route_error(&e)))
            }
            SourceType::KomootTour => {
                let page = self.source_origins.rebase(RouteService::Komoot, url);
                let html = String::from_utf8_lossy(&self.fetch(&page).await?).into_owned();
                parse_komoot_tour_html(&html)
                    .map_err(|e| RouteFailure::Terminal(describe_route_error(&e)))
            }
            SourceType::KomootCollection => self.fetch_komoot_collection(url).await,
            // Routed by `route_plan`, never fetched.
            SourceType::Plan => Err(RouteFailure::Terminal(
                "a planned trip is routed, not fetched".into(),
            )),
        }
    }

    /// A Komoot collection: its page, then each of its tours, within a budget of tours and
    /// bytes (a collection is a caller's link; it must not make the worker fetch without end).
    pub(super) async fn fetch_komoot_collection(
        &self,
        url: &str,
    ) -> Result<ParsedRoute, RouteFailure> {
        let page = self.source_origins.rebase(RouteService::Komoot, url);
        let collection = self.fetch(&page).await?;
        let mut budget = CollectionBudget::default();
        budget.spend(collection.len())?;
        let html = String::from_utf8_lossy(&collection).into_owned();
        let ids = komoot_collection_tour_ids(&html)
            .map_err(|e| RouteFailure::Terminal(describe_route_error(&e)))?;
        budget.check_tour_count(ids.len())?;
        let mut tracks = Vec::new();
        let mut name = None;
        for id in ids {
            let tour = format!("https://www.komoot.com/tour/{id}");
            let tour = self.source_origins.rebase(RouteService::Komoot, &tour);
            let bytes = self.fetch(&tour).await?;
            budget.spend(bytes.len())?;
            let page = String::from_utf8_lossy(&bytes).into_owned();
            let tour = parse_komoot_tour_html(&page)
                .map_err(|e| RouteFailure::Terminal(describe_route_error(&e)))?;
            name = name.or(tour.name);
            tracks.extend(tour.tracks);
        }
        Ok(ParsedRoute {
            name,
            tracks,
            ..ParsedRoute::default()
        })
    }

    pub(super) async fn fetch(&self, url: &str) -> Result<Vec<u8>, RouteFailure> {
        self.fetcher.get(url).await.map_err(|e| match e {
            FetchError::Transient(why) => RouteFailure::Transient(why),
            FetchError::Status(404) => {
                RouteFailure::Terminal("the route was not found at its link (404)".into())
            }
            FetchError::Status(401 | 403) => RouteFailure::Terminal(
                "the route is private: its link answers 401/403; make it public or upload the GPX"
                    .into(),
            ),
            other => RouteFailure::Terminal(other.to_string()),
        })
    }
}

pub(crate) enum RouteFailure {
    Transient(String),
    Terminal(String),
}

/// The most tours one Komoot collection may bring (a long trip has a few dozen stages).
pub const MAX_COLLECTION_TOURS: usize = 100;
/// The most bytes a Komoot collection may bring, its page and all its tours together.
pub const MAX_COLLECTION_BYTES: usize = 64 * 1024 * 1024;

/// What a Komoot collection has fetched so far, against its caps.
#[derive(Debug, Default)]
pub(super) struct CollectionBudget {
    bytes: usize,
}

impl CollectionBudget {
    pub(super) fn check_tour_count(&self, tours: usize) -> Result<(), RouteFailure> {
        if tours > MAX_COLLECTION_TOURS {
            return Err(RouteFailure::Terminal(format!(
                "the Komoot collection lists {tours} tours; at most {MAX_COLLECTION_TOURS} are fetched: split it into smaller collections"
            )));
        }
        Ok(())
    }

    pub(super) fn spend(&mut self, bytes: usize) -> Result<(), RouteFailure> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > MAX_COLLECTION_BYTES {
            return Err(RouteFailure::Terminal(format!(
                "the Komoot collection's pages exceed {} MB together: split it into smaller collections",
                MAX_COLLECTION_BYTES / (1024 * 1024)
            )));
        }
        Ok(())
    }
}

/// A route error of a fetched link, in words for the rider.
fn describe_route_error(error: &etappe_route::RouteError) -> String {
    error.for_rider(etappe_route::RouteOrigin::Link)
}

fn last_segment(url: &str) -> String {
    url.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_owned()
}
