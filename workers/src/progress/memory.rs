//! In-memory progress for the embedded default: the latest report per job, and a broadcast
//! channel for live subscribers.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use etappe_domain::ids::TripId;
use futures::StreamExt;
use tokio::sync::broadcast;
use tokio_stream_lite::BroadcastStream;
use uuid::Uuid;

use super::{Progress, ProgressError, ProgressStore, ProgressStream};

/// Progress kept in this process.
#[derive(Debug)]
pub struct MemoryProgress {
    latest: Mutex<HashMap<TripId, HashMap<Uuid, Progress>>>,
    live: broadcast::Sender<Progress>,
}

impl Default for MemoryProgress {
    fn default() -> Self {
        Self {
            latest: Mutex::default(),
            live: broadcast::channel(1024).0,
        }
    }
}

#[async_trait]
impl ProgressStore for MemoryProgress {
    async fn publish(&self, progress: &Progress) -> Result<(), ProgressError> {
        {
            let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
            let jobs = latest.entry(progress.trip_id).or_default();
            let newer = jobs
                .get(&progress.job_id)
                .is_none_or(|p| p.seq < progress.seq);
            if !newer {
                return Ok(());
            }
            jobs.insert(progress.job_id, progress.clone());
        }
        // No subscriber is not an error.
        let _ = self.live.send(progress.clone());
        Ok(())
    }

    async fn current(&self, trip_id: TripId) -> Result<Vec<Progress>, ProgressError> {
        let latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<Progress> = latest
            .get(&trip_id)
            .map(|j| j.values().cloned().collect())
            .unwrap_or_default();
        all.sort_by_key(|p| p.seq);
        Ok(all)
    }

    async fn subscribe(&self, trip_id: TripId) -> Result<ProgressStream, ProgressError> {
        let stream = BroadcastStream::new(self.live.subscribe())
            .filter(move |p| std::future::ready(p.trip_id == trip_id));
        Ok(Box::pin(stream))
    }
}

/// A `Stream` over a broadcast receiver that skips what a slow reader missed (progress is
/// advisory: the latest report is always readable with `current`).
mod tokio_stream_lite {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use futures::Stream;
    use futures::future::BoxFuture;
    use tokio::sync::broadcast;

    pub(super) struct BroadcastStream<T: Clone + Send + 'static> {
        pending: BoxFuture<'static, (Option<T>, broadcast::Receiver<T>)>,
    }

    async fn recv<T: Clone + Send + 'static>(
        mut rx: broadcast::Receiver<T>,
    ) -> (Option<T>, broadcast::Receiver<T>) {
        loop {
            match rx.recv().await {
                Ok(item) => return (Some(item), rx),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return (None, rx),
            }
        }
    }

    impl<T: Clone + Send + 'static> BroadcastStream<T> {
        pub(super) fn new(rx: broadcast::Receiver<T>) -> Self {
            Self {
                pending: Box::pin(recv(rx)),
            }
        }
    }

    impl<T: Clone + Send + 'static> Stream for BroadcastStream<T> {
        type Item = T;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
            match self.pending.as_mut().poll(cx) {
                Poll::Ready((Some(item), rx)) => {
                    self.pending = Box::pin(recv(rx));
                    Poll::Ready(Some(item))
                }
                Poll::Ready((None, _)) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            }
        }
    }
}
