//! The worker: consumes jobs with a bounded concurrency, runs them through the pipeline, and
//! settles each delivery once: ack when done (or dropped, or failed for good), retry with
//! backoff on a transient error, dead-letter after the last attempt or for a payload that
//! cannot be read. It beats a heartbeat so readiness can count live workers, and on shutdown
//! it stops taking jobs and requeues what it could not finish within the grace period.

use std::sync::Arc;
use std::time::{Duration, Instant};

use etappe_events::Store;
use tokio::sync::{Mutex, watch};
use tracing::Instrument;

use crate::giving_up::GiveUpCause;
use crate::pipeline::{Outcome, Pipeline};
use crate::queue::{DELIVERY_LIMIT, Deliveries, Delivery, JobQueue, MAX_ATTEMPTS, backoff};
use etappe_infra::metrics::Metrics;

/// How often a worker says it is alive.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);
/// How long after its last beat a worker still counts as alive.
pub const HEARTBEAT_WINDOW: Duration = Duration::from_secs(30);

/// A worker.
#[derive(Debug)]
pub struct Worker {
    pub id: String,
    pub queue: Arc<dyn JobQueue>,
    pub pipeline: Pipeline,
    pub store: Arc<dyn Store>,
    pub metrics: Arc<Metrics>,
    pub concurrency: u16,
    /// How long in-flight jobs may take to finish after a stop is asked.
    pub grace: Duration,
    /// The first retry's delay (see [`backoff`], which counts in units of it).
    pub retry_unit: Duration,
}

impl Worker {
    /// Runs until `stop` turns true.
    pub async fn run(self, stop: watch::Receiver<bool>) -> Result<(), crate::queue::QueueError> {
        let this = Arc::new(self);
        let heartbeat = {
            let this = Arc::clone(&this);
            let mut stop = stop.clone();
            tokio::spawn(async move {
                while !*stop.borrow() {
                    if let Err(error) = this.store.heartbeat(&this.id).await {
                        tracing::warn!(%error, "heartbeat not recorded");
                    }
                    let _ = tokio::time::timeout(HEARTBEAT_EVERY, stop.changed()).await;
                }
            })
        };
        // The broker may be down when the worker starts: wait for it rather than exit.
        let mut pause = Duration::from_millis(200);
        let consumer = loop {
            match this.queue.consume(this.concurrency).await {
                Ok(consumer) => break consumer,
                Err(error) if !*stop.borrow() => {
                    tracing::warn!(%error, "cannot consume yet; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                Err(error) => return Err(error),
            }
        };
        let deliveries: Arc<Mutex<Box<dyn Deliveries>>> = Arc::new(Mutex::new(consumer));
        let slots: Vec<_> = (0..this.concurrency.max(1))
            .map(|_| {
                let this = Arc::clone(&this);
                let deliveries = Arc::clone(&deliveries);
                let mut stop = stop.clone();
                tokio::spawn(async move {
                    loop {
                        let next = tokio::select! {
                            delivery = async { deliveries.lock().await.next().await } => delivery,
                            _ = stop.wait_for(|s| *s) => None,
                        };
                        let Some(delivery) = next else { break };
                        this.handle(delivery, stop.clone()).await;
                    }
                })
            })
            .collect();
        for slot in slots {
            let _ = slot.await;
        }
        heartbeat.abort();
        // Stopped: readiness stops counting this worker now, not when its beat goes stale.
        if let Err(error) = this.store.forget_worker(&this.id).await {
            tracing::warn!(%error, "the stopped worker's heartbeat was not removed");
        }
        Ok(())
    }

    async fn handle(&self, delivery: Delivery, mut stop: watch::Receiver<bool>) {
        let Delivery {
            message,
            attempt,
            redelivered,
            lost_deliveries,
            acker,
        } = delivery;
        let message = match message {
            Ok(message) => message,
            Err(why) => {
                tracing::error!(%why, "a job message cannot be read: dead-lettered");
                self.metrics.job_ended("unreadable", "dead_lettered");
                let _ = acker.dead_letter().await;
                return;
            }
        };
        let job = &message.job;
        let span = tracing::info_span!("job", kind = job.kind(), job_id = %job.id(), trip_id = %job.trip_id(), attempt, redelivered);
        etappe_infra::telemetry::continue_trace_from(&span, message.traceparent.as_deref());
        // The broker is about to stop delivering a job whose workers keep dying: give it up
        // now, visibly, rather than let it vanish into the dead-letter queue.
        if lost_deliveries + 1 >= DELIVERY_LIMIT {
            let cause = GiveUpCause::WorkersStopped {
                deliveries: lost_deliveries,
            };
            span.in_scope(|| {
                tracing::error!(
                    lost_deliveries,
                    "workers keep stopping on this job: given up"
                );
            });
            if let Err(error) = self.pipeline.give_up(job, &cause).await {
                span.in_scope(
                    || tracing::warn!(%error, "the give-up was not recorded; requeueing"),
                );
                let _ = acker.requeue().await;
                return;
            }
            let _ = acker.dead_letter().await;
            self.count(job.kind(), "dead_lettered");
            return;
        }
        let started = Instant::now();
        self.metrics.job_in_flight(job.kind(), 1);
        let run = self
            .pipeline
            .run(job, message.traceparent.as_deref())
            .instrument(span.clone());
        // A stop lets the job finish within the grace period, then puts it back unfinished.
        let result = tokio::select! {
            result = run => Some(result),
            () = async {
                let _ = stop.wait_for(|s| *s).await;
                tokio::time::sleep(self.grace).await;
            } => None,
        };
        let kind = job.kind();
        self.metrics.job_in_flight(kind, -1);
        // Its end, with how long it took, for an operator following one job.
        span.in_scope(|| {
            tracing::debug!(
                ms = started.elapsed().as_millis() as u64,
                finished = result.is_some(),
                "job ended"
            );
        });
        let outcome = match result {
            None => {
                let _ = acker.requeue().await;
                "requeued"
            }
            Some(Ok(Outcome::Completed)) => {
                let _ = acker.ack().await;
                "completed"
            }
            Some(Ok(Outcome::Dropped(why))) => {
                span.in_scope(|| tracing::info!(%why, "job dropped"));
                let _ = acker.ack().await;
                "dropped"
            }
            Some(Ok(Outcome::Failed(why))) => {
                span.in_scope(|| tracing::info!(%why, "route failed for good"));
                let _ = acker.ack().await;
                "failed"
            }
            Some(Err(error)) => {
                let next = attempt + 1;
                if next >= MAX_ATTEMPTS {
                    span.in_scope(
                        || tracing::error!(%error, "job failed {MAX_ATTEMPTS} times: given up"),
                    );
                    let cause = GiveUpCause::AttemptsExhausted {
                        attempts: MAX_ATTEMPTS,
                        last_error: error.to_string(),
                    };
                    match self.pipeline.give_up(job, &cause).await {
                        Ok(()) => {
                            let _ = acker.dead_letter().await;
                            "dead_lettered"
                        }
                        // Without the record the job must not vanish: try again later.
                        Err(e) => {
                            span.in_scope(|| tracing::warn!(error = %e, "the give-up was not recorded; retrying"));
                            if acker
                                .retry(&message, attempt, self.delay(next))
                                .await
                                .is_err()
                            {
                                let _ = acker.requeue().await;
                            }
                            "retried"
                        }
                    }
                } else {
                    span.in_scope(|| tracing::warn!(%error, next, "job failed; retrying"));
                    if let Err(e) = acker.retry(&message, next, self.delay(next)).await {
                        tracing::warn!(error = %e, "retry not scheduled; requeueing");
                        let _ = acker.requeue().await;
                    }
                    "retried"
                }
            }
        };
        self.count(kind, outcome);
        self.metrics.job_took(kind, started.elapsed().as_secs_f64());
    }

    /// The wait before try `attempt`: [`backoff`] in units of `retry_unit`.
    fn delay(&self, attempt: u32) -> Duration {
        backoff(attempt).mul_f64(self.retry_unit.as_secs_f64())
    }

    fn count(&self, kind: &str, outcome: &str) {
        self.metrics.job_ended(kind, outcome);
    }
}
