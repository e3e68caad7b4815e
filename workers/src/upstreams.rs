//! The third-party upstreams a deployment is configured with, composed once: a geocoder
//! (Nominatim), an accommodation source (Overpass), a weather forecast (Open-Meteo) and a
//! router (BRouter or Valhalla), each optional, with the embedded defaults standing in
//! (gazetteer, "unavailable", a straight spur); terrain heights from the imported SRTM tiles
//! and the Open-Meteo elevation API, layered in that order. Response caches and the geocoder's request pace live in Redis when it is
//! configured, so replicas share them: together they ask Nominatim once a second at most.

use std::sync::Arc;
use std::time::Duration;

use etappe_upstream::{
    BRouterClient, CachedHttp, Elevations, Forecasts, LayeredElevations, MemoryCache,
    NominatimClient, OpenMeteoClient, OpenMeteoElevationClient, OsmFeatures, OverpassClient,
    RateLimiter, RedisCache, RedisPace, ResponseCache, Router, SharedPace, ValhallaClient,
};
use tokio::sync::Mutex;

use etappe_infra::redis_link::RedisLink;

/// How each upstream is reached; every one unset means the embedded defaults.
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamSettings {
    /// Nominatim (or compatible) base URL for place search; unset: the embedded gazetteer.
    #[arg(long, env = "ETAPPE_NOMINATIM_URL")]
    pub nominatim_url: Option<String>,
    /// Overpass API base URL for OpenStreetMap features along the route and places to
    /// sleep; unset: the local index when one is imported, else reported unavailable.
    #[arg(long, env = "ETAPPE_OVERPASS_URL")]
    pub overpass_url: Option<String>,
    /// Where OpenStreetMap features come from: `auto` (the local index when an extract is
    /// imported, else Overpass when configured), `local`, `overpass` or `none`.
    #[arg(long, env = "ETAPPE_OSM_SOURCE", default_value = "auto")]
    pub osm_source: String,
    /// Open-Meteo (or compatible) base URL for the days' weather; unset: weather reported
    /// unavailable ("not configured").
    #[arg(long, env = "ETAPPE_WEATHER_URL")]
    pub weather_url: Option<String>,
    /// Open-Meteo (or compatible) base URL for the terrain heights of routes without
    /// elevation (its elevation API, Copernicus GLO-90); asked for what the imported SRTM
    /// tiles (`etappe elevation import`) do not cover. Unset: the tiles only.
    #[arg(long, env = "ETAPPE_ELEVATION_URL")]
    pub elevation_url: Option<String>,
    /// Router for waypoint detours: brouter, valhalla, or offline (a straight spur).
    #[arg(long, env = "ETAPPE_ROUTER", default_value = "offline")]
    pub router: String,
    /// The router's base URL (with brouter or valhalla).
    #[arg(long, env = "ETAPPE_ROUTER_URL")]
    pub router_url: Option<String>,
    /// The straight-line length one routing request may span, km: a longer plan is asked in
    /// legs (and a leg the engine still refuses as too long is cut again).
    #[arg(long, env = "ETAPPE_ROUTER_MAX_LEG_KM", default_value_t = etappe_upstream::router::DEFAULT_MAX_LEG_KM)]
    pub router_max_leg_km: f64,
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
    /// A connected laptop: weather and elevation from Open-Meteo, OpenStreetMap features and
    /// beds from the public Overpass API (an imported extract stays first), routing by the
    /// public Valhalla of FOSSGIS; each only where its own setting is unset. Off: everything
    /// stays on this machine.
    #[arg(long, env = "ETAPPE_ONLINE")]
    pub online: bool,
}

/// Open-Meteo's forecast and elevation APIs (free for non-commercial use, about 10,000 calls
/// a day; forecasts cached 3 h, heights 30 days; CC BY 4.0).
pub const ONLINE_OPEN_METEO_URL: &str = "https://api.open-meteo.com";
/// The main public Overpass instance (one query at a time, answers cached 24 h; data
/// © OpenStreetMap contributors, ODbL).
pub const ONLINE_OVERPASS_URL: &str = "https://overpass-api.de/api";
/// FOSSGIS's public Valhalla (at most one request a second, an identifying User-Agent,
/// attribution; data © OpenStreetMap contributors, ODbL).
pub const ONLINE_VALHALLA_URL: &str = "https://valhalla1.openstreetmap.de";
/// The pace FOSSGIS asks of its public routing instances.
const PUBLIC_VALHALLA_INTERVAL: Duration = Duration::from_secs(1);

/// What the online switch sends where, for the README and the readiness report.
pub const ONLINE_SERVICES: [(&str, &str, &str); 4] = [
    (
        "weather",
        ONLINE_OPEN_METEO_URL,
        "Weather data by Open-Meteo.com (CC BY 4.0)",
    ),
    (
        "elevation",
        ONLINE_OPEN_METEO_URL,
        "Elevation data by Open-Meteo.com, Copernicus DEM GLO-90 (CC BY 4.0)",
    ),
    (
        "osm",
        ONLINE_OVERPASS_URL,
        "© OpenStreetMap contributors (ODbL), via the Overpass API",
    ),
    (
        "router",
        ONLINE_VALHALLA_URL,
        "Routing by Valhalla on FOSSGIS's servers, © OpenStreetMap contributors (ODbL)",
    ),
];

impl UpstreamSettings {
    /// These settings with the online switch applied: each public service fills only a
    /// setting the operator left unset, so an explicit one always wins.
    pub fn effective(&self) -> Self {
        let mut out = self.clone();
        if !self.online {
            return out;
        }
        let unset = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
        if unset(&out.weather_url) {
            out.weather_url = Some(ONLINE_OPEN_METEO_URL.into());
        }
        if unset(&out.elevation_url) {
            out.elevation_url = Some(ONLINE_OPEN_METEO_URL.into());
        }
        if unset(&out.overpass_url) {
            out.overpass_url = Some(ONLINE_OVERPASS_URL.into());
        }
        if matches!(out.router.as_str(), "offline" | "") && unset(&out.router_url) {
            out.router = "valhalla".into();
            out.router_url = Some(ONLINE_VALHALLA_URL.into());
        }
        out
    }
}

impl Default for UpstreamSettings {
    fn default() -> Self {
        Self {
            nominatim_url: None,
            overpass_url: None,
            osm_source: "auto".into(),
            weather_url: None,
            elevation_url: None,
            router: "offline".into(),
            router_url: None,
            router_max_leg_km: etappe_upstream::router::DEFAULT_MAX_LEG_KM,
            user_agent: "Etappe/0.1 (bicycle trip planner)".into(),
            timeout_secs: 5,
            online: false,
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
    #[error("ETAPPE_OSM_SOURCE must be auto, local, overpass or none; got {0:?}")]
    UnknownOsmSource(String),
    #[error("ETAPPE_OSM_SOURCE=overpass needs ETAPPE_OVERPASS_URL")]
    MissingOverpassUrl,
    #[error("{0}")]
    Config(#[from] etappe_upstream::ConfigError),
    #[error("http client: {0}")]
    Client(String),
}

/// The configured upstreams.
#[derive(Debug, Clone)]
pub struct Upstreams {
    pub geocoder: Option<NominatimClient>,
    /// Overpass, when configured (features along the route, places to sleep).
    pub overpass: Option<OverpassClient>,
    /// The local index of an imported extract (set by the process that opened the database).
    pub local_index: Option<Arc<dyn OsmFeatures>>,
    /// Which of the two the analysis reads.
    pub osm_choice: OsmChoice,
    /// Where the days' forecasts come from, when configured.
    pub weather: Option<Arc<dyn Forecasts>>,
    /// The elevation API (Open-Meteo), when configured.
    pub elevation_api: Option<Arc<dyn Elevations>>,
    /// The imported SRTM tiles (set by the process that opened the database).
    pub local_elevation: Option<Arc<etappe_elevation::LocalTiles>>,
    pub router: Router,
    /// The router's name as recorded on a detour.
    pub router_name: &'static str,
    /// The straight-line length one routing request may span, km.
    pub router_max_leg_km: f64,
    /// The last health report and when it was made (see [`Upstreams::health`]).
    last_health: Arc<Mutex<Option<(tokio::time::Instant, serde_json::Value)>>>,
}

/// Which OpenStreetMap source the analysis reads (`ETAPPE_OSM_SOURCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsmChoice {
    /// The local index when an extract is imported, else Overpass when configured.
    Auto,
    Local,
    Overpass,
    None,
}

/// How long a health report is reused: probes reach third parties (Nominatim's policy
/// allows one request a second), so a readiness probe polled every few seconds must not
/// turn into as many upstream requests.
const HEALTH_TTL: Duration = Duration::from_secs(30);
/// How long one probe may take before its upstream is reported down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

impl Default for Upstreams {
    fn default() -> Self {
        Self {
            geocoder: None,
            overpass: None,
            local_index: None,
            osm_choice: OsmChoice::Auto,
            weather: None,
            elevation_api: None,
            local_elevation: None,
            router: Router::Offline,
            router_name: "offline",
            router_max_leg_km: etappe_upstream::router::DEFAULT_MAX_LEG_KM,
            last_health: Arc::default(),
        }
    }
}

impl Upstreams {
    /// Builds the clients the settings name; `shared` holds their answers and pace.
    pub fn from_settings(
        settings: &UpstreamSettings,
        shared: &SharedUpstreamState,
    ) -> Result<Self, UpstreamSetupError> {
        let settings = &settings.effective();
        let cache = &shared.cache;
        etappe_infra::telemetry::install_tls_provider();
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
                match &shared.pace {
                    Some(pace) => RateLimiter::nominatim_public()
                        .shared_with(Arc::clone(pace) as Arc<dyn SharedPace>),
                    None => RateLimiter::nominatim_public(),
                },
                Arc::clone(cache),
                timeout,
            )?),
            None => None,
        };
        let osm_choice = match settings.osm_source.trim() {
            "auto" | "" => OsmChoice::Auto,
            "local" => OsmChoice::Local,
            "overpass" => OsmChoice::Overpass,
            "none" => OsmChoice::None,
            other => return Err(UpstreamSetupError::UnknownOsmSource(other.to_owned())),
        };
        if osm_choice == OsmChoice::Overpass && set(&settings.overpass_url).is_none() {
            return Err(UpstreamSetupError::MissingOverpassUrl);
        }
        let http = CachedHttp {
            client: client.clone(),
            cache: Arc::clone(cache),
            timeout,
        };
        let overpass = match set(&settings.overpass_url) {
            // Overpass answers slowly by design: its own query timeout is 25 s.
            Some(url) => Some(OverpassClient::new(
                CachedHttp {
                    timeout: timeout.max(Duration::from_secs(30)),
                    ..http.clone()
                },
                &url,
            )?),
            None => None,
        };
        let weather = match set(&settings.weather_url) {
            Some(url) => {
                Some(Arc::new(OpenMeteoClient::new(http.clone(), &url)?) as Arc<dyn Forecasts>)
            }
            None => None,
        };
        let elevation_api = match set(&settings.elevation_url) {
            Some(url) => {
                Some(Arc::new(OpenMeteoElevationClient::new(http, &url)?) as Arc<dyn Elevations>)
            }
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
            ("valhalla", Some(url)) => {
                let client = ValhallaClient::new(router_client, &url, timeout)?;
                let client = if url.trim_end_matches('/') == ONLINE_VALHALLA_URL {
                    client.with_limiter(match &shared.pace {
                        Some(pace) => RateLimiter::new(PUBLIC_VALHALLA_INTERVAL)
                            .shared_with(Arc::new(pace.named("router")) as Arc<dyn SharedPace>),
                        None => RateLimiter::new(PUBLIC_VALHALLA_INTERVAL),
                    })
                } else {
                    client
                };
                (Router::Valhalla(client), "valhalla")
            }
            ("brouter" | "valhalla", None) => {
                return Err(UpstreamSetupError::MissingRouterUrl(
                    settings.router.clone(),
                ));
            }
            (other, _) => return Err(UpstreamSetupError::UnknownRouter(other.to_owned())),
        };
        Ok(Self {
            geocoder,
            overpass,
            local_index: None,
            osm_choice,
            weather,
            elevation_api,
            local_elevation: None,
            router,
            router_name,
            router_max_leg_km: settings.router_max_leg_km,
            last_health: Arc::default(),
        })
    }

    /// The source of OpenStreetMap features the next analysis reads, by [`OsmChoice`]:
    /// asked each time, so an extract imported while the service runs is used at once.
    pub async fn osm_source(&self) -> Option<Arc<dyn OsmFeatures>> {
        let local = match &self.local_index {
            Some(index) if self.osm_choice != OsmChoice::Overpass && index.is_loaded().await => {
                Some(Arc::clone(index))
            }
            _ => None,
        };
        let overpass = self
            .overpass
            .clone()
            .map(|client| Arc::new(client) as Arc<dyn OsmFeatures>);
        match self.osm_choice {
            OsmChoice::Auto => local.or(overpass),
            OsmChoice::Local => local,
            OsmChoice::Overpass => overpass,
            OsmChoice::None => None,
        }
    }

    /// Where the heights of a route without elevation come from: the imported SRTM tiles
    /// (when any are), then the elevation API for the points they do not cover; None when
    /// neither is there. Asked each time, so tiles imported while the service runs are used
    /// at once.
    pub async fn elevation_source(&self) -> Option<LayeredElevations> {
        let local = match &self.local_elevation {
            Some(tiles) => match tiles.is_loaded().await {
                Ok(true) => Some(Arc::clone(tiles) as Arc<dyn Elevations>),
                Ok(false) => None,
                Err(error) => {
                    // Read as not loaded: the API, when configured, still answers.
                    tracing::warn!(%error, "could not read the local elevation tiles");
                    None
                }
            },
            None => None,
        };
        let layers: Vec<Arc<dyn Elevations>> = local
            .into_iter()
            .chain(self.elevation_api.clone())
            .collect();
        (!layers.is_empty()).then(|| LayeredElevations::new(layers))
    }

    /// Why [`Upstreams::osm_source`] found none, for the category's reason.
    pub fn no_osm_source_reason(&self) -> String {
        match self.osm_choice {
            OsmChoice::None => "OpenStreetMap features are switched off (ETAPPE_OSM_SOURCE=none)".into(),
            OsmChoice::Local => "no OpenStreetMap extract is imported: run `etappe osm import <region.osm.pbf>` (ETAPPE_OSM_SOURCE=local)".into(),
            _ => "no OpenStreetMap source is configured: import an extract with `etappe osm import <region.osm.pbf>`, configure Overpass (ETAPPE_OVERPASS_URL), or start Etappe with ETAPPE_ONLINE=1 (public Overpass); nothing is invented".into(),
        }
    }

    /// Each upstream's health: `{provider, status, required: false}` per upstream, where
    /// `status` is `up`, `down: <failure>` or `embedded` (the offline default, always
    /// there). None is required: without one, the embedded default answers or the feature
    /// says `unavailable`, so an upstream never makes the service unready. Reused for
    /// [`HEALTH_TTL`].
    pub async fn health(&self) -> serde_json::Value {
        let mut last = self.last_health.lock().await;
        if let Some((at, report)) = last.as_ref()
            && at.elapsed() < HEALTH_TTL
        {
            return report.clone();
        }
        let osm = self.osm_source().await;
        let elevation = self.elevation_source().await;
        let (geocoder, accommodations, osm, weather, elevation, router) = tokio::join!(
            probe(
                if self.geocoder.is_some() {
                    "nominatim"
                } else {
                    "gazetteer"
                },
                self.geocoder
                    .as_ref()
                    .map(|g| Box::pin(g.probe()) as BoxedProbe<'_>),
            ),
            probe(
                if self.overpass.is_some() {
                    "overpass"
                } else {
                    "none"
                },
                self.overpass
                    .as_ref()
                    .map(|a| Box::pin(a.probe()) as BoxedProbe<'_>),
            ),
            probe(
                osm.as_ref().map_or("none", |s| s.source()),
                osm.as_ref().map(|s| Box::pin(s.probe()) as BoxedProbe<'_>),
            ),
            probe(
                self.weather.as_ref().map_or("none", |w| w.provider()),
                self.weather
                    .as_ref()
                    .map(|w| Box::pin(w.probe()) as BoxedProbe<'_>),
            ),
            probe(
                elevation.as_ref().map_or("none", |e| e.provider()),
                elevation
                    .as_ref()
                    .map(|e| Box::pin(e.probe()) as BoxedProbe<'_>),
            ),
            probe(
                self.router_name,
                (!matches!(self.router, Router::Offline))
                    .then(|| Box::pin(self.router.probe()) as BoxedProbe<'_>),
            ),
        );
        let report = serde_json::json!({
            "geocoder": geocoder,
            "accommodations": accommodations,
            "osm": osm,
            "weather": weather,
            "elevation": elevation,
            "router": router,
        });
        *last = Some((tokio::time::Instant::now(), report.clone()));
        report
    }
}

/// One upstream's line of the health report; no probe means the embedded default.
async fn probe(provider: &'static str, check: Option<BoxedProbe<'_>>) -> serde_json::Value {
    let status = match check {
        None => "embedded".to_owned(),
        Some(check) => match tokio::time::timeout(PROBE_TIMEOUT, check).await {
            Ok(Ok(())) => "up".to_owned(),
            Ok(Err(e)) => format!("down: {}", e.failure),
            Err(_) => format!("down: no answer within {}s", PROBE_TIMEOUT.as_secs()),
        },
    };
    serde_json::json!({"provider": provider, "status": status, "required": false})
}

type BoxedProbe<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(), etappe_upstream::UpstreamError>> + Send + 'a>,
>;

/// What the upstream clients of every replica share: the answers they cached and the
/// geocoder's request pace. In Redis when it is configured, else in this process.
#[derive(Clone)]
pub struct SharedUpstreamState {
    pub cache: Arc<dyn ResponseCache>,
    pub pace: Option<Arc<RedisPace>>,
}

impl std::fmt::Debug for SharedUpstreamState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedUpstreamState")
            .field("pace", &self.pace)
            .finish_non_exhaustive()
    }
}

impl SharedUpstreamState {
    /// Redis when the process has a link (keys under `{prefix}:upstream:`), else memory.
    pub fn new(redis: Option<Arc<RedisLink>>, prefix: &str) -> Self {
        match redis {
            Some(redis) => Self {
                cache: Arc::new(RedisCache::new(
                    Arc::clone(&redis),
                    format!("{prefix}:upstream:"),
                )),
                pace: Some(Arc::new(RedisPace::new(
                    redis,
                    format!("{prefix}:upstream:pace:geocoder"),
                ))),
            },
            None => Self::in_memory(),
        }
    }

    /// One process alone: a memory cache, the local pace only.
    pub fn in_memory() -> Self {
        Self {
            cache: Arc::new(MemoryCache::new(10_000)),
            pace: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etappe_upstream::{Claim, SharedPace};

    #[test]
    fn a_router_needs_its_url_and_a_known_name() {
        let cache = SharedUpstreamState::in_memory();
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

    #[tokio::test]
    async fn an_elevation_url_gives_the_api_and_none_gives_no_source() {
        let cache = SharedUpstreamState::in_memory();
        let none =
            Upstreams::from_settings(&UpstreamSettings::default(), &cache).expect("configured");
        assert!(none.elevation_api.is_none());
        assert!(none.elevation_source().await.is_none());
        assert_eq!(
            none.health().await["elevation"],
            serde_json::json!({"provider": "none", "status": "embedded", "required": false})
        );
        let settings = UpstreamSettings {
            elevation_url: Some("http://127.0.0.1:17778".into()),
            ..UpstreamSettings::default()
        };
        let api = Upstreams::from_settings(&settings, &cache).expect("configured");
        let source = api.elevation_source().await.expect("the API");
        assert_eq!(source.provider(), "open-meteo");
        let bad = UpstreamSettings {
            elevation_url: Some("ftp://127.0.0.1".into()),
            ..UpstreamSettings::default()
        };
        assert!(matches!(
            Upstreams::from_settings(&bad, &cache),
            Err(UpstreamSetupError::Config(_))
        ));
    }

    #[test]
    fn the_online_switch_fills_only_what_the_operator_left_unset() {
        let offline = UpstreamSettings::default();
        let same = offline.effective();
        assert_eq!(same.weather_url, None);
        assert_eq!(same.router, "offline");
        let online = UpstreamSettings {
            online: true,
            weather_url: Some("http://127.0.0.1:9/own-forecast".into()),
            ..UpstreamSettings::default()
        }
        .effective();
        assert_eq!(
            online.weather_url.as_deref(),
            Some("http://127.0.0.1:9/own-forecast")
        );
        assert_eq!(online.elevation_url.as_deref(), Some(ONLINE_OPEN_METEO_URL));
        assert_eq!(online.overpass_url.as_deref(), Some(ONLINE_OVERPASS_URL));
        assert_eq!(online.router, "valhalla");
        assert_eq!(online.router_url.as_deref(), Some(ONLINE_VALHALLA_URL));
        // An imported extract stays first: the choice stays `auto`.
        assert_eq!(online.osm_source, "auto");
        let own_router = UpstreamSettings {
            online: true,
            router: "brouter".into(),
            router_url: Some("http://127.0.0.1:9".into()),
            ..UpstreamSettings::default()
        }
        .effective();
        assert_eq!(own_router.router, "brouter");
        // Built, the public router is paced; nothing is asked yet.
        let built = Upstreams::from_settings(
            &UpstreamSettings {
                online: true,
                ..UpstreamSettings::default()
            },
            &SharedUpstreamState::in_memory(),
        )
        .expect("configured");
        assert_eq!(built.router_name, "valhalla");
        assert!(
            built.weather.is_some() && built.overpass.is_some() && built.elevation_api.is_some()
        );
    }

    /// The Redis URL for the tests that need it; a failure in CI when it is missing.
    fn redis_url() -> Option<String> {
        let url = std::env::var("REDIS_URL").ok().filter(|u| !u.is_empty());
        if url.is_none() {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but REDIS_URL is not set"
            );
            eprintln!("skipped: set REDIS_URL to run this test on Redis");
        }
        url
    }

    #[tokio::test]
    async fn replicas_sharing_redis_start_geocoder_requests_an_interval_apart_together() {
        let Some(url) = redis_url() else { return };
        let prefix = format!("etappe-test-{}", uuid::Uuid::now_v7().simple());
        let interval = Duration::from_millis(200);
        let replicas: Vec<RateLimiter> = (0..2)
            .map(|_| {
                let shared = SharedUpstreamState::new(RedisLink::open(Some(&url)), &prefix);
                let pace = shared.pace.expect("a Redis pace");
                RateLimiter::new(interval).shared_with(pace as Arc<dyn SharedPace>)
            })
            .collect();
        let mut tasks = Vec::new();
        for i in 0..6 {
            let limiter = replicas[i % 2].clone();
            tasks.push(tokio::spawn(async move {
                limiter.acquire().await;
                tokio::time::Instant::now()
            }));
        }
        let mut starts = Vec::new();
        for task in tasks {
            starts.push(task.await.expect("task"));
        }
        starts.sort();
        for pair in starts.windows(2) {
            assert!(
                pair[1] - pair[0] >= Duration::from_millis(195),
                "two replicas started {:?} apart",
                pair[1] - pair[0]
            );
        }
    }

    /// A forecast server answering one location (an object), counting what it is asked.
    async fn counting_forecast_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        let app = axum::Router::new().fallback(move || {
            let seen = Arc::clone(&seen);
            async move {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let today = chrono::Utc::now().date_naive();
                let time: Vec<String> = (0..24).map(|h| format!("{today}T{h:02}:00")).collect();
                axum::Json(serde_json::json!({
                    "latitude": 47.0, "longitude": 7.0, "utc_offset_seconds": 0,
                    "timezone": "GMT", "hourly": {"time": time, "temperature_2m": vec![10.0; 24],
                        "wind_speed_10m": vec![5.0; 24]}
                }))
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (format!("http://{address}"), count)
    }

    #[tokio::test]
    async fn replicas_sharing_redis_share_their_forecasts() {
        let Some(url) = redis_url() else { return };
        let prefix = format!("etappe-test-{}", uuid::Uuid::now_v7().simple());
        let (base, asked) = counting_forecast_server().await;
        let settings = UpstreamSettings {
            weather_url: Some(base),
            ..UpstreamSettings::default()
        };
        let today = chrono::Utc::now().date_naive();
        let query = [etappe_upstream::ForecastQuery {
            lat: 47.0,
            lon: 7.0,
            date: today,
        }];
        let mut answers = Vec::new();
        for _ in 0..2 {
            let shared = SharedUpstreamState::new(RedisLink::open(Some(&url)), &prefix);
            let upstreams = Upstreams::from_settings(&settings, &shared).expect("configured");
            let weather = upstreams.weather.expect("a forecast provider");
            answers.push(weather.days(&query, today).await.expect("answered"));
        }
        assert_eq!(
            asked.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the second replica reads the first one's answer from Redis"
        );
        assert_eq!(answers[0], answers[1]);
        assert!(answers[0][0].is_some());
    }

    #[tokio::test]
    async fn an_unreachable_redis_leaves_the_local_pace() {
        let shared =
            SharedUpstreamState::new(RedisLink::open(Some("redis://127.0.0.1:1")), "etappe-test");
        let pace = shared.pace.expect("a Redis pace");
        assert_eq!(
            pace.claim(Duration::from_millis(100)).await,
            Claim::Unavailable
        );
    }
}
