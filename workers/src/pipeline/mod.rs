//! What a worker does with a job: the route job (fetch, parse, pace, label, analyse) and the
//! analysis job. Results land as events through the store's one command path (`execute`,
//! the aggregate's `decide` inside), with ids derived from the job id, so a duplicate delivery
//! writes nothing and a result for a superseded generation is dropped rather than written.

use std::sync::Arc;

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::stage::Point;
use etappe_domain::trip::{TripCommand, TripError};
use etappe_store::{
    CommandMetadata, DecidedOn, EventIds, EventMetadata, ExecuteError, Store, StoreError,
};
use uuid::Uuid;

use crate::jobs::Job;
use crate::labels::Labeller;
use crate::progress::{ProgressState, ProgressStore, Reporter};
use etappe_infra::fetch::{Fetcher, SourceOrigins};

pub(crate) use self::heights::heights_known;

mod analysis;
mod heights;
mod nights;
mod osm;
mod plan;
mod route;
#[cfg(test)]
mod tests;
mod weather;

pub use self::analysis::analyse_trip;
pub use self::route::{MAX_COLLECTION_BYTES, MAX_COLLECTION_TOURS, describe_route_error};

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
            .execute(trip_id, DecidedOn::Current, &meta, |_| command())
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
