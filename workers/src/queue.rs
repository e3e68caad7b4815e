//! The job queue: one port, an in-process adapter for the embedded default and a RabbitMQ
//! adapter for production. Delivery is at least once: a message may come twice (a crash
//! before the ack, a dispatcher re-publishing after its own crash), so workers are
//! idempotent by job id.

pub mod memory;
pub mod rabbitmq;

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use crate::jobs::JobMessage;

/// How many times a job whose handler failed transiently is tried before it is
/// dead-lettered (delivery counts for a crash-looping message are bounded by the broker).
pub const MAX_ATTEMPTS: u32 = 4;

/// Deliveries of one message the broker makes before it dead-letters it (a message whose
/// workers keep dying). The worker gives the job up visibly on the last one.
pub const DELIVERY_LIMIT: u32 = 5;

/// Failures of the queue itself (not of a job).
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("queue unavailable: {0}")]
    Unavailable(String),
    #[error("the broker refused the message: {0}")]
    Nacked(String),
    #[error("queue closed")]
    Closed,
}

/// A message handed to a worker, to be settled exactly once.
pub struct Delivery {
    /// The job, or why the payload could not be read (a poison message).
    pub message: Result<JobMessage, String>,
    /// How many times this job was tried before (0 on the first delivery).
    pub attempt: u32,
    /// True when the broker delivered it before (a worker died holding it).
    pub redelivered: bool,
    /// Deliveries of this message that ended with no settlement (the worker holding it died),
    /// as the broker counts them (RabbitMQ's `x-delivery-count`); 0 where none is kept.
    pub lost_deliveries: u32,
    pub acker: Box<dyn Acker>,
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("message", &self.message)
            .field("attempt", &self.attempt)
            .field("redelivered", &self.redelivered)
            .finish_non_exhaustive()
    }
}

/// Settles a delivery.
#[async_trait]
pub trait Acker: Send + Sync {
    /// Done: remove it.
    async fn ack(&self) -> Result<(), QueueError>;
    /// Try again after `delay` (a copy with the attempt counted goes to a delay queue).
    async fn retry(
        &self,
        message: &JobMessage,
        attempt: u32,
        delay: Duration,
    ) -> Result<(), QueueError>;
    /// Give up: to the dead-letter queue, where an operator can look at it.
    async fn dead_letter(&self) -> Result<(), QueueError>;
    /// Put it back untouched (graceful shutdown with the job unfinished).
    async fn requeue(&self) -> Result<(), QueueError>;
}

/// A stream of deliveries.
#[async_trait]
pub trait Deliveries: Send {
    /// The next delivery; `None` when the queue is closed.
    async fn next(&mut self) -> Option<Delivery>;
}

/// The port.
#[async_trait]
pub trait JobQueue: Send + Sync + fmt::Debug {
    /// Publishes a job and resolves once the queue holds it (after the broker's confirm).
    async fn publish(&self, message: &JobMessage) -> Result<(), QueueError>;
    /// Starts consuming with at most `prefetch` unsettled deliveries at a time.
    async fn consume(&self, prefetch: u16) -> Result<Box<dyn Deliveries>, QueueError>;
    /// Messages waiting to be delivered.
    async fn depth(&self) -> Result<u64, QueueError>;
    /// Messages in the dead-letter queue.
    async fn dead_lettered(&self) -> Result<u64, QueueError>;
    /// Moves up to `limit` dead-lettered jobs back to the jobs queue, each with its attempts
    /// counted afresh (once the cause is fixed: an upstream back, a bug deployed away).
    /// A replayed job runs from where its trip is; its results are idempotent. Answers how
    /// many moved. The in-process queue keeps no dead letters: none.
    async fn replay_dead_letters(&self, _limit: u64) -> Result<u64, QueueError> {
        Ok(0)
    }
    /// Whether a published message survives a crash of this process. When not, the
    /// dispatcher keeps its checkpoint below every job not yet settled.
    fn is_durable(&self) -> bool;
    /// Whether the job has been acknowledged or dead-lettered (only asked of non-durable
    /// queues).
    async fn is_settled(&self, job_id: Uuid) -> bool;
}

/// The delay before try `attempt` (1-based): 1 s, 5 s, 30 s.
pub fn backoff(attempt: u32) -> Duration {
    match attempt {
        0 | 1 => Duration::from_secs(1),
        2 => Duration::from_secs(5),
        _ => Duration::from_secs(30),
    }
}
