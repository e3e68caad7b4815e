//! The `etappe` command line: the API server (the default command) and the operator
//! commands (`osm import`, `elevation import`, `mail`, `projections`, `token`, `health`),
//! parsed with clap and handed to the library's services.

use anyhow::Context;
use clap::{Parser, Subcommand};
use etappe_app::identity::Scope;
use etappe_osm_index::{IndexDb, LocalIndex};
use etappe_services::config::Config;
use etappe_services::startup::{Application, open_backend};
use etappe_services::telemetry;
use etappe_workers::flags::HealthFlags;
use etappe_workers::fleet::Database;

/// Etappe plans multi-day bicycle trips.
#[derive(Parser, Debug)]
#[command(name = "etappe", version, about)]
struct Cli {
    #[command(flatten)]
    config: Config,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the API server (the default).
    Serve,
    /// Run a worker process (needs AMQP_URL): jobs from the queue until SIGTERM.
    Worker,
    /// Probe this server's /livez or /readyz (exit 0 on 200, else 1; 2 s at most), for
    /// container health checks.
    Health(HealthFlags),
    /// Apply the database migrations and exit.
    Migrate,
    /// The job queue (RabbitMQ).
    Jobs {
        #[command(subcommand)]
        action: JobsAction,
    },
    /// Read models.
    Projections {
        #[command(subcommand)]
        action: ProjectionsAction,
    },
    /// Personal access tokens.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
    /// The file mailbox of the embedded default (`<data dir>/mailbox/`).
    Mail {
        #[command(subcommand)]
        action: MailAction,
    },
    /// The local OpenStreetMap index the route analysis reads offline.
    Osm {
        #[command(subcommand)]
        action: OsmAction,
    },
    /// The SRTM elevation tiles that give routes without elevation their heights offline.
    Elevation {
        #[command(subcommand)]
        action: ElevationAction,
    },
}

#[derive(Subcommand, Debug)]
enum ElevationAction {
    /// Load SRTM tiles (`N47E009.hgt`: 1201² or 3601² big-endian samples, named after the
    /// south-west corner) into the database; each replaces the stored tile of its name. All
    /// files are checked before any is written.
    Import {
        /// The `.hgt` files.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
    },
    /// What is loaded: each tile's name, resolution and import time.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum OsmAction {
    /// Load an extract (a Geofabrik-style `.osm.pbf`) into the database; it replaces the
    /// dataset of the same file name once complete, other names stay beside it.
    Import {
        /// The `.osm.pbf` file.
        file: std::path::PathBuf,
        /// Load it even if it holds no point, road or ferry the analysis reads (an empty
        /// region answers "nothing here" along every route inside it).
        #[arg(long)]
        allow_empty: bool,
    },
    /// What is loaded: each dataset's name, box, counts and import time.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum MailAction {
    /// Print the newest message (a login link, most often).
    Last,
}

#[derive(Subcommand, Debug)]
enum JobsAction {
    /// Move dead-lettered jobs back to the jobs queue, once their cause is fixed; prints how
    /// many moved.
    ReplayDeadLetters {
        /// At most this many.
        #[arg(long, default_value_t = 1000)]
        limit: u64,
    },
}

#[derive(Subcommand, Debug)]
enum ProjectionsAction {
    /// Replay the whole event log into fresh read models.
    Rebuild,
}

#[derive(Subcommand, Debug)]
enum TokenAction {
    /// Create a token (and the user, if new); prints the token once.
    Create {
        /// The user's e-mail address.
        #[arg(long)]
        email: String,
        /// Comma-separated scopes: trips:read, trips:write.
        #[arg(long, value_delimiter = ',', default_value = "trips:read,trips:write")]
        scopes: Vec<Scope>,
        /// A label to recognise the token by.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// Revoke a token: it stops working at once, on every replica.
    Revoke {
        /// The token, in full (`etp_…`); `-` reads it from standard input.
        token: String,
    },
}

/// Parses the command line and runs the command (the server when none is given).
pub(crate) async fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config = cli.config;
    if let Some(Command::Health(health)) = &cli.command {
        // Before telemetry: a probe runs every few seconds and must stay quiet and quick.
        return Ok(health.run(config.addr).await?);
    }
    let _telemetry = telemetry::init(
        "etappe",
        &config.work.log,
        &config.work.log_format,
        config.work.otel_endpoint.as_deref(),
    )?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(&config).await,
        Command::Worker => {
            let database = Database::open(&config.work, 8).await?;
            let work =
                etappe_services::runtime::open_work(&config.work.settings(), &database).await?;
            etappe_workers::fleet::run_worker_process(work, config.work.worker_addr).await?;
            Ok(())
        }
        Command::Health(_) => Ok(()),
        Command::Jobs {
            action: JobsAction::ReplayDeadLetters { limit },
        } => {
            let database = Database::open(&config.work, 2).await?;
            let work =
                etappe_services::runtime::open_work(&config.work.settings(), &database).await?;
            let waiting = work.queue.dead_lettered().await?;
            let moved = work.queue.replay_dead_letters(limit).await?;
            println!("replayed {moved} of {waiting} dead-lettered jobs");
            Ok(())
        }
        Command::Migrate => {
            // The one process that migrates, whatever ETAPPE_MIGRATE_ON_START says.
            let mut config = config;
            config.work.migrate_on_start = true;
            open_backend(&config).await.context("migrating")?;
            println!("migrations applied");
            Ok(())
        }
        Command::Projections {
            action: ProjectionsAction::Rebuild,
        } => {
            let backend = open_backend(&config).await?;
            let report = backend.store.rebuild_projections().await?;
            println!(
                "rebuilt {} trip read models from {} events",
                report.trips, report.events
            );
            Ok(())
        }
        Command::Token {
            action:
                TokenAction::Create {
                    email,
                    scopes,
                    label,
                },
        } => {
            let backend = open_backend(&config).await?;
            let user = backend.identity.ensure_user(&email).await?;
            let token = backend.identity.create_token(user, &scopes, &label).await?;
            println!("{token}");
            Ok(())
        }
        Command::Mail {
            action: MailAction::Last,
        } => {
            let dir = config.mailbox_dir();
            match etappe_mail::last_message(&dir)? {
                Some((path, message)) => {
                    // The headers a person reads, then the body decoded (the builder
                    // quotes long lines, which would break the link).
                    println!("{}\n", path.display());
                    for line in message.lines().take_while(|l| !l.is_empty()) {
                        let name = line.split(':').next().unwrap_or_default();
                        if ["From", "To", "Subject", "Date"].contains(&name) {
                            println!("{line}");
                        }
                    }
                    println!("\n{}", etappe_mail::body_of(&message).trim_end());
                    Ok(())
                }
                None if config.people.smtp_url.is_some() => anyhow::bail!(
                    "no mail in {}: with ETAPPE_SMTP_URL set, mail goes to the SMTP server",
                    dir.display()
                ),
                None => anyhow::bail!("no mail in {} yet", dir.display()),
            }
        }
        Command::Osm { action } => osm(&config, action).await,
        Command::Elevation { action } => elevation(&config, action).await,
        Command::Token {
            action: TokenAction::Revoke { token },
        } => {
            let token = if token == "-" {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line)?;
                line
            } else {
                token
            };
            let backend = open_backend(&config).await?;
            if backend.identity.revoke_token(&token).await? {
                println!("revoked");
                Ok(())
            } else {
                anyhow::bail!("no live token matches: it is unknown or already revoked")
            }
        }
    }
}

/// The index lives in the configured database (DATABASE_URL or the embedded SQLite).
async fn osm(config: &Config, action: OsmAction) -> anyhow::Result<()> {
    let index_db = match Database::open(&config.work, 4)
        .await
        .context("opening the database")?
    {
        Database::Postgres(store) => IndexDb::Postgres(store.pool().clone()),
        Database::Sqlite(store) => IndexDb::Sqlite(store.pool().clone()),
    };
    match action {
        OsmAction::Import { file, allow_empty } => {
            let shown = file.display().to_string();
            let mut show = |p: &etappe_osm_index::Progress| {
                eprintln!(
                    "{shown}: pass {}/{}, {:.1} of {:.1} MB ({:.0} %), {} features kept, {:.0} s",
                    p.pass,
                    p.passes,
                    p.bytes_read as f64 / 1e6,
                    p.total_bytes as f64 / 1e6,
                    p.percent(),
                    p.kept,
                    p.elapsed.as_secs_f64()
                );
            };
            let options = etappe_osm_index::ImportOptions { allow_empty };
            let report =
                etappe_osm_index::import_with(&index_db, &file, &options, &mut show).await?;
            let seconds = report.elapsed.as_secs_f64().max(1e-3);
            println!(
                "imported {:?}: {} points, {} road ways, {} ferry lines from {:.1} MB in {seconds:.1} s ({:.1} MB/s)",
                report.name,
                report.points,
                report.ways,
                report.ferries,
                report.input_bytes as f64 / 1e6,
                report.input_bytes as f64 / 1e6 / seconds
            );
            Ok(())
        }
        OsmAction::Status { json } => {
            let datasets = LocalIndex::new(index_db).status().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&datasets)?);
            } else if datasets.is_empty() {
                println!(
                    "no OpenStreetMap index is loaded; run `etappe osm import <file.osm.pbf>`"
                );
            } else {
                for d in &datasets {
                    println!(
                        "{}: {} points, {} road ways, {} ferry lines; box {:.4},{:.4} to {:.4},{:.4} (S,W to N,E); {:.1} MB from {}, imported {}",
                        d.name,
                        d.points,
                        d.ways,
                        d.ferries,
                        d.bbox.south,
                        d.bbox.west,
                        d.bbox.north,
                        d.bbox.east,
                        d.input_bytes as f64 / 1e6,
                        d.source_path,
                        d.imported_at.format("%Y-%m-%d %H:%M UTC")
                    );
                }
            }
            Ok(())
        }
    }
}

/// The tiles live in the configured database (DATABASE_URL or the embedded SQLite).
async fn elevation(config: &Config, action: ElevationAction) -> anyhow::Result<()> {
    let db = Database::open(&config.work, 4)
        .await
        .context("opening the database")?
        .elevation_tiles();
    let arc_seconds = |samples: usize| if samples == 3601 { 1 } else { 3 };
    match action {
        ElevationAction::Import { files } => {
            let report = etappe_elevation::import(&db, &files).await?;
            for t in &report.tiles {
                let heights = match (t.lowest_m, t.highest_m) {
                    (Some(low), Some(high)) => format!("heights {low} to {high} m"),
                    _ => "no heights (all voids)".to_owned(),
                };
                let samples = (t.samples * t.samples) as f64;
                println!(
                    "imported {}: {}×{} samples ({}″), {heights}, {:.2} % voids, {:.1} MB from {}",
                    t.name,
                    t.samples,
                    t.samples,
                    arc_seconds(t.samples),
                    t.voids as f64 * 100.0 / samples,
                    t.bytes as f64 / 1e6,
                    t.path.display()
                );
            }
            let c = report.coverage;
            println!(
                "{} tile{} within {},{} to {},{} (S,W to N,E) in {:.1} s",
                report.tiles.len(),
                if report.tiles.len() == 1 { "" } else { "s" },
                c.south,
                c.west,
                c.north,
                c.east,
                report.elapsed.as_secs_f64()
            );
            Ok(())
        }
        ElevationAction::Status { json } => {
            let tiles = etappe_elevation::status(&db).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tiles)?);
            } else if tiles.is_empty() {
                println!(
                    "no elevation tiles are loaded; run `etappe elevation import <N47E009.hgt …>`"
                );
            } else {
                for t in &tiles {
                    let samples = usize::try_from(t.samples).unwrap_or_default();
                    println!(
                        "{}: {}×{} samples ({}″), {:.1} MB, imported {}",
                        t.name,
                        t.samples,
                        t.samples,
                        arc_seconds(samples),
                        t.bytes as f64 / 1e6,
                        t.imported_at.format("%Y-%m-%d %H:%M UTC")
                    );
                }
            }
            Ok(())
        }
    }
}

async fn serve(config: &Config) -> anyhow::Result<()> {
    let app = Application::build(config)
        .await
        .context("starting Etappe")?;
    let addr = app.local_addr()?;
    if let Some(token) = app.local_token() {
        println!(
            "First start: created the user local@localhost with a token for trips:read and trips:write:\n\n  {token}\n\n\
             It is also saved in {}. Use it as: Authorization: Bearer <token>",
            config.local_token_path().display()
        );
    }
    if let Some(url) = app.login_url() {
        // A fresh link at every embedded start: `cargo run --release`, open it, logged in.
        println!(
            "Log in as {} (this link works once, for {} minutes):\n\n  {url}\n",
            etappe_services::startup::LOCAL_USER,
            config.people.login_link_ttl_secs.div_ceil(60)
        );
    }
    println!("Etappe is listening on http://{addr} (OpenAPI at /openapi.json)");
    app.run_until_stopped(async {
        etappe_workers::fleet::shutdown_signal().await;
        tracing::info!("shutting down");
    })
    .await?;
    Ok(())
}
