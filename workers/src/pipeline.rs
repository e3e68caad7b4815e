//! What a worker does with a job: the route job (fetch, parse, pace, label, analyse) and the
//! analysis job. Results land as events through the store's one command path (`execute`,
//! the aggregate's `decide` inside), with ids derived from the job id, so a duplicate delivery
//! writes nothing and a result for a superseded generation is dropped rather than written.

use std::sync::Arc;

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::stage::Point;
use etappe_domain::trip::{TripCommand, TripError};
use etappe_events::{
    CommandMetadata, DecidedOn, EventIds, EventMetadata, ExecuteError, Store, StoreError,
};
use uuid::Uuid;

use crate::jobs::Job;
use crate::progress::{ProgressState, ProgressStore, Reporter};
use etappe_infra::fetch::{Fetcher, SourceOrigins};
use etappe_track::labels::Labeller;

pub(crate) use self::heights::heights_known;
#[cfg(test)]
pub(crate) use self::testing::{one_day_trip, pipeline_on_sqlite, point_at};

mod analysis;
mod heights;
mod nights;
mod osm;
mod plan;
#[cfg(test)]
mod redelivery;
mod route;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
mod weather;

pub use self::analysis::analyse_trip;
pub use self::route::{MAX_COLLECTION_BYTES, MAX_COLLECTION_TOURS};

/// What every job handler is asked about: the job, its trip and the generation it was
/// queued for, and the trace of the request that asked for it (its events carry it on).
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobScope<'a> {
    pub job_id: Uuid,
    pub trip_id: TripId,
    pub generation: u64,
    pub traceparent: Option<&'a str>,
}

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
    /// Where its appends' durations are counted.
    pub metrics: Arc<etappe_infra::metrics::Metrics>,
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
        let scope = JobScope {
            job_id: job.id(),
            trip_id: job.trip_id(),
            generation: job.generation(),
            traceparent,
        };
        let outcome = match job {
            Job::ComputeRoute { .. } => self.compute_route(scope, &mut reporter).await,
            Job::Analyse { categories, .. } => {
                self.analyse_again(scope, categories, &mut reporter).await
            }
            Job::ScanAccommodations {
                radius_km,
                stage_id,
                ..
            } => self.scan_accommodations(scope, *radius_km, *stage_id).await,
            Job::RerouteStage {
                stage_id, lat, lon, ..
            } => {
                let waypoint = Point {
                    lat: *lat,
                    lon: *lon,
                    ele: None,
                };
                self.reroute_stage(scope, *stage_id, waypoint).await
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

    /// Applies the command of a job's `step`: its events' ids are seeded by the job and the
    /// step, the same on every delivery of the job, so a redelivery writes nothing twice.
    pub(crate) async fn apply_step(
        &self,
        scope: JobScope<'_>,
        step: &str,
        command: impl Fn() -> TripCommand + Send + Sync,
    ) -> Result<Applied, JobError> {
        let seed = format!("{}:{step}", scope.job_id);
        self.apply(scope.trip_id, &seed, scope.traceparent, command)
            .await
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
        let started = std::time::Instant::now();
        let executed = self
            .store
            .execute(trip_id, DecidedOn::Current, &meta, |_| command())
            .await;
        self.metrics
            .store_append
            .observe(started.elapsed().as_secs_f64());
        match executed {
            Ok(executed) => Ok(Applied::Done(executed.view.map(Box::new))),
            Err(ExecuteError::Refused(refused)) => Ok(Applied::Refused(refused)),
            Err(ExecuteError::Contended) => Err(JobError::Transient(
                "the trip kept changing while the result was written".into(),
            )),
            Err(ExecuteError::Store(error)) => Err(error.into()),
            // A worker's result passes no gate; were one to stop it, the job is tried again.
            Err(stopped @ ExecuteError::Stopped(_)) => {
                Err(JobError::Transient(stopped.to_string()))
            }
        }
    }
}

/// `value` rounded to `decimals` places (what the views show).
pub(super) fn round(value: f64, decimals: i32) -> f64 {
    let factor = 10f64.powi(decimals);
    (value * factor).round() / factor
}

/// An alert of the analysis as the trip stores it: the one mapping the analysis, OSM and
/// weather steps share.
fn domain_alert(a: etappe_analysis::Alert) -> etappe_domain::trip::stage::Alert {
    etappe_domain::trip::stage::Alert {
        code: a.code.to_owned(),
        severity: a.severity.as_str().to_owned(),
        group: a.group.to_owned(),
        message: a.message,
        parameters: a.parameters,
        lat: a.lat,
        lon: a.lon,
    }
}
