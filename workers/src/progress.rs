//! Live progress of jobs: `{jobId, seq, pct, step, message, state}` per job, kept per trip.
//! Progress is advisory: when its store is down the work still completes and its results
//! still land as events; `seq` makes it monotone for readers, who drop anything not newer.

pub mod memory;
pub mod redis;

use std::fmt;
use std::pin::Pin;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use etappe_domain::ids::TripId;
use futures::Stream;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Where a job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressState {
    Running,
    Succeeded,
    Failed,
    Dropped,
}

/// One progress report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub job_id: Uuid,
    pub trip_id: TripId,
    /// Grows by one with every report of the job.
    pub seq: u64,
    /// 0 to 100.
    pub pct: u8,
    /// A stable step name (`fetching`, `parsing`, `pacing`, `labelling`, `analysing`, `done`).
    pub step: String,
    pub message: String,
    pub state: ProgressState,
    pub at: DateTime<Utc>,
}

/// Failures of the progress store (logged, never fatal to a job).
#[derive(Debug, thiserror::Error)]
#[error("progress store: {0}")]
pub struct ProgressError(pub String);

/// A live stream of reports.
pub type ProgressStream = Pin<Box<dyn Stream<Item = Progress> + Send>>;

/// The port.
#[async_trait]
pub trait ProgressStore: Send + Sync + fmt::Debug {
    /// Records a report and pushes it to live subscribers of its trip.
    async fn publish(&self, progress: &Progress) -> Result<(), ProgressError>;
    /// The latest report of every recent job of a trip.
    async fn current(&self, trip_id: TripId) -> Result<Vec<Progress>, ProgressError>;
    /// Reports of a trip as they are published.
    async fn subscribe(&self, trip_id: TripId) -> Result<ProgressStream, ProgressError>;
}

/// The step of a notice that a trip's log grew (not a job's progress): live readers reload
/// the trip instead of polling for it. Its job id is the nil UUID.
pub const TRIP_CHANGED: &str = "trip_changed";

/// Tells live readers of `trip_id` that its log grew (advisory, like all progress).
pub async fn notify_changed(store: &dyn ProgressStore, trip_id: TripId) {
    let now = Utc::now();
    let notice = Progress {
        job_id: Uuid::nil(),
        trip_id,
        seq: now.timestamp_micros().max(0) as u64,
        pct: 100,
        step: TRIP_CHANGED.to_owned(),
        message: String::new(),
        state: ProgressState::Succeeded,
        at: now,
    };
    if let Err(error) = store.publish(&notice).await {
        tracing::debug!(%error, "change notice not published; readers fall back to polling");
    }
}

impl Progress {
    /// Whether this is a change notice rather than a job's report.
    pub fn is_change_notice(&self) -> bool {
        self.job_id.is_nil() && self.step == TRIP_CHANGED
    }
}

/// Hands out monotone reports for one job.
#[derive(Debug)]
pub struct Reporter<'a> {
    store: &'a dyn ProgressStore,
    job_id: Uuid,
    trip_id: TripId,
    seq: u64,
}

impl<'a> Reporter<'a> {
    /// A reporter for `job_id` on `trip_id`. `seq` starts from the clock so that a
    /// redelivered job's reports still sort after the first delivery's.
    pub fn new(store: &'a dyn ProgressStore, job_id: Uuid, trip_id: TripId) -> Self {
        let seq = Utc::now().timestamp_millis().max(0) as u64 * 1000;
        Self {
            store,
            job_id,
            trip_id,
            seq,
        }
    }

    /// Publishes a report; a progress store that is down is logged and otherwise ignored.
    pub async fn report(
        &mut self,
        pct: u8,
        step: &str,
        message: impl Into<String>,
        state: ProgressState,
    ) {
        self.seq += 1;
        let progress = Progress {
            job_id: self.job_id,
            trip_id: self.trip_id,
            seq: self.seq,
            pct: pct.min(100),
            step: step.to_owned(),
            message: message.into(),
            state,
            at: Utc::now(),
        };
        if let Err(error) = self.store.publish(&progress).await {
            tracing::warn!(%error, job_id = %self.job_id, "progress not recorded; the job goes on");
        }
    }
}
