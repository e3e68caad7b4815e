//! The in-process queue of the embedded default: the API process publishes and its own
//! workers consume. Nothing here survives a crash, which is why the dispatcher does not move
//! its checkpoint past a job until the job is settled: after a restart the log re-publishes it.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{Mutex, mpsc};
use uuid::Uuid;

use super::{Acker, Deliveries, Delivery, JobQueue, QueueError};
use crate::jobs::JobMessage;

struct Item {
    message: JobMessage,
    attempt: u32,
}

#[derive(Debug, Default)]
struct Shared {
    depth: AtomicU64,
    dead: AtomicU64,
    settled: std::sync::Mutex<HashSet<Uuid>>,
}

/// The in-process queue.
#[derive(Clone)]
pub struct MemoryQueue {
    sender: mpsc::UnboundedSender<Item>,
    receiver: Arc<Mutex<mpsc::UnboundedReceiver<Item>>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for MemoryQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryQueue")
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryQueue {
    /// An empty queue.
    pub fn new() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        Self {
            sender,
            receiver: Arc::new(Mutex::new(receiver)),
            shared: Arc::default(),
        }
    }

    fn push(&self, item: Item) -> Result<(), QueueError> {
        self.shared.depth.fetch_add(1, Ordering::SeqCst);
        self.sender.send(item).map_err(|_| QueueError::Closed)
    }
}

struct MemoryAcker {
    queue: MemoryQueue,
    job_id: Uuid,
}

impl MemoryAcker {
    fn settle(&self) {
        self.queue
            .shared
            .settled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(self.job_id);
    }
}

#[async_trait]
impl Acker for MemoryAcker {
    async fn ack(&self) -> Result<(), QueueError> {
        self.settle();
        Ok(())
    }

    async fn retry(
        &self,
        message: &JobMessage,
        attempt: u32,
        delay: Duration,
    ) -> Result<(), QueueError> {
        let queue = self.queue.clone();
        let message = message.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = queue.push(Item { message, attempt });
        });
        Ok(())
    }

    async fn dead_letter(&self) -> Result<(), QueueError> {
        self.queue.shared.dead.fetch_add(1, Ordering::SeqCst);
        self.settle();
        Ok(())
    }

    async fn requeue(&self) -> Result<(), QueueError> {
        // Unsettled: the dispatcher's checkpoint stays below it, so a restart re-publishes it.
        Ok(())
    }
}

struct MemoryDeliveries {
    queue: MemoryQueue,
}

#[async_trait]
impl Deliveries for MemoryDeliveries {
    async fn next(&mut self) -> Option<Delivery> {
        let item = self.queue.receiver.lock().await.recv().await?;
        self.queue.shared.depth.fetch_sub(1, Ordering::SeqCst);
        let job_id = item.message.job.id();
        Some(Delivery {
            message: Ok(item.message),
            attempt: item.attempt,
            redelivered: false,
            lost_deliveries: 0,
            acker: Box::new(MemoryAcker {
                queue: self.queue.clone(),
                job_id,
            }),
        })
    }
}

#[async_trait]
impl JobQueue for MemoryQueue {
    async fn publish(&self, message: &JobMessage) -> Result<(), QueueError> {
        self.push(Item {
            message: message.clone(),
            attempt: 0,
        })
    }

    async fn consume(&self, _prefetch: u16) -> Result<Box<dyn Deliveries>, QueueError> {
        Ok(Box::new(MemoryDeliveries {
            queue: self.clone(),
        }))
    }

    async fn depth(&self) -> Result<u64, QueueError> {
        Ok(self.shared.depth.load(Ordering::SeqCst))
    }

    async fn dead_lettered(&self) -> Result<u64, QueueError> {
        Ok(self.shared.dead.load(Ordering::SeqCst))
    }

    fn is_durable(&self) -> bool {
        false
    }

    async fn is_settled(&self, job_id: Uuid) -> bool {
        self.shared
            .settled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&job_id)
    }
}
