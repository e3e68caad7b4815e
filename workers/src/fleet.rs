//! Composition of the work side, shared by the API process (dispatcher, in-process workers)
//! and the worker process (`etappe-worker`, or `etappe worker`): which store, queue and
//! progress store the configuration names, and the worker process's own small HTTP server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use etappe_events::{PostgresStore, SqliteStore, Store, StoreError};
use serde_json::json;
use tokio::sync::watch;

use crate::flags::WorkFlags;
pub use crate::flags::WorkSettings;
use crate::pipeline::Pipeline;
use crate::progress::memory::MemoryProgress;
use crate::progress::redis::RedisProgress;
use crate::progress::{ProgressError, ProgressStore};
use crate::queue::memory::MemoryQueue;
use crate::queue::rabbitmq::{RabbitQueue, SharedRabbitQueue};
use crate::queue::{JobQueue, QueueError};
use crate::readiness::Check;
use crate::worker::{HEARTBEAT_WINDOW, Worker};
use etappe_infra::fetch::{FetchError, Fetcher};
use etappe_infra::metrics::Metrics;
use etappe_infra::redis_link::RedisLink;
use etappe_track::labels::{Labeller, NoLabels};

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

/// The queue, progress store, metrics and store shared by a process's work.
#[derive(Debug, Clone)]
pub struct WorkHandles {
    pub queue: Arc<dyn JobQueue>,
    pub progress: Arc<dyn ProgressStore>,
    pub metrics: Arc<Metrics>,
    pub store: Arc<dyn Store>,
    pub settings: WorkSettings,
    /// The third-party upstreams, shared by workers and API.
    pub upstreams: crate::upstreams::Upstreams,
    /// The process's one Redis handle (`None` without `REDIS_URL`).
    pub redis: Option<Arc<RedisLink>>,
}

/// The database the configuration names, opened and migrated: PostgreSQL at `DATABASE_URL`,
/// else SQLite under the data directory. The one way both binaries open it; the API also
/// keeps its identity tables in it.
#[derive(Debug, Clone)]
pub enum Database {
    Postgres(Arc<PostgresStore>),
    Sqlite(Arc<SqliteStore>),
}

impl Database {
    /// Opens (and migrates) the database `flags` name, with at most `max_connections` to
    /// PostgreSQL.
    pub async fn open(flags: &WorkFlags, max_connections: u32) -> Result<Self, StoreError> {
        Ok(match flags.database_url() {
            Some(url) => Self::Postgres(Arc::new(
                PostgresStore::connect_migrating(url, max_connections, flags.migrate_on_start)
                    .await?,
            )),
            None => Self::Sqlite(Arc::new(SqliteStore::open(&flags.sqlite_path()).await?)),
        })
    }

    /// The event store with its read models and work tables.
    pub fn store(&self) -> Arc<dyn Store> {
        match self {
            Self::Postgres(store) => Arc::clone(store) as Arc<dyn Store>,
            Self::Sqlite(store) => Arc::clone(store) as Arc<dyn Store>,
        }
    }

    /// True for the embedded default (SQLite under the data directory).
    pub fn is_embedded(&self) -> bool {
        matches!(self, Self::Sqlite(_))
    }

    /// The local OpenStreetMap index in this database (`etappe osm import`).
    pub fn osm_index(&self) -> etappe_osm_index::IndexDb {
        match self {
            Self::Postgres(store) => etappe_osm_index::IndexDb::Postgres(store.pool().clone()),
            Self::Sqlite(store) => etappe_osm_index::IndexDb::Sqlite(store.pool().clone()),
        }
    }

    /// The SRTM tiles in this database (`etappe elevation import`).
    pub fn elevation_tiles(&self) -> etappe_elevation::ElevationDb {
        match self {
            Self::Postgres(store) => etappe_elevation::ElevationDb::Postgres(store.pool().clone()),
            Self::Sqlite(store) => etappe_elevation::ElevationDb::Sqlite(store.pool().clone()),
        }
    }
}

/// Opens the queue and the progress store the settings name, over `database`'s store and
/// its local OpenStreetMap index.
pub async fn open_work(
    settings: &WorkSettings,
    database: &Database,
) -> Result<WorkHandles, RuntimeError> {
    let store = database.store();
    let queue: Arc<dyn JobQueue> = match settings.amqp_url.as_deref().filter(|u| !u.is_empty()) {
        Some(url) => Arc::new(SharedRabbitQueue(Arc::new(
            RabbitQueue::connect(url, &settings.queue_prefix).await?,
        ))),
        None => Arc::new(MemoryQueue::new()),
    };
    // One Redis handle for the process: progress, the upstreams' cache and pace, and (in
    // the API) budgets and confirmations all share it.
    let redis = RedisLink::open(settings.redis_url.as_deref());
    let progress: Arc<dyn ProgressStore> = match &redis {
        Some(link) => {
            Arc::new(RedisProgress::connect(Arc::clone(link), &settings.queue_prefix).await?)
        }
        None => Arc::new(MemoryProgress::default()),
    };
    let shared = crate::upstreams::SharedUpstreamState::new(redis.clone(), &settings.queue_prefix);
    let mut upstreams = crate::upstreams::Upstreams::from_settings(&settings.upstreams, &shared)?;
    upstreams.local_index = Some(Arc::new(etappe_osm_index::LocalIndex::new(
        database.osm_index(),
    )));
    upstreams.local_elevation = Some(Arc::new(etappe_elevation::LocalTiles::new(
        database.elevation_tiles(),
    )));
    let metrics = Arc::new(Metrics::default());
    observe_upstream_calls(&metrics);
    Ok(WorkHandles {
        queue,
        progress,
        metrics,
        store,
        settings: settings.clone(),
        upstreams,
        redis,
    })
}

/// Counts every third-party call of this process in `metrics` (by service, outcome and time).
fn observe_upstream_calls(metrics: &Arc<Metrics>) {
    let metrics = Arc::clone(metrics);
    etappe_upstream::observe_calls(Arc::new(move |upstream, outcome, seconds| {
        metrics.upstream_called(upstream, outcome, seconds);
    }));
}

/// The labeller of day ends: the embedded gazetteer.
pub fn labeller() -> Arc<dyn Labeller> {
    etappe_track::labels::embedded().unwrap_or_else(|| Arc::new(NoLabels))
}

impl WorkHandles {
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
                metrics: Arc::clone(&self.metrics),
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
            .proxy(self.settings.fetch_proxy.clone())
            .extra_roots(self.settings.fetch_hooks.extra_root_certificates.clone());
        if let Some(resolver) = &self.settings.fetch_hooks.resolver {
            builder = builder.resolver(Arc::clone(resolver));
        }
        builder.build()
    }

    /// A fetcher of small documents (an OAuth client's metadata) under `limits`, with the
    /// same address rules, proxy and resolver as the source links.
    pub fn document_fetcher(
        &self,
        limits: etappe_infra::fetch::Limits,
    ) -> Result<Fetcher, FetchError> {
        let mut builder = Fetcher::builder(self.settings.allowed_source_hosts.clone())
            .proxy(self.settings.fetch_proxy.clone())
            .extra_roots(self.settings.fetch_hooks.extra_root_certificates.clone())
            .limits(limits);
        if let Some(resolver) = &self.settings.fetch_hooks.resolver {
            builder = builder.resolver(Arc::clone(resolver));
        }
        builder.build()
    }

    /// The readiness checks of the work side: the queue answers and at least one worker
    /// is alive.
    pub async fn readiness(&self) -> Vec<Check> {
        let queue = Check::server("queue", self.queue.depth(), |depth| {
            format!("up ({depth} waiting)")
        })
        .await;
        let (passed, found) = match self.store.live_workers(HEARTBEAT_WINDOW).await {
            Ok(0) => (false, "none alive: jobs would wait".to_owned()),
            Ok(n) => (true, format!("{n} alive")),
            Err(e) => (false, format!("unknown: {e}")),
        };
        let workers = Check {
            name: "workers",
            passed,
            found,
        };
        vec![queue, workers]
    }
}

/// Runs a worker process until SIGTERM/Ctrl-C, with `/metrics`, `/livez` and `/readyz` on
/// `addr`.
pub async fn run_worker_process(work: WorkHandles, addr: SocketAddr) -> Result<(), RuntimeError> {
    // A worker reports what it knows: its jobs, and the queue as sampled at each scrape.
    let work = WorkHandles {
        metrics: Arc::new(Metrics::worker()),
        ..work
    };
    observe_upstream_calls(&work.metrics);
    let id = format!("worker-{}", uuid::Uuid::now_v7());
    let worker = work.worker(id.clone())?;
    let (stop, stopped) = watch::channel(false);
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(|State(w): State<WorkHandles>| async move {
                // Sampled from the queue now, as the API does: never a zero nobody measured.
                if let Ok(depth) = w.queue.depth().await {
                    w.metrics
                        .queue_depth
                        .set(i64::try_from(depth).unwrap_or(i64::MAX));
                }
                if let Ok(dead) = w.queue.dead_lettered().await {
                    w.metrics
                        .dead_letter_depth
                        .set(i64::try_from(dead).unwrap_or(i64::MAX));
                }
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        etappe_infra::metrics::CONTENT_TYPE,
                    )],
                    w.metrics.render(),
                )
            }),
        )
        .route("/livez", get(|| async { Json(json!({"status": "live"})) }))
        .route(
            "/readyz",
            get(|State(w): State<WorkHandles>| async move {
                let checks = [
                    Check::server("database", w.store.ping(), |()| "up".to_owned()).await,
                    Check::server("queue", w.queue.depth(), |depth| {
                        format!("up ({depth} waiting)")
                    })
                    .await,
                ];
                let (ready, document) =
                    crate::readiness::document(&checks, &w.upstreams.health().await);
                let status = if ready {
                    StatusCode::OK
                } else {
                    StatusCode::SERVICE_UNAVAILABLE
                };
                (status, Json(document))
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
