//! Configuration: every setting is a flag and an environment variable, each with a default,
//! so that `etappe` with nothing set runs on the embedded defaults.
//!
//! A leaf of the crate: it imports nothing from the rest of it (the settings of the server,
//! the budgets and the admitted hosts live in [`limits`]; their behaviour lives with their
//! users), so every module may read its settings from here.

mod limits;

pub use self::limits::{BudgetSettings, HostSettings, ServerLimits};

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

/// Settings shared by every `etappe` command.
#[derive(Args, Clone, Debug)]
pub struct Config {
    /// Address the HTTP server listens on.
    #[arg(long, env = "ETAPPE_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Directory of the embedded defaults: the SQLite database and the first-start token.
    #[arg(long, env = "ETAPPE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// PostgreSQL URL (`postgres://…`). Unset: SQLite under the data directory.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,

    /// Largest number of database connections the API holds.
    #[arg(long, env = "ETAPPE_DB_MAX_CONNECTIONS", default_value_t = 16)]
    pub db_max_connections: u32,

    /// RabbitMQ URL (`amqp://…`) for the job queue. Unset: an in-process queue.
    #[arg(long, env = "AMQP_URL")]
    pub amqp_url: Option<String>,

    /// Redis URL (`redis://…`) for live progress. Unset: progress in memory.
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,

    /// OTLP/HTTP collector endpoint (`http://collector:4318`). Unset: no trace export.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otel_endpoint: Option<String>,

    /// Hosts a source link may name over plain http and on private addresses (comma-separated),
    /// for local fixtures; every other link must be https.
    #[arg(long, env = "ETAPPE_ALLOWED_SOURCE_HOSTS", value_delimiter = ',')]
    pub allowed_source_hosts: Vec<String>,

    /// Milliseconds before a failed job's first retry (later ones wait 5× and 30× as long).
    #[arg(long, env = "ETAPPE_RETRY_UNIT_MS", default_value_t = 1000)]
    pub retry_unit_ms: u64,

    /// Proxy for fetching source links (`http://[user:password@]host:port`, CONNECT). Unset:
    /// none; `HTTPS_PROXY` and the other proxy variables are ignored.
    #[arg(long, env = "ETAPPE_FETCH_PROXY")]
    pub fetch_proxy: Option<String>,

    /// The fetcher's resolver and service origins; not a setting (tests plug in their own).
    #[arg(skip)]
    pub fetch_hooks: etappe_workers::fetch::FetchHooks,

    /// Jobs a worker runs at once (and its queue prefetch).
    #[arg(long, env = "ETAPPE_WORKER_CONCURRENCY", default_value_t = 2)]
    pub worker_concurrency: u16,

    /// Run workers inside the API process. Default: yes on the embedded queue, no with
    /// `AMQP_URL` (then run `etappe worker` or `etappe-worker` processes).
    #[arg(long, env = "ETAPPE_IN_PROCESS_WORKERS")]
    pub in_process_workers: Option<bool>,

    /// Prefix of queue names and Redis keys (tests isolate themselves with it).
    #[arg(long, env = "ETAPPE_QUEUE_PREFIX", default_value = "etappe")]
    pub queue_prefix: String,

    /// Address of the worker's own HTTP server (`/metrics`, `/livez`, `/readyz`).
    #[arg(long, env = "ETAPPE_WORKER_ADDR", default_value = "127.0.0.1:9091")]
    pub worker_addr: SocketAddr,

    /// Public base URL of the API, for share links (`https://etappe.example`). Unset: the
    /// request's Host header over http.
    #[arg(long, env = "ETAPPE_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Log filter (`info`, `etappe=debug,sqlx=warn`, …).
    #[arg(long, env = "ETAPPE_LOG", default_value = "info")]
    pub log: String,
    /// Host names `/mcp` answers besides loopback and the public URL's (comma-separated).
    #[arg(long, env = "ETAPPE_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser origins allowed to call `/mcp` besides loopback and the public URL's
    /// (comma-separated, `http://host:*` for any port); others are refused.
    #[arg(long, env = "ETAPPE_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub mcp_allowed_origins: Vec<String>,
    /// Third-party upstreams (geocoder, accommodations, router); unset: embedded defaults.
    #[command(flatten)]
    pub upstreams: etappe_workers::upstreams::UpstreamSettings,
    /// The HTTP server's deadlines and connection cap.
    #[command(flatten)]
    pub server: ServerLimits,
    /// Request budgets per caller (REST and MCP share them).
    #[command(flatten)]
    pub budgets: BudgetSettings,
}

impl Config {
    /// The hosts and origins the server admits: the listed ones plus the public URL's host
    /// and origin (pages served from it may call `/mcp`).
    pub fn hosts(&self) -> HostSettings {
        let mut allowed_hosts = self.mcp_allowed_hosts.clone();
        let mut allowed_origins = self.mcp_allowed_origins.clone();
        if let Some(public) = self
            .public_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
        {
            if let Some(host) = public.host_str() {
                allowed_hosts.push(host.to_owned());
            }
            allowed_origins.push(public.origin().ascii_serialization());
        }
        HostSettings {
            allowed_hosts,
            allowed_origins,
        }
    }

    /// The configuration with every default and nothing read from the environment (tests).
    pub fn embedded(data_dir: PathBuf) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir,
            database_url: None,
            db_max_connections: 16,
            amqp_url: None,
            redis_url: None,
            otel_endpoint: None,
            allowed_source_hosts: Vec::new(),
            fetch_proxy: None,
            fetch_hooks: etappe_workers::fetch::FetchHooks::default(),
            worker_concurrency: 2,
            retry_unit_ms: 1000,
            in_process_workers: None,
            queue_prefix: "etappe".into(),
            worker_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            public_url: None,
            log: "warn".into(),
            upstreams: etappe_workers::upstreams::UpstreamSettings::default(),
            mcp_allowed_hosts: Vec::new(),
            mcp_allowed_origins: Vec::new(),
            server: ServerLimits::default(),
            budgets: BudgetSettings::default(),
        }
    }

    /// Whether this process runs workers.
    pub fn runs_workers(&self) -> bool {
        self.in_process_workers.unwrap_or(self.amqp_url.is_none())
    }

    /// Where the embedded SQLite database lives.
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join("etappe.db")
    }

    /// Where the first start leaves the local user's token.
    pub fn local_token_path(&self) -> PathBuf {
        self.data_dir.join("local-token")
    }
}
