//! The settings both binaries share (`etappe` and `etappe-worker`): where the store, the
//! queue and Redis are, how sources are fetched, how a worker runs and reports, and the
//! `health` probe's flags. Declared once, flattened into each binary's command line, so the
//! two cannot drift apart in name, variable or default.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::upstreams::UpstreamSettings;
use etappe_infra::fetch::FetchHooks;

/// Where the work side's backends are and how its workers run.
#[derive(Args, Clone, Debug)]
pub struct WorkFlags {
    /// PostgreSQL URL (`postgres://…`). Unset: SQLite under the data directory (one machine).
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,

    /// Directory of the embedded defaults: the SQLite database and the first-start token.
    #[arg(long, env = "ETAPPE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// RabbitMQ URL (`amqp://…`) for the job queue. Unset: an in-process queue (a worker
    /// process needs a shared one).
    #[arg(long, env = "AMQP_URL")]
    pub amqp_url: Option<String>,

    /// Redis URL (`redis://…`) for live progress, caches and budgets shared by replicas.
    /// Unset: kept in memory.
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,

    /// Prefix of queue names and Redis keys (tests isolate themselves with it).
    #[arg(long, env = "ETAPPE_QUEUE_PREFIX", default_value = "etappe")]
    pub queue_prefix: String,

    /// Hosts a source link may name over plain http and on private addresses (comma-separated),
    /// for local fixtures; every other link must be https.
    #[arg(long, env = "ETAPPE_ALLOWED_SOURCE_HOSTS", value_delimiter = ',')]
    pub allowed_source_hosts: Vec<String>,

    /// Proxy for fetching source links (`http://[user:password@]host:port`, CONNECT). Unset:
    /// none; `HTTPS_PROXY` and the other proxy variables are ignored.
    #[arg(long, env = "ETAPPE_FETCH_PROXY")]
    pub fetch_proxy: Option<String>,

    /// The fetcher's resolver and service origins; not a setting (tests plug in their own).
    #[arg(skip)]
    pub fetch_hooks: FetchHooks,

    /// Jobs a worker runs at once (and its queue prefetch).
    #[arg(long, env = "ETAPPE_WORKER_CONCURRENCY", default_value_t = 2)]
    pub worker_concurrency: u16,

    /// Milliseconds before a failed job's first retry (later ones wait 5× and 30× as long; on
    /// RabbitMQ rounded up to the delay queues of 1 s, 5 s and 30 s).
    #[arg(long, env = "ETAPPE_RETRY_UNIT_MS", default_value_t = 1000)]
    pub retry_unit_ms: u64,

    /// Apply the database's migrations at start (PostgreSQL). With several API replicas and
    /// workers, set it false on all of them and run `etappe migrate` once per upgrade: a
    /// process then only checks the schema is at its build's, and refuses to start if not.
    #[arg(long, env = "ETAPPE_MIGRATE_ON_START", default_value_t = true, action = clap::ArgAction::Set)]
    pub migrate_on_start: bool,

    /// Seconds a trip's work of its current version may stay unfinished and untouched
    /// before the dispatcher's sweeper asks it again (a worker died holding its job, a job
    /// was lost); the sweeper looks every tenth of it, at most once a minute.
    #[arg(long, env = "ETAPPE_SWEEP_AFTER_SECS", default_value_t = 600)]
    pub sweep_after_secs: u64,

    /// Address of the worker process's own HTTP server (`/metrics`, `/livez`, `/readyz`).
    #[arg(long, env = "ETAPPE_WORKER_ADDR", default_value = "127.0.0.1:9091")]
    pub worker_addr: SocketAddr,

    /// Third-party upstreams (geocoder, accommodations, router); unset: embedded defaults.
    #[command(flatten)]
    pub upstreams: UpstreamSettings,

    /// Log filter (`info`, `etappe=debug,sqlx=warn`, …).
    #[arg(long, env = "ETAPPE_LOG", default_value = "info")]
    pub log: String,

    /// Log lines as `text` (colours only on a terminal) or `json` (one object a line, with
    /// the request's or job's span: route, status, request and trace ids).
    #[arg(long, env = "ETAPPE_LOG_FORMAT", default_value = "text")]
    pub log_format: String,

    /// OTLP/HTTP collector endpoint (`http://collector:4318`). Unset: no trace export.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otel_endpoint: Option<String>,
}

impl WorkFlags {
    /// The sweeper's clock from [`Self::sweep_after_secs`].
    pub fn sweep(&self) -> crate::dispatcher::Sweep {
        let after = std::time::Duration::from_secs(self.sweep_after_secs.max(1));
        crate::dispatcher::Sweep {
            after,
            every: (after / 10).min(std::time::Duration::from_secs(60)),
        }
    }

    /// Every default, nothing read from the environment, the data under `data_dir` (tests).
    pub fn embedded(data_dir: PathBuf) -> Self {
        Self {
            database_url: None,
            data_dir,
            amqp_url: None,
            redis_url: None,
            queue_prefix: "etappe".into(),
            allowed_source_hosts: Vec::new(),
            fetch_proxy: None,
            fetch_hooks: FetchHooks::default(),
            worker_concurrency: 2,
            retry_unit_ms: 1000,
            sweep_after_secs: 600,
            migrate_on_start: true,
            worker_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            upstreams: UpstreamSettings::default(),
            log: "warn".into(),
            log_format: "text".into(),
            otel_endpoint: None,
        }
    }

    /// The PostgreSQL URL, when one is set (an empty one is none).
    pub fn database_url(&self) -> Option<&str> {
        self.database_url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
    }

    /// Where the embedded SQLite database lives.
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join("etappe.db")
    }

    /// What the work side is opened with.
    pub fn settings(&self) -> WorkSettings {
        WorkSettings {
            amqp_url: self.amqp_url.clone().filter(|u| !u.is_empty()),
            redis_url: self.redis_url.clone(),
            queue_prefix: self.queue_prefix.clone(),
            allowed_source_hosts: self.allowed_source_hosts.clone(),
            fetch_proxy: self.fetch_proxy.clone(),
            fetch_hooks: self.fetch_hooks.clone(),
            concurrency: self.worker_concurrency,
            upstreams: self.upstreams.clone(),
            retry_unit: Duration::from_millis(self.retry_unit_ms.max(1)),
        }
    }
}

/// The `health` subcommand's flags.
#[derive(Args, Clone, Debug)]
pub struct HealthFlags {
    /// Ask /livez: the process runs (the default).
    #[arg(long)]
    pub live: bool,
    /// Ask /readyz: the process can serve work (reaches its database and queue).
    #[arg(long)]
    pub ready: bool,
    /// The process to ask (host:port); default: its configured address, on loopback if it
    /// is a wildcard.
    #[arg(long = "addr", value_name = "HOST:PORT")]
    pub target: Option<String>,
}

impl HealthFlags {
    /// Probes the process at `target`, else at `default_addr`.
    pub async fn run(&self, default_addr: SocketAddr) -> Result<(), crate::health::HealthError> {
        crate::health::run(self.target.as_deref(), default_addr, self.live, self.ready).await
    }
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
