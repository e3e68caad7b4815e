//! Composition of the work side, shared by the API process (dispatcher, in-process workers)
//! and the worker process (`etappe-worker`, or `etappe worker`): which store, queue and
//! progress store the configuration names, and the worker process's own small HTTP server.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use etappe_store::{PostgresStore, SqliteStore, Store, StoreError};
use serde_json::json;
use tokio::sync::watch;

use crate::fetch::{FetchError, FetchHooks, Fetcher};
use crate::labels::{Labeller, NoLabels};
use crate::metrics::Metrics;
use crate::pipeline::Pipeline;
use crate::progress::memory::MemoryProgress;
use crate::progress::redis::RedisProgress;
use crate::progress::{ProgressError, ProgressStore};
use crate::queue::memory::MemoryQueue;
use crate::queue::rabbitmq::{RabbitQueue, SharedRabbitQueue};
use crate::queue::{JobQueue, QueueError};
use crate::worker::{HEARTBEAT_WINDOW, Worker};

/// Why the work side could not start.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("queue: {0}")]
    Queue(#[from] QueueError),
    #[error("progress: {0}")]
    Progress(#[from] ProgressError),
    #[error("fetcher: {0}")]
    Fetch(#[from] FetchError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("upstreams: {0}")]
    Upstreams(#[from] crate::upstreams::UpstreamSetupError),
}

/// What the work side is configured with.
#[derive(Debug, Clone)]
pub struct WorkSettings {
    pub amqp_url: Option<String>,
    pub redis_url: Option<String>,
    pub queue_prefix: String,
    pub allowed_source_hosts: Vec<String>,
    /// The proxy source links are fetched through (`ETAPPE_FETCH_PROXY`); `None`: none, and
    /// the environment's proxy variables are ignored.
    pub fetch_proxy: Option<String>,
    /// The fetcher's resolver and service origins (tests plug in loopback ones).
    pub fetch_hooks: FetchHooks,
    pub concurrency: u16,
    pub upstreams: crate::upstreams::UpstreamSettings,
    /// The first retry's delay; later ones are 5× and 30× it (1 s in production; tests
    /// shorten it to see a job given up within a second).
    pub retry_unit: Duration,
}

/// The queue, progress store, metrics and store shared by a process's work.
#[derive(Debug, Clone)]
pub struct Work {
    pub queue: Arc<dyn JobQueue>,
    pub progress: Arc<dyn ProgressStore>,
    pub metrics: Arc<Metrics>,
    pub store: Arc<dyn Store>,
    pub settings: WorkSettings,
    /// The third-party upstreams, shared by workers and API.
    pub upstreams: crate::upstreams::Upstreams,
}

/// Opens the event store: PostgreSQL at `database_url`, else SQLite under `data_dir`.
pub async fn open_store(
    database_url: Option<&str>,
    data_dir: &Path,
    max_connections: u32,
) -> Result<Arc<dyn Store>, RuntimeError> {
    Ok(match database_url.filter(|u| !u.trim().is_empty()) {
        Some(url) => Arc::new(PostgresStore::connect(url, max_connections).await?),
        None => Arc::new(SqliteStore::open(&data_dir.join("etappe.db")).await?),
    })
}

/// Opens the queue and the progress store the settings name.
pub async fn open_work(
    settings: &WorkSettings,
    store: Arc<dyn Store>,
) -> Result<Work, RuntimeError> {
    let queue: Arc<dyn JobQueue> = match settings.amqp_url.as_deref().filter(|u| !u.is_empty()) {
        Some(url) => Arc::new(SharedRabbitQueue(Arc::new(
            RabbitQueue::connect(url, &settings.queue_prefix).await?,
        ))),
        None => Arc::new(MemoryQueue::new()),
    };
    let progress: Arc<dyn ProgressStore> =
        match settings.redis_url.as_deref().filter(|u| !u.is_empty()) {
            Some(url) => Arc::new(RedisProgress::connect(url, &settings.queue_prefix).await?),
            None => Arc::new(MemoryProgress::default()),
        };
    let shared = crate::upstreams::SharedUpstreamState::new(
        settings.redis_url.as_deref(),
        &settings.queue_prefix,
    );
    let upstreams = crate::upstreams::Upstreams::from_settings(&settings.upstreams, &shared)?;
    Ok(Work {
        queue,
        progress,
        metrics: Arc::new(Metrics::default()),
        store,
        settings: settings.clone(),
        upstreams,
    })
}

/// The labeller of day ends: the embedded gazetteer.
pub fn labeller() -> Arc<dyn Labeller> {
    crate::labels::embedded().unwrap_or_else(|| Arc::new(NoLabels))
}

impl Work {
    /// A worker over this work.
    pub fn worker(&self, id: String) -> Result<Worker, RuntimeError> {
        Ok(Worker {
            id,
            queue: Arc::clone(&self.queue),
            pipeline: Pipeline {
                store: Arc::clone(&self.store),
                fetcher: self.fetcher()?,
                source_origins: self.settings.fetch_hooks.source_origins.clone(),
                progress: Arc::clone(&self.progress),
                labeller: labeller(),
                upstreams: self.upstreams.clone(),
            },
            store: Arc::clone(&self.store),
            metrics: Arc::clone(&self.metrics),
            concurrency: self.settings.concurrency.max(1),
            grace: Duration::from_secs(20),
            retry_unit: self.settings.retry_unit,
        })
    }

    /// The fetcher of source links the settings describe.
    pub fn fetcher(&self) -> Result<Fetcher, FetchError> {
        let mut builder = Fetcher::builder(self.settings.allowed_source_hosts.clone())
            .proxy(self.settings.fetch_proxy.clone());
        if let Some(resolver) = &self.settings.fetch_hooks.resolver {
            builder = builder.resolver(Arc::clone(resolver));
        }
        builder.build()
    }

    /// The readiness of the work side: the queue answers and at least one worker is alive.
    pub async fn readiness(&self) -> (bool, serde_json::Value) {
        let queue = tokio::time::timeout(Duration::from_secs(2), self.queue.depth()).await;
        let (queue_ok, queue_text) = match queue {
            Ok(Ok(depth)) => (true, format!("up ({depth} waiting)")),
            Ok(Err(e)) => (false, format!("down: {e}")),
            Err(_) => (false, "down: no answer within 2s".into()),
        };
        let workers = self.store.live_workers(HEARTBEAT_WINDOW).await;
        let (workers_ok, workers_text) = match workers {
            Ok(0) => (false, "none alive: jobs would wait".to_owned()),
            Ok(n) => (true, format!("{n} alive")),
            Err(e) => (false, format!("unknown: {e}")),
        };
        (
            queue_ok && workers_ok,
            json!({"queue": queue_text, "workers": workers_text}),
        )
    }
}

/// Runs a worker process until SIGTERM/Ctrl-C, with `/metrics`, `/livez` and `/readyz` on
/// `addr`.
pub async fn run_worker_process(work: Work, addr: SocketAddr) -> Result<(), RuntimeError> {
    let id = format!("worker-{}", uuid::Uuid::now_v7());
    let worker = work.worker(id.clone())?;
    let (stop, stopped) = watch::channel(false);
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(|State(w): State<Work>| async move { w.metrics.render() }),
        )
        .route("/livez", get(|| async { Json(json!({"status": "live"})) }))
        .route(
            "/readyz",
            get(|State(w): State<Work>| async move {
                let ready = w.store.ping().await.is_ok() && w.queue.depth().await.is_ok();
                let status = if ready {
                    StatusCode::OK
                } else {
                    StatusCode::SERVICE_UNAVAILABLE
                };
                // The upstreams are reported, never required: jobs without one fall back
                // to the embedded default or record the category as unavailable.
                (
                    status,
                    Json(json!({
                        "status": if ready { "ready" } else { "unready" },
                        "upstreams": w.upstreams.health().await,
                    })),
                )
            }),
        )
        .with_state(work.clone());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%id, addr = %listener.local_addr()?, "worker started");
    let mut http_stop = stopped.clone();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = http_stop.wait_for(|s| *s).await;
            })
            .await;
    });
    let running = tokio::spawn(worker.run(stopped));
    shutdown_signal().await;
    tracing::info!("stopping: finishing or requeueing jobs in flight");
    let _ = stop.send(true);
    let _ = running.await;
    let _ = server.await;
    Ok(())
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
