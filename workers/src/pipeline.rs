//! What a worker does with a job: the route job (fetch, parse, pace, label, analyse) and the
//! analysis job. Results land as events through the store's one command path (`execute`,
//! the aggregate's `decide` inside), with ids derived from the job id, so a duplicate delivery
//! writes nothing and a result for a superseded generation is dropped rather than written.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Days;
use etappe_analysis::{
    AnalysisSettings, DayFacts, StageInput, StagePoint, TrackGap, analyse_with_facts,
};
use etappe_domain::ids::{TripId, derived_id};
use etappe_domain::projection::TripView;
use etappe_domain::trip::source::SourceType;
use etappe_domain::trip::stage::{Alert, Point, RouteSummary, Stage, StageAlerts, Unavailable};
use etappe_domain::trip::{Category, Trip, TripCommand, TripError};
use etappe_route::geometry::{cumulative_distances_with_breaks, day_climb};
use etappe_route::gpx::{ParsedRoute, TrackPoint, parse_gpx};
use etappe_route::pacing::{PacingSettings, one_day_per_track, pace_route};
use etappe_route::pieces::join_pieces;
use etappe_route::sources::{
    komoot_collection_tour_ids, parse_komoot_tour_html, parse_ridewithgps_json,
};
use etappe_store::{
    Basis, CommandMetadata, EventIds, EventMetadata, ExecuteError, Store, StoreError,
};
use uuid::Uuid;

use crate::fetch::origins::RouteService;
use crate::fetch::{FetchError, Fetcher, SourceOrigins};
use crate::jobs::Job;
use crate::labels::{Labeller, utc_offset_minutes};
use crate::progress::{ProgressState, ProgressStore, Reporter};
use crate::track;

/// How a job ended, when it ended without needing a retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The results were written.
    Completed,
    /// Nothing to do: the trip is gone, the generation superseded, or the work already done.
    Dropped(String),
    /// A terminal failure, recorded on the trip for its owner to read.
    Failed(String),
}

/// Why a job must be tried again.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("transient: {0}")]
    Transient(String),
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// Why accommodations are unavailable on the embedded default.
pub(crate) const NO_ACCOMMODATION_PROVIDER: &str =
    "no accommodation provider is configured (Overpass); nothing is invented";

/// The categories no embedded default can compute, and why.
const NEEDS_A_PROVIDER: [(Category, &str); 3] = [
    (
        Category::PointsOfInterest,
        "no points-of-interest provider is configured (Overpass); nothing is invented",
    ),
    (Category::Accommodations, NO_ACCOMMODATION_PROVIDER),
    (
        Category::Weather,
        "no weather provider is configured (Open-Meteo); nothing is invented",
    ),
];

/// Runs jobs.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub store: Arc<dyn Store>,
    pub fetcher: Fetcher,
    /// Where Komoot, Strava and RideWithGPS pages come from (their real origins unless a
    /// test points them at a local server).
    pub source_origins: SourceOrigins,
    pub progress: Arc<dyn ProgressStore>,
    pub labeller: Arc<dyn Labeller>,
    pub upstreams: crate::upstreams::Upstreams,
}

/// What applying a worker command did: the trip after it (as the append projected it, or as
/// it was when there was nothing to write; `None` once deleted), or the domain's refusal.
pub(crate) enum Applied {
    Done(Option<Box<TripView>>),
    Refused(TripError),
}

impl Pipeline {
    /// Runs one job.
    pub async fn run(&self, job: &Job, traceparent: Option<&str>) -> Result<Outcome, JobError> {
        let mut reporter = Reporter::new(self.progress.as_ref(), job.id(), job.trip_id());
        let outcome = match job {
            Job::ComputeRoute {
                job_id,
                trip_id,
                generation,
            } => {
                self.compute_route(*job_id, *trip_id, *generation, traceparent, &mut reporter)
                    .await
            }
            Job::Analyse {
                job_id,
                trip_id,
                generation,
                categories,
            } => {
                self.analyse_again(
                    *job_id,
                    *trip_id,
                    *generation,
                    categories,
                    traceparent,
                    &mut reporter,
                )
                .await
            }
            Job::ScanAccommodations {
                job_id,
                trip_id,
                generation,
                radius_km,
                stage_id,
            } => {
                self.scan_accommodations(
                    *job_id,
                    *trip_id,
                    *generation,
                    *radius_km,
                    *stage_id,
                    traceparent,
                )
                .await
            }
            Job::RerouteStage {
                job_id,
                trip_id,
                generation,
                stage_id,
                lat,
                lon,
            } => {
                self.reroute_stage(
                    *job_id,
                    *trip_id,
                    *generation,
                    *stage_id,
                    Point {
                        lat: *lat,
                        lon: *lon,
                        ele: None,
                    },
                    traceparent,
                )
                .await
            }
        };
        match &outcome {
            Ok(Outcome::Completed) => {
                reporter
                    .report(100, "done", "done", ProgressState::Succeeded)
                    .await;
            }
            Ok(Outcome::Dropped(why)) => {
                reporter
                    .report(100, "dropped", why.clone(), ProgressState::Dropped)
                    .await;
            }
            Ok(Outcome::Failed(why)) => {
                reporter
                    .report(100, "failed", why.clone(), ProgressState::Failed)
                    .await;
            }
            Err(e) => {
                reporter
                    .report(0, "retrying", e.to_string(), ProgressState::Running)
                    .await;
            }
        }
        outcome
    }

    pub(crate) async fn view(&self, trip_id: TripId) -> Result<Option<TripView>, JobError> {
        Ok(self.store.trip_view(trip_id).await?)
    }

    /// Decides `command` on the current state and appends its events with ids derived from
    /// `seed`, through the store's one command path (which decides again when another writer
    /// got to the stream first).
    pub(crate) async fn apply(
        &self,
        trip_id: TripId,
        seed: &str,
        traceparent: Option<&str>,
        command: impl Fn() -> TripCommand + Send + Sync,
    ) -> Result<Applied, JobError> {
        let meta = CommandMetadata {
            metadata: EventMetadata {
                actor: Some("worker".into()),
                causation_id: Uuid::parse_str(seed.split(':').next().unwrap_or_default()).ok(),
                traceparent: traceparent.map(str::to_owned),
                ..Default::default()
            },
            ids: EventIds::Derived(seed.to_owned()),
        };
        match self
            .store
            .execute(trip_id, Basis::Current, &meta, |_| command())
            .await
        {
            Ok(executed) => Ok(Applied::Done(executed.view.map(Box::new))),
            Err(ExecuteError::Refused(refused)) => Ok(Applied::Refused(refused)),
            Err(ExecuteError::Contended) => Err(JobError::Transient(
                "the trip kept changing while the result was written".into(),
            )),
            Err(ExecuteError::Store(error)) => Err(error.into()),
        }
    }

    async fn compute_route(
        &self,
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        traceparent: Option<&str>,
        reporter: &mut Reporter<'_>,
    ) -> Result<Outcome, JobError> {
        let view = match self
            .apply(trip_id, &format!("{job_id}:start"), traceparent, || {
                TripCommand::StartRoute { generation, job_id }
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
        if trip.generation != generation {
            return Ok(Outcome::Dropped(format!(
                "generation {generation} was superseded"
            )));
        }
        if trip.route.is_some() {
            return Ok(Outcome::Dropped(
                "the route of this generation is already computed".into(),
            ));
        }

        reporter
            .report(10, "fetching", "fetching the route", ProgressState::Running)
            .await;
        let parsed = match self.fetch_route(&trip).await {
            Ok(parsed) => parsed,
            Err(RouteFailure::Transient(why)) => return Err(JobError::Transient(why)),
            Err(RouteFailure::Terminal(reason)) => {
                let reason_for_trip = reason.clone();
                self.apply(trip_id, &format!("{job_id}:failed"), traceparent, || {
                    TripCommand::FailRoute {
                        generation,
                        reason: reason_for_trip.clone(),
                    }
                })
                .await?;
                return Ok(Outcome::Failed(reason));
            }
        };

        reporter
            .report(
                50,
                "pacing",
                "cutting the route into days",
                ProgressState::Running,
            )
            .await;
        let (stored, splits) = if trip.source.source_type == SourceType::KomootCollection {
            let paced = one_day_per_track(&parsed.tracks);
            let stored = track::StoredTrack {
                points: paced.points,
                gaps: Vec::new(),
                waypoints: parsed.waypoints.clone(),
            };
            (stored, paced.days)
        } else {
            let joined = match join_pieces(&parsed) {
                Ok(joined) => joined,
                Err(refused) => {
                    let reason = describe_route_error(&refused);
                    self.apply(trip_id, &format!("{job_id}:failed"), traceparent, || {
                        TripCommand::FailRoute {
                            generation,
                            reason: reason.clone(),
                        }
                    })
                    .await?;
                    return Ok(Outcome::Failed(reason));
                }
            };
            let s = &trip.settings;
            let settings = PacingSettings {
                max_distance_per_day_km: s.max_distance_per_day,
                fatigue_factor: s.fatigue_factor,
                elevation_penalty: s.elevation_penalty,
                days: s.dated_day_count().and_then(|d| u32::try_from(d).ok()),
            };
            let (cut, splits) = pace_route(&joined, &settings);
            let mut stored = track::StoredTrack::from(cut);
            stored.waypoints = parsed.waypoints.clone();
            (stored, splits)
        };
        let points = &stored.points;
        if splits.is_empty() || points.len() < 2 {
            let reason = "the route has fewer than two usable points".to_owned();
            self.apply(trip_id, &format!("{job_id}:failed"), traceparent, || {
                TripCommand::FailRoute {
                    generation,
                    reason: reason.clone(),
                }
            })
            .await?;
            return Ok(Outcome::Failed(reason));
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
                let start = points.get(split.start_index)?;
                let end = points.get(split.end_index)?;
                let start_place = self.labeller.label(start.lat, start.lon);
                let end_place = self.labeller.label(end.lat, end.lon);
                Some(Stage {
                    id: derived_id(&format!("{job_id}:stage:{i}")),
                    day_number: i as u32 + 1,
                    distance_km: round(split.distance_m / 1000.0, 2),
                    ascent_m: split.ascent_m.round(),
                    descent_m: split.descent_m.round(),
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
                    label: None,
                    is_rest_day: false,
                    first_point: split.start_index,
                    last_point: split.end_index,
                    alerts: Vec::new(),
                    accommodations: Vec::new(),
                    accommodation: None,
                    detour: None,
                    detour_failure: None,
                })
            })
            .collect();
        // Breaks between the source's pieces count no distance and no climb (etappe_route::pieces).
        let breaks = stored.breaks();
        let total_m = cumulative_distances_with_breaks(points, &breaks)
            .last()
            .copied()
            .unwrap_or(0.0);
        let (ascent, descent) = day_climb(points, &breaks);
        let track_key = track::key(trip_id, generation);
        self.store
            .put_blob(&track_key, &track::encode_stored(&stored))
            .await?;
        let route = RouteSummary {
            title: parsed.name.clone(),
            total_distance_km: round(total_m / 1000.0, 2),
            ascent_m: ascent.round(),
            descent_m: descent.round(),
            point_count: points.len(),
            track_key,
        };
        let view = match self
            .apply(trip_id, &format!("{job_id}:route"), traceparent, || {
                TripCommand::RecordRoute {
                    generation,
                    route: route.clone(),
                    stages: stages.clone(),
                }
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
        self.record_analysis(job_id, &view.trip, &stored, &Category::ALL, traceparent)
            .await
    }

    async fn analyse_again(
        &self,
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        categories: &[Category],
        traceparent: Option<&str>,
        reporter: &mut Reporter<'_>,
    ) -> Result<Outcome, JobError> {
        let wanted = categories.to_vec();
        let view = match self
            .apply(trip_id, &format!("{job_id}:start"), traceparent, || {
                TripCommand::StartAnalysis {
                    generation,
                    categories: wanted.clone(),
                }
            })
            .await?
        {
            Applied::Refused(refused) => return Ok(Outcome::Dropped(refused.to_string())),
            Applied::Done(view) => view,
        };
        let Some(view) = view else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        let Some(route) = view.trip.route.clone() else {
            return Ok(Outcome::Dropped("the trip has no days to analyse".into()));
        };
        reporter
            .report(
                30,
                "analysing",
                "analysing each day",
                ProgressState::Running,
            )
            .await;
        let stored = match self.store.get_blob(&route.track_key).await? {
            Some(bytes) => track::decode_stored(&bytes).unwrap_or_default(),
            None => track::StoredTrack::default(),
        };
        self.record_analysis(job_id, &view.trip, &stored, categories, traceparent)
            .await
    }

    async fn record_analysis(
        &self,
        job_id: Uuid,
        trip: &Trip,
        stored: &track::StoredTrack,
        categories: &[Category],
        traceparent: Option<&str>,
    ) -> Result<Outcome, JobError> {
        let mut detoured = HashMap::new();
        for stage in &trip.stages {
            if let Some(detour) = &stage.detour
                && let Some(bytes) = self.store.get_blob(&detour.track_key).await?
                && let Some(own) = track::decode(&bytes)
            {
                detoured.insert(stage.id, own);
            }
        }
        let alerts = analyse_trip(trip, stored, &detoured);
        let done: Vec<Category> = [Category::TerrainSecurity, Category::Context]
            .into_iter()
            .filter(|c| categories.contains(c))
            .collect();
        let unavailable: Vec<Unavailable> = NEEDS_A_PROVIDER
            .iter()
            .filter(|(c, _)| categories.contains(c))
            .map(|(category, reason)| Unavailable {
                category: *category,
                reason: (*reason).to_owned(),
            })
            .collect();
        let generation = trip.generation;
        match self
            .apply(trip.id, &format!("{job_id}:analysis"), traceparent, || {
                TripCommand::RecordAnalysis {
                    generation,
                    stages: alerts.clone(),
                    done: done.clone(),
                    unavailable: unavailable.clone(),
                }
            })
            .await?
        {
            Applied::Refused(refused) => Ok(Outcome::Dropped(refused.to_string())),
            Applied::Done(_) => Ok(Outcome::Completed),
        }
    }

    async fn fetch_route(&self, trip: &Trip) -> Result<ParsedRoute, RouteFailure> {
        let url = trip.source.url.as_str();
        let parse_gpx_bytes = |bytes: &[u8]| {
            parse_gpx(bytes).map_err(|e| RouteFailure::Terminal(describe_route_error(&e)))
        };
        match trip.source.source_type {
            SourceType::GpxUpload => {
                let bytes = self
                    .store
                    .get_blob(&track::upload_key(trip.id))
                    .await
                    .map_err(|e| RouteFailure::Transient(e.to_string()))?
                    .ok_or_else(|| RouteFailure::Terminal("the uploaded file is missing".into()))?;
                parse_gpx_bytes(&bytes)
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
        }
    }

    /// A Komoot collection: its page, then each of its tours, within a budget of tours and
    /// bytes (a collection is a caller's link; it must not make the worker fetch without end).
    async fn fetch_komoot_collection(&self, url: &str) -> Result<ParsedRoute, RouteFailure> {
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

    async fn fetch(&self, url: &str) -> Result<Vec<u8>, RouteFailure> {
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

enum RouteFailure {
    Transient(String),
    Terminal(String),
}

/// The most tours one Komoot collection may bring (a long trip has a few dozen stages).
pub const MAX_COLLECTION_TOURS: usize = 100;
/// The most bytes a Komoot collection may bring, its page and all its tours together.
pub const MAX_COLLECTION_BYTES: usize = 64 * 1024 * 1024;

/// What a Komoot collection has fetched so far, against its caps.
#[derive(Debug, Default)]
struct CollectionBudget {
    bytes: usize,
}

impl CollectionBudget {
    fn check_tour_count(&self, tours: usize) -> Result<(), RouteFailure> {
        if tours > MAX_COLLECTION_TOURS {
            return Err(RouteFailure::Terminal(format!(
                "the Komoot collection lists {tours} tours; at most {MAX_COLLECTION_TOURS} are fetched: split it into smaller collections"
            )));
        }
        Ok(())
    }

    fn spend(&mut self, bytes: usize) -> Result<(), RouteFailure> {
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

/// A route error in words for the rider (also used to refuse an upload at the door).
pub fn describe_route_error(error: &etappe_route::RouteError) -> String {
    use etappe_route::RouteError as E;
    match error {
        E::NotGpx => "the link does not lead to a GPX file".into(),
        E::Malformed { position } => {
            format!("the GPX file is truncated or malformed (near byte {position})")
        }
        E::Empty => "the route is empty: it has no track point".into(),
        E::InvalidCoordinate { rejected } => {
            format!("none of the route's {rejected} points has valid coordinates")
        }
        E::DoctypeRefused => "the GPX file declares a DOCTYPE, which is refused".into(),
        E::NoDistance { points } => format!(
            "the route has no length: its {points} points are all at one place; \
             upload a file with a track or route that moves"
        ),
        E::UnexpectedPayload(what) => {
            format!("the route service answered something unexpected: {what}")
        }
    }
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

fn round(value: f64, decimals: i32) -> f64 {
    let factor = 10f64.powi(decimals);
    (value * factor).round() / factor
}

/// Runs the alert rules over the trip's days (pure: the trip and its track in, alerts out).
/// A day re-routed through a waypoint is read off its own geometry (`detoured`, by stage
/// id), not off the slice of the track it replaced.
pub fn analyse_trip(
    trip: &Trip,
    stored: &track::StoredTrack,
    detoured: &HashMap<Uuid, Vec<TrackPoint>>,
) -> Vec<StageAlerts> {
    let points = stored.points.as_slice();
    let route_cumulative = cumulative_distances_with_breaks(points, &stored.breaks());
    let settings = AnalysisSettings {
        departure_hour: trip.settings.departure_hour,
        average_speed_kmh: trip.settings.average_speed,
        ebike_mode: trip.settings.ebike_mode,
    };
    let slices: Vec<Vec<StagePoint>> = trip
        .stages
        .iter()
        .map(|stage| {
            let (slice, breaks) = match detoured.get(&stage.id) {
                Some(own) => (own.as_slice(), Vec::new()),
                None => (
                    points
                        .get(
                            stage.first_point
                                ..=stage.last_point.min(points.len().saturating_sub(1)),
                        )
                        .unwrap_or(&[]),
                    stored.breaks_within(stage.first_point, stage.last_point),
                ),
            };
            let distances = cumulative_distances_with_breaks(slice, &breaks);
            slice
                .iter()
                .zip(distances)
                .map(|(p, d)| StagePoint {
                    lat: p.lat,
                    lon: p.lon,
                    ele: p.ele,
                    distance_m: d,
                })
                .collect()
        })
        .collect();
    let inputs: Vec<StageInput<'_>> = trip
        .stages
        .iter()
        .zip(&slices)
        .enumerate()
        .map(|(i, (stage, slice))| {
            let date = trip
                .settings
                .start_date
                .and_then(|d| d.checked_add_days(Days::new(i as u64)));
            let offset = date.and_then(|d| {
                stage
                    .end_country
                    .as_deref()
                    .and_then(|c| utc_offset_minutes(c, d))
            });
            StageInput {
                day_number: stage.day_number,
                is_rest_day: stage.is_rest_day,
                distance_km: stage.distance_km,
                ascent_m: stage.ascent_m,
                points: slice,
                start: (stage.start.lat, stage.start.lon),
                end: (stage.end.lat, stage.end.lon),
                date,
                start_country: stage.start_country.clone(),
                end_country: stage.end_country.clone(),
                utc_offset_minutes: offset,
            }
        })
        .collect();
    let gaps: Vec<Vec<TrackGap>> = trip
        .stages
        .iter()
        .map(|stage| {
            if detoured.contains_key(&stage.id) {
                return Vec::new();
            }
            stored
                .gaps_within(stage.first_point, stage.last_point)
                .filter_map(|gap| {
                    let before = gap.index.checked_sub(1)?;
                    let from = points.get(before)?;
                    Some(TrackGap {
                        length_m: gap.length_m,
                        at_km: route_cumulative.get(before).copied()? / 1000.0,
                        bridged: gap.bridged,
                        lat: from.lat,
                        lon: from.lon,
                    })
                })
                .collect()
        })
        .collect();
    let cap = Some(trip.settings.max_distance_per_day);
    let facts: Vec<DayFacts<'_>> = gaps
        .iter()
        .map(|gaps| DayFacts {
            gaps,
            max_distance_per_day_km: cap,
        })
        .collect();
    analyse_with_facts(&inputs, &facts, &settings)
        .into_iter()
        .zip(&trip.stages)
        .map(|(alerts, stage)| StageAlerts {
            stage_id: stage.id,
            alerts: alerts
                .into_iter()
                .map(|a| Alert {
                    code: a.code.to_owned(),
                    severity: a.severity.as_str().to_owned(),
                    group: a.group.to_owned(),
                    message: a.message,
                    parameters: a.parameters,
                    lat: a.lat,
                    lon: a.lon,
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use etappe_domain::ids::UserId;
    use etappe_domain::trip::settings::TripSettings;
    use etappe_domain::trip::source::SourceUrl;
    use etappe_domain::trip::stage::Detour;
    use etappe_domain::trip::{TripEvent, fold};

    use super::*;

    fn terminal_reason(result: Result<(), RouteFailure>) -> Option<String> {
        match result {
            Err(RouteFailure::Terminal(reason)) => Some(reason),
            _ => None,
        }
    }

    #[test]
    fn a_komoot_collection_is_capped_in_tours_and_bytes_and_says_so() {
        let mut budget = CollectionBudget::default();
        assert!(budget.check_tour_count(MAX_COLLECTION_TOURS).is_ok());
        let reason = terminal_reason(budget.check_tour_count(MAX_COLLECTION_TOURS + 1))
            .expect("too many tours");
        assert!(
            reason.contains("101 tours") && reason.contains("at most 100"),
            "{reason}"
        );

        assert!(budget.spend(MAX_COLLECTION_BYTES - 1).is_ok());
        assert!(budget.spend(1).is_ok());
        let reason = terminal_reason(budget.spend(1)).expect("too many bytes");
        assert!(reason.contains("64 MB"), "{reason}");
    }

    /// `km` kilometres due north from 45°N 6°E, a point every 100 m, rising by `grade`.
    fn line(km: f64, grade: f64, lon: f64) -> Vec<TrackPoint> {
        let steps = (km * 10.0) as usize;
        (0..=steps)
            .map(|i| TrackPoint {
                lat: 45.0 + i as f64 * 0.1 / 111.195,
                lon,
                ele: Some(200.0 + i as f64 * 100.0 * grade),
            })
            .collect()
    }

    fn one_day_trip(points: &[TrackPoint]) -> Trip {
        let end = points.len() - 1;
        let at = |p: &TrackPoint| Point {
            lat: p.lat,
            lon: p.lon,
            ele: p.ele,
        };
        let stage = Stage {
            id: Uuid::from_u128(7),
            day_number: 1,
            distance_km: 10.0,
            ascent_m: 0.0,
            descent_m: 0.0,
            start: at(&points[0]),
            end: at(&points[end]),
            start_label: None,
            end_label: None,
            start_country: None,
            end_country: None,
            label: None,
            is_rest_day: false,
            first_point: 0,
            last_point: end,
            alerts: Vec::new(),
            accommodations: Vec::new(),
            accommodation: None,
            detour: None,
            detour_failure: None,
        };
        fold(&[
            TripEvent::TripCreated {
                trip_id: TripId(Uuid::from_u128(1)),
                owner_id: UserId(Uuid::from_u128(2)),
                source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
                settings: TripSettings::default(),
                version: 1,
            },
            TripEvent::RouteRequested { generation: 1 },
            TripEvent::RouteComputed {
                generation: 1,
                route: RouteSummary {
                    title: None,
                    total_distance_km: 10.0,
                    ascent_m: 0.0,
                    descent_m: 0.0,
                    point_count: points.len(),
                    track_key: "track".into(),
                },
                stages: vec![stage],
                version: 2,
            },
        ])
        .expect("a trip")
    }

    fn codes(alerts: &[StageAlerts]) -> Vec<String> {
        alerts
            .iter()
            .flat_map(|s| s.alerts.iter().map(|a| a.code.clone()))
            .collect()
    }

    #[test]
    fn a_detoured_day_is_read_off_its_own_roads() {
        let flat = line(10.0, 0.0, 6.0);
        let mut trip = one_day_trip(&flat);
        let stored = track::StoredTrack {
            points: flat,
            ..Default::default()
        };
        let plain = analyse_trip(&trip, &stored, &HashMap::new());
        assert!(
            !codes(&plain).contains(&"steep_gradient".to_owned()),
            "{plain:?}"
        );

        // The detour climbs at 10 % for 3 km: the day's alerts must say so.
        let climb = line(3.0, 0.10, 6.01);
        trip.stages[0].detour = Some(Detour {
            waypoint: Point {
                lat: 45.01,
                lon: 6.01,
                ele: None,
            },
            track_key: "detour".into(),
            original_distance_km: 10.0,
            estimated: false,
            router: "valhalla".into(),
        });
        let detoured = HashMap::from([(trip.stages[0].id, climb)]);
        let alerts = analyse_trip(&trip, &stored, &detoured);
        assert!(
            codes(&alerts).contains(&"steep_gradient".to_owned()),
            "{alerts:?}"
        );
    }

    #[test]
    fn a_break_in_the_stored_track_is_a_critical_alert_on_its_day() {
        // Two 5 km pieces, the second 3 km east of the first's end.
        let mut points = line(5.0, 0.0, 6.0);
        let index = points.len();
        points.extend(line(5.0, 0.0, 6.04));
        let trip = one_day_trip(&points);
        let stored = track::StoredTrack {
            gaps: vec![etappe_route::pieces::Gap {
                index,
                length_m: 4_000.0,
                bridged: false,
            }],
            points,
            waypoints: Vec::new(),
        };
        let alerts = analyse_trip(&trip, &stored, &HashMap::new());
        let gap = alerts[0]
            .alerts
            .iter()
            .find(|a| a.code == "continuity_gap_critical")
            .expect("the break is named");
        assert!(gap.message.contains("4.0 km"), "{}", gap.message);
        assert!(gap.message.contains("km 5.0"), "{}", gap.message);
        // Without the gap on record, the day has no such alert.
        let plain = track::StoredTrack {
            gaps: Vec::new(),
            ..stored
        };
        assert!(
            !codes(&analyse_trip(&trip, &plain, &HashMap::new()))
                .contains(&"continuity_gap_critical".to_owned())
        );
    }

    #[test]
    fn a_day_over_the_cap_is_warned() {
        let flat = line(10.0, 0.0, 6.0);
        let mut trip = one_day_trip(&flat);
        trip.settings.max_distance_per_day = 8.0;
        let stored = track::StoredTrack {
            points: flat,
            ..Default::default()
        };
        let alerts = analyse_trip(&trip, &stored, &HashMap::new());
        assert!(
            codes(&alerts).contains(&"daily_distance_over_cap".to_owned()),
            "{alerts:?}"
        );
    }
}
