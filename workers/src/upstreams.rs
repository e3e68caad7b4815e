//! The third-party upstreams a deployment is configured with, composed once: a geocoder
//! (Nominatim), an accommodation source (Overpass) and a router (BRouter or Valhalla), each
//! optional, with the embedded defaults standing in (gazetteer, "unavailable", a straight
//! spur). Response caches live in Redis when it is configured, so replicas share them.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use etappe_upstream::{
    BRouterClient, MemoryCache, NominatimClient, OverpassClient, RateLimiter, ResponseCache,
    Router, ValhallaClient,
};
use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use tokio::sync::Mutex;

/// How each upstream is reached; every one unset means the embedded defaults.
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamSettings {
    /// Nominatim (or compatible) base URL for place search; unset: the embedded gazetteer.
    #[arg(long, env = "ETAPPE_NOMINATIM_URL")]
    pub nominatim_url: Option<String>,
    /// Overpass API base URL for accommodations; unset: none found, reported unavailable.
    #[arg(long, env = "ETAPPE_OVERPASS_URL")]
    pub overpass_url: Option<String>,
    /// Router for waypoint detours: brouter, valhalla, or offline (a straight spur).
    #[arg(long, env = "ETAPPE_ROUTER", default_value = "offline")]
    pub router: String,
    /// The router's base URL (with brouter or valhalla).
    #[arg(long, env = "ETAPPE_ROUTER_URL")]
    pub router_url: Option<String>,
    /// The User-Agent sent to upstreams (Nominatim's policy requires an identifying one).
    #[arg(
        long,
        env = "ETAPPE_USER_AGENT",
        default_value = "Etappe/0.1 (bicycle trip planner; operator contact in ETAPPE_USER_AGENT)"
    )]
    pub user_agent: String,
    /// Seconds an upstream call may take.
    #[arg(long, env = "ETAPPE_UPSTREAM_TIMEOUT_SECS", default_value_t = 5)]
    pub timeout_secs: u64,
}

impl Default for UpstreamSettings {
    fn default() -> Self {
        Self {
            nominatim_url: None,
            overpass_url: None,
            router: "offline".into(),
            router_url: None,
            user_agent: "Etappe/0.1 (bicycle trip planner)".into(),
            timeout_secs: 5,
        }
    }
}

/// Why the upstreams could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamSetupError {
    #[error("ETAPPE_ROUTER must be brouter, valhalla or offline; got {0:?}")]
    UnknownRouter(String),
    #[error("ETAPPE_ROUTER={0} needs ETAPPE_ROUTER_URL")]
    MissingRouterUrl(String),
    #[error("{0}")]
    Config(#[from] etappe_upstream::ConfigError),
    #[error("http client: {0}")]
    Client(String),
}

/// The configured upstreams.
#[derive(Debug, Clone)]
pub struct Upstreams {
    pub geocoder: Option<NominatimClient>,
    pub accommodations: Option<OverpassClient>,
    pub router: Router,
    /// The router's name as recorded on a detour.
    pub router_name: &'static str,
}

impl Default for Upstreams {
    fn default() -> Self {
        Self {
            geocoder: None,
            accommodations: None,
            router: Router::Offline,
            router_name: "offline",
        }
    }
}

impl Upstreams {
    /// Builds the clients the settings name; `cache` holds their answers.
    pub fn from_settings(
        settings: &UpstreamSettings,
        cache: &Arc<dyn ResponseCache>,
    ) -> Result<Self, UpstreamSetupError> {
        crate::telemetry::install_tls_provider();
        let timeout = Duration::from_secs(settings.timeout_secs.max(1));
        let client = reqwest::Client::builder()
            .user_agent(settings.user_agent.clone())
            .connect_timeout(timeout)
            .build()
            .map_err(|e| UpstreamSetupError::Client(e.to_string()))?;
        let set = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        let geocoder = match set(&settings.nominatim_url) {
            Some(url) => Some(NominatimClient::new(
                client.clone(),
                &url,
                &settings.user_agent,
                RateLimiter::nominatim_public(),
                Arc::clone(cache),
                timeout,
            )?),
            None => None,
        };
        let accommodations = match set(&settings.overpass_url) {
            // Overpass answers slowly by design: its own query timeout is 25 s.
            Some(url) => Some(OverpassClient::new(
                client.clone(),
                &url,
                Arc::clone(cache),
                timeout.max(Duration::from_secs(30)),
            )?),
            None => None,
        };
        let router_url = set(&settings.router_url);
        let router_client = client;
        let (router, router_name) = match (settings.router.as_str(), router_url) {
            ("offline" | "", _) => (Router::Offline, "offline"),
            ("brouter", Some(url)) => (
                Router::BRouter(BRouterClient::new(router_client, &url, timeout)?),
                "brouter",
            ),
            ("valhalla", Some(url)) => (
                Router::Valhalla(ValhallaClient::new(router_client, &url, timeout)?),
                "valhalla",
            ),
            ("brouter" | "valhalla", None) => {
                return Err(UpstreamSetupError::MissingRouterUrl(
                    settings.router.clone(),
                ));
            }
            (other, _) => return Err(UpstreamSetupError::UnknownRouter(other.to_owned())),
        };
        Ok(Self {
            geocoder,
            accommodations,
            router,
            router_name,
        })
    }
}

/// The cache the upstreams use: Redis when configured (shared by replicas), else memory.
pub fn response_cache(redis_url: Option<&str>, prefix: &str) -> Arc<dyn ResponseCache> {
    match redis_url
        .filter(|u| !u.is_empty())
        .and_then(|u| redis::Client::open(u).ok())
    {
        Some(client) => Arc::new(RedisCache {
            client,
            prefix: format!("{prefix}:upstream:"),
            connection: Mutex::new(None),
        }),
        None => Arc::new(MemoryCache::new(10_000)),
    }
}

/// Upstream answers in Redis, with their TTL. A Redis failure is a cache miss, never an
/// error: the upstream is asked instead.
pub struct RedisCache {
    client: redis::Client,
    prefix: String,
    connection: Mutex<Option<ConnectionManager>>,
}

impl std::fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCache")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisCache {
    async fn connection(&self) -> Option<ConnectionManager> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref() {
            return Some(c.clone());
        }
        let manager =
            tokio::time::timeout(Duration::from_secs(2), self.client.get_connection_manager())
                .await
                .ok()?
                .ok()?;
        *slot = Some(manager.clone());
        Some(manager)
    }
}

#[async_trait]
impl ResponseCache for RedisCache {
    async fn get(&self, key: &str) -> Option<String> {
        let mut connection = self.connection().await?;
        let key = format!("{}{key}", self.prefix);
        tokio::time::timeout(
            Duration::from_secs(1),
            connection.get::<_, Option<String>>(key),
        )
        .await
        .ok()?
        .ok()?
    }

    async fn put(&self, key: &str, value: &str, ttl: Duration) {
        let Some(mut connection) = self.connection().await else {
            return;
        };
        let key = format!("{}{key}", self.prefix);
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            connection.set_ex::<_, _, ()>(key, value, ttl.as_secs().max(1)),
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_router_needs_its_url_and_a_known_name() {
        let cache: Arc<dyn ResponseCache> = Arc::new(MemoryCache::new(10));
        let mut settings = UpstreamSettings {
            router: "valhalla".into(),
            ..UpstreamSettings::default()
        };
        assert!(matches!(
            Upstreams::from_settings(&settings, &cache),
            Err(UpstreamSetupError::MissingRouterUrl(_))
        ));
        settings.router = "osrm-ish".into();
        assert!(matches!(
            Upstreams::from_settings(&settings, &cache),
            Err(UpstreamSetupError::UnknownRouter(_))
        ));
        settings.router = "brouter".into();
        settings.router_url = Some("http://127.0.0.1:17777".into());
        let upstreams = Upstreams::from_settings(&settings, &cache).expect("configured");
        assert_eq!(upstreams.router_name, "brouter");
        assert!(upstreams.geocoder.is_none());
    }
}
