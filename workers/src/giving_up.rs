//! Giving a job up visibly. When the fleet stops trying (retries exhausted, the broker's
//! delivery limit about to be met), the trip records it as an event through the aggregate's
//! `decide`, so the work ends as `failed` with a reason a person can act on, and an agent's
//! poll ends instead of running forever.

use etappe_domain::trip::{GivenUpWork, TripCommand};

use crate::jobs::Job;
use crate::pipeline::{Applied, JobError, Pipeline};

/// Why a job ended up given up, in words for the rider.
#[derive(Debug, Clone)]
pub enum GiveUpCause {
    /// Every try failed with a transient error; the last one is named.
    AttemptsExhausted { attempts: u32, last_error: String },
    /// The workers holding it kept stopping (a crash, a kill) before they finished.
    WorkersStopped { deliveries: u32 },
}

impl Pipeline {
    /// Records on the trip that `job` was given up. Idempotent: the event id is derived from
    /// the job id, and `decide` writes nothing when the work has ended meanwhile.
    pub async fn give_up(&self, job: &Job, cause: &GiveUpCause) -> Result<(), JobError> {
        let trip_id = job.trip_id();
        let (generation, work, what) = match job {
            Job::ComputeRoute { generation, .. } => (
                *generation,
                GivenUpWork::Route,
                "the route could not be fetched",
            ),
            Job::Analyse {
                generation,
                categories,
                ..
            } => (
                *generation,
                GivenUpWork::Analysis(categories.clone()),
                "the analysis could not be completed",
            ),
            Job::ScanAccommodations { generation, .. } => (
                *generation,
                GivenUpWork::Accommodations,
                "the accommodation scan could not be completed",
            ),
            Job::RerouteStage {
                generation,
                stage_id,
                ..
            } => (
                *generation,
                GivenUpWork::Detour {
                    stage_id: *stage_id,
                },
                "the detour could not be computed",
            ),
        };
        let why = match cause {
            GiveUpCause::AttemptsExhausted {
                attempts,
                last_error,
            } => format!("{what} after {attempts} attempts: {}", plain(last_error)),
            GiveUpCause::WorkersStopped { deliveries } => format!(
                "{what}: the workers holding it stopped {deliveries} times before finishing"
            ),
        };
        let retry = match job {
            Job::ComputeRoute { .. } | Job::Analyse { .. } => format!(
                "retry with POST /trips/{trip_id}/analyze (MCP: analyze_trip) or recreate the trip"
            ),
            Job::ScanAccommodations { .. } => format!(
                "retry with POST /trips/{trip_id}/accommodations/scan (MCP: get_stage shows the day)"
            ),
            Job::RerouteStage { .. } => {
                "ask for the detour again (POST …/poi-waypoint, MCP: add_waypoint)".to_owned()
            }
        };
        let reason = format!("{why}; {retry}");
        let seed = format!("{}:given-up", job.id());
        let applied = self
            .apply(trip_id, &seed, None, || TripCommand::GiveUp {
                generation,
                work: work.clone(),
                reason: reason.clone(),
            })
            .await?;
        if let Applied::Refused(refused) = applied {
            tracing::info!(%refused, "a given-up job had nothing left to record");
        }
        Ok(())
    }
}

/// An error text as a person reads it: without the internal "transient: " prefix.
fn plain(error: &str) -> &str {
    error.strip_prefix("transient: ").unwrap_or(error)
}
