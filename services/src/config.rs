//! Configuration: every setting is a flag and an environment variable, each with a default,
//! so that `etappe` with nothing set runs on the embedded defaults.
//!
//! A leaf of the crate: it imports nothing from the rest of it (the settings of the server,
//! the budgets, the admitted hosts and people's login are the application's, declared in
//! [`etappe_app::settings`] and flattened here), so every module may read its settings from here.

pub use etappe_app::settings::{
    BudgetSettings, HostSettings, OAuthSettings, PeopleSettings, ServerLimits,
};

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use etappe_workers::flags::WorkFlags;

/// Settings shared by every `etappe` command.
#[derive(Args, Clone, Debug)]
pub struct Config {
    /// Where the store, queue and Redis are and how workers run (shared with `etappe-worker`).
    #[command(flatten)]
    pub work: WorkFlags,

    /// Address the HTTP server listens on.
    #[arg(long, env = "ETAPPE_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Largest number of database connections the API holds.
    #[arg(long, env = "ETAPPE_DB_MAX_CONNECTIONS", default_value_t = 16)]
    pub db_max_connections: u32,

    /// Run workers inside the API process. Default: yes on the embedded queue, no with
    /// `AMQP_URL` (then run `etappe worker` or `etappe-worker` processes).
    #[arg(long, env = "ETAPPE_IN_PROCESS_WORKERS")]
    pub in_process_workers: Option<bool>,

    /// Public base URL of the server (`https://etappe.example`): share and login links,
    /// the cookie's security (`Secure`, `__Host-` under https) and the origin writes must
    /// come from derive from it. Required when ETAPPE_ADDR is not a loopback address; on
    /// loopback it defaults to `http://<address>`.
    #[arg(long, env = "ETAPPE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Host names `/mcp` answers besides loopback and the public URL's (comma-separated).
    #[arg(long, env = "ETAPPE_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser origins allowed to call `/mcp` besides loopback and the public URL's
    /// (comma-separated, `http://host:*` for any port); others are refused.
    #[arg(long, env = "ETAPPE_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub mcp_allowed_origins: Vec<String>,
    /// The HTTP server's deadlines and connection cap.
    #[command(flatten)]
    pub server: ServerLimits,
    /// Request budgets per caller (REST and MCP share them).
    #[command(flatten)]
    pub budgets: BudgetSettings,
    /// The authorization server's token lifetimes and rate limits.
    #[command(flatten)]
    pub oauth: OAuthSettings,
    /// Login by magic link: mail, lifetimes, rate limits.
    #[command(flatten)]
    pub people: PeopleSettings,
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
            work: WorkFlags::embedded(data_dir),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            db_max_connections: 16,
            in_process_workers: None,
            public_url: None,
            mcp_allowed_hosts: Vec::new(),
            mcp_allowed_origins: Vec::new(),
            server: ServerLimits::default(),
            budgets: BudgetSettings::default(),
            oauth: OAuthSettings::default(),
            people: PeopleSettings::default(),
        }
    }

    /// Whether this process runs workers.
    pub fn runs_workers(&self) -> bool {
        self.in_process_workers
            .unwrap_or(self.work.settings().amqp_url.is_none())
    }

    /// The server's public base URL (no trailing slash): `ETAPPE_PUBLIC_URL`, else
    /// `http://<bound>` when the server listens on loopback; an error naming the setting
    /// otherwise (links and cookies cannot be built on a guess).
    pub fn public_base(&self, bound: SocketAddr) -> Result<url::Url, String> {
        if let Some(text) = self.public_url.as_deref() {
            let url = url::Url::parse(text.trim())
                .map_err(|e| format!("ETAPPE_PUBLIC_URL is not a URL ({e}): {text:?}"))?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(format!(
                    "ETAPPE_PUBLIC_URL must be an http or https URL with a host: {text:?}"
                ));
            }
            return Ok(url);
        }
        if !self.addr.ip().is_loopback() {
            return Err(format!(
                "ETAPPE_PUBLIC_URL is required when listening on {} (not a loopback address): \
                 login links, cookie security and the issuer derive from it, e.g. ETAPPE_PUBLIC_URL=https://etappe.example",
                self.addr
            ));
        }
        url::Url::parse(&format!("http://{bound}")).map_err(|e| e.to_string())
    }

    /// Where the file mailbox keeps mail when no SMTP server is configured.
    pub fn mailbox_dir(&self) -> PathBuf {
        self.work.data_dir.join("mailbox")
    }

    /// Where the first start leaves the local user's token.
    pub fn local_token_path(&self) -> PathBuf {
        self.work.data_dir.join("local-token")
    }
}
