//! HTTP adapters for Etappe's third-party upstreams: the Nominatim geocoder,
//! the Overpass accommodation search, the Open-Meteo forecast and elevation API and the
//! BRouter/Valhalla routers.
//!
//! Every adapter takes a `reqwest::Client` built by the application (so TLS,
//! proxies and connection pools are configured once) plus a base URL (so tests
//! and self-hosted instances are just another address). Every failure is an
//! [`UpstreamError`] that says which upstream failed, what happened and whether
//! retrying may help; nothing an upstream sends can make these adapters panic.

pub mod cache;
pub mod elevation;
pub mod error;
pub mod features;
mod geo;
mod http;
pub mod limiter;
pub mod nominatim;
pub mod overpass;
pub mod router;
mod text;
pub mod weather;

pub use cache::{MemoryCache, NoCache, RedisCache, ResponseCache};
pub use elevation::{Elevations, LayeredElevations, OpenMeteoElevationClient};
pub use error::{ConfigError, Upstream, UpstreamError};
pub use features::{NamedPlace, OsmFeatures};
pub use http::{CachedHttp, CallObserver, observe_calls};
pub use limiter::{Claim, RateLimiter, RedisPace, SharedPace};
pub use nominatim::{NominatimClient, Place};
pub use overpass::{Accommodation, AccommodationType, BedSearch, OsmType, OverpassClient};
pub use router::{
    BRouterClient, RideProfile, RoutePoint, RoutedPath, Router, ValhallaClient, spur_detour,
};
pub use weather::{DaySeries, ForecastQuery, Forecasts, HourSample, OpenMeteoClient};
