//! `etappe-worker`: a worker process of the fleet (scale with `docker compose --scale`).

use clap::{Parser, Subcommand};
use etappe_workers::flags::{HealthFlags, WorkFlags};
use etappe_workers::fleet::{Database, open_work, run_worker_process};

/// Runs jobs from the queue until SIGTERM.
#[derive(Parser, Debug)]
#[command(name = "etappe-worker", version, about, subcommand_negates_reqs = true)]
struct Args {
    #[command(subcommand)]
    command: Option<WorkerCommand>,
    #[command(flatten)]
    work: WorkFlags,
}

#[derive(Subcommand, Debug)]
enum WorkerCommand {
    /// Probe this worker's /livez or /readyz (exit 0 on 200, else 1; 2 s at most), for
    /// container health checks.
    Health(HealthFlags),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let flags = args.work;
    if let Some(WorkerCommand::Health(health)) = &args.command {
        return Ok(health.run(flags.worker_addr).await?);
    }
    let settings = flags.settings();
    if settings.amqp_url.is_none() {
        anyhow::bail!("AMQP_URL is required: a worker process takes its jobs from a shared queue");
    }
    let _telemetry = etappe_infra::telemetry::init(
        "etappe-worker",
        &flags.log,
        &flags.log_format,
        flags.otel_endpoint.as_deref(),
    )?;
    let database = Database::open(&flags, 8).await?;
    let work = open_work(&settings, &database).await?;
    run_worker_process(work, flags.worker_addr).await?;
    Ok(())
}
