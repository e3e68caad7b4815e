//! `etappe-bench`: the measurements reported in the README, reproducible on any machine.
//!
//! - `appends`: durable single-event appends per second through the event store, with N
//!   concurrent clients, on PostgreSQL (`DATABASE_URL`) or the embedded SQLite.
//! - `patch`: REST command latency of `PATCH /trips/{id}` at a fixed request rate (open
//!   loop: latency is measured from when each request was due, so a slow server cannot hide
//!   its queueing), against the real application started in this process.
//! - `route`: time from `POST /trips` to `partial: false` for a synthetic route served on
//!   loopback, in process or on the servers with separate worker processes.
//! - `plan`: a plan from places on a real Valhalla built from an extract: tile build time
//!   and size, `POST /trips` with the plan to `partial: false`, elevation calls per 100 km.
//! - `nights`: the pacer placing nights at accommodation over a long route with beds every
//!   so many kilometres: time, and the share of nights at a bed within the tolerance.
//! - `exports`, `streams`, `half-open`: the server's defences (`etappe_bench::server`).
//! - `mcp`: latency of the agent surface, `tools/call` of `get_trip` then of `edit_stages`
//!   (relabelling a day, with the version each answer carries) through `/mcp`, open loop at
//!   a fixed rate over trips whose days exist, one user per trip; refusals (the per-user rate
//!   limits, stale versions) and JSON-RPC errors are counted apart from the latencies.

use clap::{Parser, Subcommand};
use etappe_bench as bench;

#[derive(Parser, Debug)]
#[command(name = "etappe-bench", about = "Etappe's benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Memory and time of parallel anonymous GPX exports of one large shared trip.
    Exports {
        /// Points of the trip (2.5 m apart).
        #[arg(long, default_value_t = 800_000)]
        points: usize,
        /// Exports at once.
        #[arg(long, default_value_t = 16)]
        parallel: usize,
    },
    /// CPU of idle live streams (SSE) on one trip.
    Streams {
        /// Streams held open.
        #[arg(long, default_value_t = 400)]
        count: usize,
        /// How long they are watched.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
    },
    /// How long a connection with half-sent request headers is held.
    HalfOpen,
    /// Durable single-event appends per second.
    Appends {
        /// Concurrent clients.
        #[arg(long, default_value_t = 1)]
        clients: usize,
        /// How long to run.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Use the embedded SQLite store even when DATABASE_URL is set.
        #[arg(long)]
        sqlite: bool,
    },
    /// Time from POST /trips to partial: false for a synthetic route served on loopback.
    Route(bench::route::Options),
    /// Nights at accommodation placed over a long route.
    Nights {
        /// The route's length, km.
        #[arg(long, default_value_t = 1000.0)]
        km: f64,
        /// Days (nights are one fewer).
        #[arg(long, default_value_t = 31)]
        days: usize,
        /// A bed about every so many km.
        #[arg(long, default_value_t = 20.0)]
        bed_every: f64,
        /// Placements timed.
        #[arg(long, default_value_t = 200)]
        runs: usize,
    },
    /// A plan from places on a real Valhalla (tests/valhalla/install.sh) built from an extract.
    Plan {
        /// The OpenStreetMap extract the tiles are built from.
        #[arg(
            long,
            default_value = "tests/fixtures/osm/liechtenstein-2013-08-03.osm.pbf"
        )]
        extract: std::path::PathBuf,
        /// The places, "lat,lon;lat,lon;…" (from, via…, to).
        #[arg(
            long,
            default_value = "47.0666,9.5035;47.1135,9.5999;47.1410,9.5209;47.1650,9.5087;47.2380,9.5254;47.2180,9.5442;47.2312,9.5468"
        )]
        places: String,
        /// Repetitions.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// The straight-line length one routing request may span, km.
        #[arg(long, default_value_t = 400.0)]
        max_leg_km: f64,
    },
    /// PATCH /trips/{id} latency at a fixed rate.
    Patch {
        /// Requests per second.
        #[arg(long, default_value_t = 500)]
        rate: u64,
        /// How long to run.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
        /// Trips the requests are spread over.
        #[arg(long, default_value_t = 50)]
        trips: usize,
        /// Use the embedded SQLite store even when DATABASE_URL is set.
        #[arg(long)]
        sqlite: bool,
    },
    /// POST /oauth/token latency (code exchanges, then refreshes) at a fixed rate.
    Oauth {
        /// Requests per second, in each phase.
        #[arg(long, default_value_t = 100)]
        rate: u64,
        /// How long each phase runs.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Use the embedded SQLite store even when DATABASE_URL is set.
        #[arg(long)]
        sqlite: bool,
    },
    /// MCP tools/call latency of get_trip and edit_stages at a fixed rate.
    Mcp {
        /// Calls per second, in each phase.
        #[arg(long, default_value_t = 20)]
        rate: u64,
        /// How long each phase (get_trip, then edit_stages) runs.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Trips the calls are spread over, each with its own user.
        #[arg(long, default_value_t = 20)]
        trips: usize,
        /// Use the embedded SQLite store even when DATABASE_URL is set.
        #[arg(long)]
        sqlite: bool,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    etappe_services::telemetry::install_tls_provider();
    match Cli::parse().command {
        Command::Exports { points, parallel } => bench::server::exports(points, parallel).await,
        Command::Streams { count, seconds } => bench::server::streams(count, seconds).await,
        Command::Nights {
            km,
            days,
            bed_every,
            runs,
        } => {
            bench::nights::run(km, days, bed_every, runs);
            Ok(())
        }
        Command::HalfOpen => bench::server::half_open().await,
        Command::Appends {
            clients,
            seconds,
            sqlite,
        } => bench::appends::run(clients, seconds, sqlite).await,
        Command::Patch {
            rate,
            seconds,
            trips,
            sqlite,
        } => bench::patch::run(rate, seconds, trips, sqlite).await,
        Command::Route(options) => bench::route::run(options).await,
        Command::Plan {
            extract,
            places,
            runs,
            max_leg_km,
        } => bench::plan::run(&extract, &places, runs, max_leg_km).await,
        Command::Mcp {
            rate,
            seconds,
            trips,
            sqlite,
        } => bench::mcp::run(rate, seconds, trips, sqlite).await,
        Command::Oauth {
            rate,
            seconds,
            sqlite,
        } => bench::oauth::run(rate, seconds, sqlite).await,
    }
}
