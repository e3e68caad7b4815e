//! The work side of the API process: the dispatcher and, on the embedded default, the
//! workers, started with the server and stopped with it. What they are built from is the
//! workers crate's composition (`etappe_workers::fleet`), shared with `etappe-worker`.

use tokio::sync::watch;
use tokio::task::JoinHandle;

use etappe_workers::dispatcher::Dispatcher;
pub use etappe_workers::fleet::{RuntimeError, WorkHandles, open_work};
use std::sync::Arc;

use crate::config::Config;

/// Background tasks of the API process, stopped together.
#[derive(Debug)]
pub struct Background {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Background {
    /// Starts the dispatcher and, when configured, in-process workers.
    pub async fn start(config: &Config, work: &WorkHandles) -> Result<Self, RuntimeError> {
        let (stop, stopped) = watch::channel(false);
        let mut tasks = Vec::new();
        let dispatcher = Dispatcher::new(
            Arc::clone(&work.store),
            Arc::clone(&work.queue),
            Arc::clone(&work.metrics),
        )
        .with_change_notices(Arc::clone(&work.progress))
        .with_sweep(config.work.sweep());
        tasks.push(tokio::spawn(dispatcher.run(stopped.clone())));
        if config.runs_workers() {
            let worker = work.worker(format!("api-{}", uuid::Uuid::now_v7()))?;
            // Alive from the first request on: readiness must not flap at start.
            work.store.heartbeat(&worker.id).await?;
            let stopped = stopped.clone();
            tasks.push(tokio::spawn(async move {
                if let Err(error) = worker.run(stopped).await {
                    tracing::error!(%error, "in-process worker stopped");
                }
            }));
        }
        Ok(Self { stop, tasks })
    }

    /// Stops everything and waits for it.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
