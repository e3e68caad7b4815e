//! The settings of the server's defences, the request budgets and the admitted hosts. Only
//! their values live here; the server, the budgets and the transports apply them.

use std::time::Duration;

/// How long the server waits for a request, its headers and its body, and how many
/// connections it holds at once.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct ServerLimits {
    /// Seconds a client may take to send a request's headers (then the connection closes).
    #[arg(long, env = "ETAPPE_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds a connection may stay silent (keep-alive between requests, or a stalled
    /// exchange) before it is closed.
    #[arg(long, env = "ETAPPE_IDLE_TIMEOUT_SECS", default_value_t = 60)]
    pub idle_timeout_secs: u64,
    /// Seconds a client may take to send a request's body (answered 408 after).
    #[arg(long, env = "ETAPPE_BODY_TIMEOUT_SECS", default_value_t = 60)]
    pub body_timeout_secs: u64,
    /// Connections served at once; more wait in the listen queue.
    #[arg(long, env = "ETAPPE_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,
    /// GPX uploads received and checked at once; more wait (their bodies unread) up to half
    /// the body deadline, then are answered 503 with Retry-After. Each costs about five times
    /// its file in memory while it is read and checked, so this bounds uploads' memory.
    #[arg(long, env = "ETAPPE_UPLOADS_AT_ONCE", default_value_t = 2)]
    pub uploads_at_once: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            header_timeout_secs: 10,
            idle_timeout_secs: 60,
            body_timeout_secs: 60,
            max_connections: 1024,
            uploads_at_once: 2,
        }
    }
}

impl ServerLimits {
    /// The body deadline as a duration (the router's layer reads it).
    pub fn body_timeout(&self) -> Duration {
        Duration::from_secs(self.body_timeout_secs.max(1))
    }
}

/// The sizes of the budgets (flags and environment variables).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct BudgetSettings {
    /// Reads a credential may make over REST in a minute (sized so the web page never meets it).
    #[arg(long, env = "ETAPPE_READS_PER_MINUTE", default_value_t = 1200)]
    pub reads_per_minute: usize,
    /// Changes a credential may make in a minute, REST and MCP together.
    #[arg(long, env = "ETAPPE_CHANGES_PER_MINUTE", default_value_t = 20)]
    pub changes_per_minute: usize,
    /// MCP calls a credential may make in a minute.
    #[arg(long, env = "ETAPPE_MCP_CALLS_PER_MINUTE", default_value_t = 60)]
    pub mcp_calls_per_minute: usize,
    /// Trips a user may create in a minute (every transport, every credential).
    #[arg(long, env = "ETAPPE_CREATIONS_PER_MINUTE", default_value_t = 10)]
    pub creations_per_minute: usize,
    /// Anonymous share reads one address may make in a minute.
    #[arg(long, env = "ETAPPE_SHARE_READS_PER_ADDRESS", default_value_t = 120)]
    pub share_reads_per_address: usize,
    /// Anonymous reads of one share code in a minute (all addresses together).
    #[arg(long, env = "ETAPPE_SHARE_READS_PER_CODE", default_value_t = 600)]
    pub share_reads_per_code: usize,
    /// Live event streams (SSE) one user may hold open at once.
    #[arg(long, env = "ETAPPE_STREAMS_PER_USER", default_value_t = 10)]
    pub streams_per_user: usize,
    /// Megabytes of uploaded GPX files kept per user (over it, an upload is 413).
    #[arg(long, env = "ETAPPE_UPLOAD_QUOTA_MB", default_value_t = 200)]
    pub upload_quota_mb: u64,
}

impl BudgetSettings {
    /// Budgets no caller reaches: for benchmarks, which measure the server, not its limits.
    pub fn unlimited() -> Self {
        Self {
            reads_per_minute: usize::MAX / 2,
            changes_per_minute: usize::MAX / 2,
            mcp_calls_per_minute: usize::MAX / 2,
            creations_per_minute: usize::MAX / 2,
            share_reads_per_address: usize::MAX / 2,
            share_reads_per_code: usize::MAX / 2,
            streams_per_user: usize::MAX / 2,
            upload_quota_mb: u64::MAX / (4 * 1024 * 1024),
        }
    }
}

impl Default for BudgetSettings {
    fn default() -> Self {
        Self {
            reads_per_minute: 1200,
            changes_per_minute: 20,
            mcp_calls_per_minute: 60,
            creations_per_minute: 10,
            share_reads_per_address: 120,
            share_reads_per_code: 600,
            streams_per_user: 10,
            upload_quota_mb: 200,
        }
    }
}

/// The `Host` and `Origin` values the server admits besides loopback: `/mcp` refuses any
/// other (DNS-rebinding protection) and share links are only built on an admitted host.
#[derive(Clone, Debug, Default)]
pub struct HostSettings {
    /// Host names (optionally with a port); loopback is always accepted.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call; any other `Origin` is refused.
    pub allowed_origins: Vec<String>,
}

/// The authorization server's lifetimes and rate limits (flags and environment variables).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct OAuthSettings {
    /// Seconds an agent's access token is valid (then it refreshes).
    #[arg(long, env = "ETAPPE_OAUTH_ACCESS_TTL_SECS", default_value_t = 900)]
    pub access_ttl_secs: u64,
    /// Token requests one address may make in a minute.
    #[arg(long, env = "ETAPPE_OAUTH_TOKENS_PER_MINUTE", default_value_t = 60)]
    pub tokens_per_minute: usize,
    /// Authorization requests one address may make in 5 minutes.
    #[arg(
        long,
        env = "ETAPPE_OAUTH_AUTHORIZE_PER_5_MINUTES",
        default_value_t = 30
    )]
    pub authorize_per_5_minutes: usize,
    /// Client registrations one address may make in an hour.
    #[arg(
        long,
        env = "ETAPPE_OAUTH_REGISTRATIONS_PER_HOUR",
        default_value_t = 20
    )]
    pub registrations_per_hour: usize,
    /// Client metadata documents fetched from one host in an hour.
    #[arg(long, env = "ETAPPE_OAUTH_CIMD_FETCHES_PER_HOUR", default_value_t = 60)]
    pub cimd_fetches_per_hour: usize,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            access_ttl_secs: 900,
            tokens_per_minute: 60,
            authorize_per_5_minutes: 30,
            registrations_per_hour: 20,
            cimd_fetches_per_hour: 60,
        }
    }
}

impl OAuthSettings {
    /// Limits no caller reaches (benchmarks).
    pub fn unlimited() -> Self {
        Self {
            tokens_per_minute: usize::MAX / 2,
            authorize_per_5_minutes: usize::MAX / 2,
            registrations_per_hour: usize::MAX / 2,
            cimd_fetches_per_hour: usize::MAX / 2,
            ..Self::default()
        }
    }
}
