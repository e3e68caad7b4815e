//! The dispatcher: a subscription on the event log that publishes every job-requesting event
//! as a job (job id = event id) and moves its checkpoint only once the queue holds the job.
//! The event table is the outbox: a crash anywhere re-publishes, never loses. One dispatcher
//! runs at a time across API replicas (a lease that expires unless renewed, so a hung leader
//! hands over within `LEASE_TTL`). While leading it also sweeps: work nobody finished is asked
//! again.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use etappe_events::{Cursor, Store, StoreError};
use tokio::sync::watch;
use uuid::Uuid;

use crate::jobs::{Job, JobMessage};
use crate::queue::{JobQueue, QueueError};
use etappe_infra::metrics::Metrics;

/// The subscription's name (its checkpoint row).
pub const SUBSCRIPTION: &str = "dispatcher";
const BATCH: u32 = 200;
const IDLE_POLL: Duration = Duration::from_millis(50);

/// Why a dispatch step failed (it is retried after a pause).
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// The dispatcher.
#[derive(Debug)]
pub struct Dispatcher {
    store: Arc<dyn Store>,
    queue: Arc<dyn JobQueue>,
    metrics: Arc<Metrics>,
    /// Where reading continues (ahead of the saved checkpoint while jobs of a non-durable
    /// queue are unsettled).
    read: Option<Cursor>,
    /// Jobs published to a non-durable queue and not yet settled, each with the cursor the
    /// checkpoint may advance to while it is the oldest unsettled one.
    outstanding: VecDeque<(Cursor, Uuid)>,
    /// Where live readers hear that a trip changed (the progress channel), if anywhere.
    notices: Option<Arc<dyn crate::progress::ProgressStore>>,
    /// How long a trip's work may stay unfinished and untouched before the sweeper asks it
    /// again, and how often it looks.
    sweep: Sweep,
}

/// The sweeper's clock: work of the current version untouched for `after` is asked again;
/// the leader looks every `every`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sweep {
    pub after: Duration,
    pub every: Duration,
}

impl Default for Sweep {
    /// Ten minutes: longer than any job takes with its retries (upstream timeouts and
    /// backoff included), so only work nobody is doing is asked again.
    fn default() -> Self {
        Self {
            after: Duration::from_secs(600),
            every: Duration::from_secs(60),
        }
    }
}

impl Dispatcher {
    /// A dispatcher from the store's log to the queue.
    pub fn new(store: Arc<dyn Store>, queue: Arc<dyn JobQueue>, metrics: Arc<Metrics>) -> Self {
        Self {
            store,
            queue,
            metrics,
            read: None,
            outstanding: VecDeque::new(),
            notices: None,
            sweep: Sweep::default(),
        }
    }

    /// The sweeper's clock (the default: ten minutes, looked at every minute).
    pub fn with_sweep(mut self, sweep: Sweep) -> Self {
        self.sweep = sweep;
        self
    }

    /// The sweeper: trips whose work of the current version has not ended and that nothing
    /// touched for [`Sweep::after`] (the worker holding the job died, a job was lost) get that
    /// work asked again — the route under a new generation, or the analysis still open — with
    /// a WARN line and `etappe_work_resumed_total`. Answers how many were asked again.
    pub async fn sweep(&self) -> Result<usize, StoreError> {
        let after = chrono::Duration::from_std(self.sweep.after).unwrap_or(chrono::Duration::MAX);
        let quiet_since = chrono::Utc::now() - after;
        // Workers killed without stopping leave their heartbeat rows: a day on, they go.
        let gone = self
            .store
            .forget_silent_workers(Duration::from_secs(24 * 3600))
            .await?;
        if gone > 0 {
            tracing::info!(gone, "sweeper: forgot workers silent for a day");
        }
        let stale = self.store.stale_open_work(quiet_since, 100).await?;
        let mut resumed = 0;
        for trip_id in stale {
            let meta = etappe_events::CommandMetadata {
                metadata: etappe_events::EventMetadata {
                    actor: Some("sweeper".into()),
                    ..Default::default()
                },
                ids: etappe_events::EventIds::Fresh,
            };
            let executed = self
                .store
                .execute(trip_id, etappe_events::DecidedOn::Current, &meta, |_| {
                    etappe_domain::trip::TripCommand::ResumeWork
                })
                .await;
            match executed {
                Ok(done) if !done.events.is_empty() => {
                    resumed += 1;
                    self.metrics.work_resumed.inc();
                    tracing::warn!(
                        %trip_id,
                        quiet_secs = self.sweep.after.as_secs(),
                        asked = ?done.events.iter().map(etappe_domain::trip::TripEvent::event_type).collect::<Vec<_>>(),
                        "work of the current version had not ended: asked again"
                    );
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%trip_id, %error, "sweeper: could not ask the work again");
                }
            }
        }
        Ok(resumed)
    }

    /// The dispatcher also tells live readers (SSE) which trips' logs grew: it reads every
    /// event anyway, within 50 ms of its commit, whichever process or replica wrote it.
    pub fn with_change_notices(mut self, notices: Arc<dyn crate::progress::ProgressStore>) -> Self {
        self.notices = Some(notices);
        self
    }

    /// One step: reads a batch after the checkpoint, publishes its jobs, saves the
    /// checkpoint. Answers how many events were read.
    pub async fn step(&mut self) -> Result<usize, DispatchError> {
        let from = match self.read {
            Some(cursor) => cursor,
            None => self.store.load_checkpoint(SUBSCRIPTION).await?,
        };
        let events = self.store.read_all(from, BATCH).await?;
        let mut previous = from;
        let mut checkpoint = None;
        for event in &events {
            if let Some(job) = Job::requested_by(event) {
                let message = JobMessage {
                    job: job.clone(),
                    traceparent: event.metadata.traceparent.clone(),
                };
                self.queue.publish(&message).await?;
                self.metrics.job_dispatched(job.kind());
                if !self.queue.is_durable() {
                    self.outstanding.push_back((previous, job.id()));
                }
            }
            previous = event.cursor();
            checkpoint = Some(previous);
            self.read = Some(previous);
        }
        if let Some(notices) = &self.notices {
            let changed: std::collections::BTreeSet<_> = events
                .iter()
                .filter_map(|e| etappe_domain::ids::TripId::from_stream_id(&e.stream_id))
                .collect();
            for trip_id in changed {
                crate::progress::notify_changed(notices.as_ref(), trip_id).await;
            }
        }
        if let Some(last) = events.last() {
            let lag = (chrono::Utc::now() - last.recorded_at)
                .num_milliseconds()
                .max(0) as f64
                / 1000.0;
            self.metrics.dispatcher_lag.set(lag);
        }
        // With a non-durable queue, never checkpoint past a job that is not settled: after a
        // crash the log publishes it again.
        while let Some((_, job_id)) = self.outstanding.front() {
            if self.queue.is_settled(*job_id).await {
                self.outstanding.pop_front();
            } else {
                break;
            }
        }
        let save = match self.outstanding.front() {
            Some((before_oldest, _)) => Some(*before_oldest),
            None => checkpoint.or(self.read),
        };
        if let Some(cursor) = save {
            self.store.save_checkpoint(SUBSCRIPTION, cursor).await?;
        }
        Ok(events.len())
    }

    /// Runs until `stop` turns true: takes the lease, then dispatches while holding it.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut pause = Duration::from_millis(200);
        // Not leading (yet): no lag measured here, and none reported as zero.
        self.follow();
        while !*stop.borrow() {
            let lease = match self.store.try_lease(SUBSCRIPTION).await {
                Ok(Some(lease)) => lease,
                Ok(None) => {
                    // Another replica dispatches; wait and try again in case it dies.
                    let _ = tokio::time::timeout(Duration::from_secs(2), stop.changed()).await;
                    continue;
                }
                Err(error) => {
                    tracing::warn!(%error, "dispatcher: cannot take the lease; retrying");
                    let _ = tokio::time::timeout(Duration::from_secs(1), stop.changed()).await;
                    continue;
                }
            };
            tracing::info!("dispatcher: leading");
            self.metrics.dispatcher_leader.set(1);
            self.read = None;
            let mut swept = tokio::time::Instant::now();
            let mut renewed = tokio::time::Instant::now();
            while !*stop.borrow() {
                // The lease expires unless renewed: a leader that hung (paused, partitioned)
                // finds on waking that another replica leads, and stops before dispatching.
                if renewed.elapsed() >= etappe_events::LEASE_TTL / 3 {
                    match lease.renew().await {
                        Ok(true) => renewed = tokio::time::Instant::now(),
                        Ok(false) => {
                            tracing::warn!(
                                "dispatcher: the lease expired and another replica leads; stopping"
                            );
                            break;
                        }
                        Err(error) => {
                            tracing::warn!(%error, "dispatcher: cannot renew the lease; stopping");
                            break;
                        }
                    }
                }
                if swept.elapsed() >= self.sweep.every {
                    swept = tokio::time::Instant::now();
                    if let Err(error) = self.sweep().await {
                        tracing::warn!(%error, "sweeper: the read model could not be read");
                    }
                }
                match self.step().await {
                    Ok(0) => {
                        pause = Duration::from_millis(200);
                        let _ = tokio::time::timeout(IDLE_POLL, stop.changed()).await;
                    }
                    Ok(_) => pause = Duration::from_millis(200),
                    Err(error) => {
                        tracing::warn!(%error, "dispatcher: step failed; retrying from the checkpoint");
                        self.read = None;
                        self.outstanding.clear();
                        let _ = tokio::time::timeout(pause, stop.changed()).await;
                        pause = (pause * 2).min(Duration::from_secs(10));
                        // A failing database may have taken the lease's connection with it.
                        if matches!(error, DispatchError::Store(_)) {
                            break;
                        }
                    }
                }
            }
            drop(lease);
            self.follow();
        }
    }

    /// This replica does not dispatch: it says so, and reports no lag it did not measure.
    fn follow(&self) {
        self.metrics.dispatcher_leader.set(0);
        self.metrics.dispatcher_lag.set(f64::NAN);
    }
}
