//! `etappe-worker`: a worker process of the fleet (scale with `docker compose --scale`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use etappe_workers::runtime::{WorkSettings, open_store, open_work, run_worker_process};

/// Runs jobs from the queue until SIGTERM.
#[derive(Parser, Debug)]
#[command(name = "etappe-worker", version, about, subcommand_negates_reqs = true)]
struct Args {
    #[command(subcommand)]
    command: Option<WorkerCommand>,
    /// PostgreSQL URL; unset: SQLite under the data directory (one machine only).
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// Directory of the embedded SQLite database.
    #[arg(long, env = "ETAPPE_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// RabbitMQ URL; a worker process needs a shared queue.
    #[arg(long, env = "AMQP_URL")]
    amqp_url: Option<String>,
    /// Redis URL for live progress; unset: progress is not shared.
    #[arg(long, env = "REDIS_URL")]
    redis_url: Option<String>,
    /// Prefix of queue names and Redis keys.
    #[arg(long, env = "ETAPPE_QUEUE_PREFIX", default_value = "etappe")]
    queue_prefix: String,
    /// Hosts a source link may name over http and on private addresses (comma-separated).
    #[arg(long, env = "ETAPPE_ALLOWED_SOURCE_HOSTS", value_delimiter = ',')]
    allowed_source_hosts: Vec<String>,
    /// Proxy for fetching source links (`http://host:port`, CONNECT); unset: none, and the
    /// proxy variables of the environment are ignored.
    #[arg(long, env = "ETAPPE_FETCH_PROXY")]
    fetch_proxy: Option<String>,
    /// Jobs run at once (the queue prefetch).
    #[arg(long, env = "ETAPPE_WORKER_CONCURRENCY", default_value_t = 2)]
    concurrency: u16,
    /// Milliseconds before a failed job's first retry (then 5× and 30×; on RabbitMQ rounded
    /// up to the delay queues of 1 s, 5 s and 30 s).
    #[arg(long, env = "ETAPPE_RETRY_UNIT_MS", default_value_t = 1000)]
    retry_unit_ms: u64,
    /// Address of `/metrics`, `/livez`, `/readyz`.
    #[arg(long, env = "ETAPPE_WORKER_ADDR", default_value = "127.0.0.1:9091")]
    addr: SocketAddr,
    #[command(flatten)]
    upstreams: etappe_workers::upstreams::UpstreamSettings,
    /// Log filter.
    #[arg(long, env = "ETAPPE_LOG", default_value = "info")]
    log: String,
    /// OTLP/HTTP collector endpoint.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    otel_endpoint: Option<String>,
}

#[derive(Subcommand, Debug)]
enum WorkerCommand {
    /// Probe this worker's /livez or /readyz (exit 0 on 200, else 1; 2 s at most), for
    /// container health checks.
    Health {
        /// Ask /livez: the process runs (the default).
        #[arg(long)]
        live: bool,
        /// Ask /readyz: the worker reaches its database and queue.
        #[arg(long)]
        ready: bool,
        /// The worker to ask (host:port); default: ETAPPE_WORKER_ADDR, on loopback if it is
        /// a wildcard.
        #[arg(long = "addr", value_name = "HOST:PORT")]
        target: Option<String>,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(WorkerCommand::Health {
        live,
        ready,
        target,
    }) = &args.command
    {
        return Ok(etappe_workers::health::run(target.as_deref(), args.addr, *live, *ready).await?);
    }
    let Some(amqp_url) = args.amqp_url.filter(|u| !u.is_empty()) else {
        anyhow::bail!("AMQP_URL is required: a worker process takes its jobs from a shared queue");
    };
    let _telemetry =
        etappe_workers::telemetry::init("etappe-worker", &args.log, args.otel_endpoint.as_deref())?;
    let store = open_store(args.database_url.as_deref(), &args.data_dir, 8).await?;
    let settings = WorkSettings {
        amqp_url: Some(amqp_url),
        redis_url: args.redis_url,
        queue_prefix: args.queue_prefix,
        allowed_source_hosts: args.allowed_source_hosts,
        fetch_proxy: args.fetch_proxy,
        fetch_hooks: etappe_workers::fetch::FetchHooks::default(),
        concurrency: args.concurrency,
        upstreams: args.upstreams,
        retry_unit: std::time::Duration::from_millis(args.retry_unit_ms.max(1)),
    };
    let work = open_work(&settings, store).await?;
    run_worker_process(work, args.addr).await?;
    Ok(())
}
