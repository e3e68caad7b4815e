//! The composition root: opens the backend the configuration names (SQLite by default,
//! PostgreSQL with `DATABASE_URL`), wires the services, and runs the HTTP server until told
//! to stop. `main` and the end-to-end tests start Etappe the same way.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use etappe_events::{Store, StoreError};
use etappe_workers::fleet::Database;
use tokio::net::TcpListener;

use crate::config::Config;
use crate::runtime::{Background, RuntimeError, WorkHandles, open_work};
use etappe_app::accounts::{Accounts, WebOrigin};
use etappe_app::identity::{Identity, IdentityDb, IdentityError, Scope};
use etappe_app::trips::TripService;
use etappe_app::{App, AppParts};

/// Why Etappe could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("event store: {0}")]
    Store(#[from] StoreError),
    #[error("identity: {0}")]
    Identity(#[from] IdentityError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("{0}")]
    Config(String),
    #[error("mail: {0}")]
    Mail(#[from] etappe_mail::MailError),
    #[error("{0}")]
    App(String),
}

/// The opened backend: the event store with its read models, and the identity tables.
#[derive(Debug)]
pub struct Backend {
    /// The database itself (the store and the local OpenStreetMap index live in it).
    pub database: Database,
    pub store: Arc<dyn Store>,
    pub identity: Identity,
    /// True for the embedded default (SQLite under the data directory).
    pub embedded: bool,
}

/// Opens (and migrates) the database the configuration names, the one way both binaries do.
pub async fn open_backend(config: &Config) -> Result<Backend, StartupError> {
    let database = Database::open(&config.work, config.db_max_connections).await?;
    let identity = Identity::new(match &database {
        Database::Postgres(store) => IdentityDb::Postgres(store.pool().clone()),
        Database::Sqlite(store) => IdentityDb::Sqlite(store.pool().clone()),
    });
    Ok(Backend {
        store: database.store(),
        database: database.clone(),
        identity,
        embedded: database.is_embedded(),
    })
}

/// A running Etappe, bound to its port.
#[derive(Debug)]
pub struct Application {
    listener: TcpListener,
    app: App,
    local_token: Option<String>,
    login_url: Option<String>,
    background: Background,
}

impl Application {
    /// Opens the backend, creates the local user on a first embedded start, and binds.
    pub async fn build(config: &Config) -> Result<Self, StartupError> {
        crate::telemetry::install_tls_provider();
        // Refused before anything is opened or created: off loopback the public URL is
        // required (on loopback the bound port completes the default below).
        config
            .public_base(config.addr)
            .map_err(StartupError::Config)?;
        let backend = open_backend(config).await?;
        let local_token = if backend.embedded {
            first_start(config, &backend.identity).await?
        } else {
            None
        };
        let work: WorkHandles = open_work(&config.work.settings(), &backend.database).await?;
        let background = Background::start(config, &work).await?;
        let budgets = Arc::new(
            etappe_app::budgets::Budgets::new(
                config.budgets,
                work.redis.clone(),
                &config.work.queue_prefix,
            )
            .with_metrics(Arc::clone(&work.metrics)),
        );
        // Bound before the App is built: on loopback the public base defaults to the
        // address actually bound (port 0 in tests).
        let listener = TcpListener::bind(config.addr).await?;
        let base = config
            .public_base(listener.local_addr()?)
            .map_err(StartupError::Config)?;
        let identity = Arc::new(backend.identity);
        let mailer: Arc<dyn etappe_mail::Mailer> = match &config.people.smtp_url {
            Some(url) => Arc::new(etappe_mail::SmtpMailer::new(url, &config.people.mail_from)?),
            None => Arc::new(etappe_mail::FileMailbox::new(
                config.mailbox_dir(),
                &config.people.mail_from,
            )?),
        };
        let fetcher = work
            .document_fetcher(etappe_app::authorization::CIMD_LIMITS)
            .map_err(
                |e| tracing::warn!(error = %e, "oauth: no fetcher for client metadata documents"),
            )
            .ok();
        let authorization = Arc::new(etappe_app::authorization::AuthorizationService::new(
            Arc::clone(&identity),
            fetcher,
            config.work.allowed_source_hosts.clone(),
            Arc::clone(&budgets),
            config.oauth,
        ));
        let agents_of = Arc::clone(&authorization);
        let accounts = Accounts::new(
            Arc::clone(&identity),
            Arc::clone(&backend.store),
            mailer,
            Arc::clone(&budgets),
            config.people.clone(),
            WebOrigin::of(&base, &config.hosts().allowed_origins),
        )
        .with_agents(Arc::new(move |user| {
            let authorization = Arc::clone(&agents_of);
            Box::pin(async move {
                let agents = authorization
                    .agents(user)
                    .await
                    .map_err(|e| etappe_app::AppError::Unavailable(e.to_string()))?;
                Ok(agents
                    .into_iter()
                    .filter_map(|a| serde_json::to_value(a).ok())
                    .collect())
            })
        }));
        let app = App::new(AppParts {
            trips: TripService::new(
                Arc::clone(&backend.store),
                config.work.allowed_source_hosts.clone(),
            )
            .with_budgets(Arc::clone(&budgets))
            .with_upstreams(work.upstreams.clone())
            .with_metrics(Arc::clone(&work.metrics)),
            exports: etappe_app::exports::ExportService::new(Arc::clone(&backend.store)),
            identity,
            accounts,
            authorization,
            work,
            public_url: config.public_url.clone(),
            hosts: config.hosts(),
            budgets,
            limits: config.server,
        });
        let login_url = if backend.embedded {
            local_login_url(&app).await?
        } else {
            None
        };
        Ok(Self {
            listener,
            app,
            local_token,
            login_url,
            background,
        })
    }

    /// The address actually bound (tests bind port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The application (tests use it to mint users and tokens).
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The token created for the local user on a first embedded start.
    pub fn local_token(&self) -> Option<&str> {
        self.local_token.as_deref()
    }

    /// A one-time login URL for the local user, made at every embedded start (valid for
    /// the link lifetime), so that starting the server and opening it logs one in.
    pub fn login_url(&self) -> Option<&str> {
        self.login_url.as_deref()
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight.
    pub async fn run_until_stopped(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let limits = self.app.limits();
        let served = crate::server::serve(self.listener, routes(self.app), limits, shutdown).await;
        self.background.shutdown().await;
        served
    }
}

/// Every transport over the one application, wrapped in the layers every request passes
/// through. The transports are siblings: each takes the `App`, none knows another.
pub fn routes(app: App) -> axum::Router {
    let limits = app.limits();
    let metrics = std::sync::Arc::clone(&app.work().metrics);
    let transports = crate::mcp::router(app.clone())
        .merge(crate::oauth::router(app.clone()))
        .merge(crate::web::router(app.clone()))
        .merge(crate::http::router(app.clone()))
        .layer(axum::middleware::from_fn_with_state(
            app,
            crate::web::share_page,
        ));
    crate::request_layers::wrap(transports, limits, metrics)
}

/// The login link of `local@localhost`, when that user exists (the embedded default's).
async fn local_login_url(app: &App) -> Result<Option<String>, StartupError> {
    if app.identity().user_by_email(LOCAL_USER).await?.is_none() {
        return Ok(None);
    }
    app.accounts()
        .login_url_for(LOCAL_USER)
        .await
        .map(Some)
        .map_err(|e| StartupError::App(e.to_string()))
}

/// The user a first embedded start creates.
pub const LOCAL_USER: &str = "local@localhost";

/// On the very first embedded start, creates `local@localhost` with a full-scope token,
/// saves the token under the data directory (readable by the owner only) and answers it.
async fn first_start(config: &Config, identity: &Identity) -> Result<Option<String>, StartupError> {
    if identity.user_count().await? > 0 {
        return Ok(None);
    }
    let user = identity.ensure_user(LOCAL_USER).await?;
    let token = identity
        .create_token(user, &Scope::ALL, "first start")
        .await?;
    let path = config.local_token_path();
    // Created 0600: the token is never readable by others, not even for an instant.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    std::io::Write::write_all(&mut file, format!("{token}\n").as_bytes())?;
    Ok(Some(token))
}
