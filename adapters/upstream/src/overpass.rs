//! Accommodation search near a point, and everything along a route
//! ([`OverpassClient::along`], the [`crate::OsmFeatures`] port), through the Overpass API.
//! Public Overpass instances grant each client very few query slots, so this client
//! runs one query at a time and caches answers for a day.

mod corridor;
mod corridor_parse;
mod corridor_query;
mod parse;
pub use parse::{accommodation_from_tags, rank as rank_accommodations};
mod price;
mod query;

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use url::Url;

use crate::cache;
use crate::error::{ConfigError, Upstream, UpstreamError};
use crate::http::{self, CachedHttp};

const UPSTREAM: Upstream = Upstream::Accommodations;
const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Larger areas make public Overpass slow and return more than a day's end needs.
pub const MAX_RADIUS_M: u32 = 25_000;

/// Kinds of places to sleep: the domain's, whose wire names (`as_str`) are the OSM
/// `tourism=` values the queries ask for.
pub use etappe_domain::trip::settings::AccommodationType;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OsmType {
    Node,
    Way,
    Relation,
}

/// A place to sleep near the end of a day's ride.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accommodation {
    pub name: Option<String>,
    pub kind: AccommodationType,
    pub lat: f64,
    pub lon: f64,
    /// Straight-line distance from the searched point, in whole metres.
    pub distance_to_end_m: f64,
    pub price_min_eur: f64,
    pub price_max_eur: f64,
    /// True when the price comes from the place's own `charge`/`fee` tag.
    pub exact_price: bool,
    pub website: Option<String>,
    pub phone: Option<String>,
    pub address: Option<String>,
    pub opening_hours: Option<String>,
    pub osm_type: OsmType,
    pub osm_id: u64,
}

/// Clones share the one-query-at-a-time gate.
#[derive(Clone)]
pub struct OverpassClient {
    http: CachedHttp,
    interpreter_url: Url,
    status_url: Url,
    one_at_a_time: Arc<Semaphore>,
}

impl std::fmt::Debug for OverpassClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OverpassClient")
            .field("interpreter_url", &self.interpreter_url.as_str())
            .field("timeout", &self.http.timeout)
            .finish_non_exhaustive()
    }
}

/// A search for places to sleep: of these `types` (none: nothing is wanted), within
/// `radius_m` of a point.
#[derive(Clone, Copy, Debug)]
pub struct BedSearch<'a> {
    pub lat: f64,
    pub lon: f64,
    pub radius_m: u32,
    pub types: &'a [AccommodationType],
}

impl BedSearch<'_> {
    /// Whether the point is a latitude in [-90, 90] and a longitude in [-180, 180].
    pub fn at_valid_position(&self) -> bool {
        crate::geo::is_valid_position(self.lat, self.lon)
    }
}

impl OverpassClient {
    /// `base_url` is the instance root, e.g. `https://overpass-api.de`;
    /// queries go to `{base_url}/api/interpreter`.
    pub fn new(http: CachedHttp, base_url: &str) -> Result<Self, ConfigError> {
        Ok(Self {
            interpreter_url: http::endpoint(base_url, &["api", "interpreter"])?,
            status_url: http::endpoint(base_url, &["api", "status"])?,
            http,
            one_at_a_time: Arc::new(Semaphore::new(1)),
        })
    }

    /// Accommodations of the given types within `radius_m` (clamped to
    /// 1..=[`MAX_RADIUS_M`]) of a point, best described and nearest first.
    /// No types means nothing is wanted: the answer is empty, with no query.
    pub async fn accommodations_near(
        &self,
        search: BedSearch<'_>,
    ) -> Result<Vec<Accommodation>, UpstreamError> {
        if !search.at_valid_position() {
            return Err(UpstreamError::invalid_request(
                UPSTREAM,
                "coordinates out of range",
            ));
        }
        let BedSearch {
            lat,
            lon,
            radius_m,
            types,
        } = search;
        let tourism = query::tourism_values(types);
        if tourism.is_empty() {
            return Ok(Vec::new());
        }
        let radius_m = radius_m.clamp(1, MAX_RADIUS_M);
        let (cell_lat, cell_lon) = (query::rounded(lat), query::rounded(lon));
        let key = query::cache_key(cell_lat, cell_lon, radius_m, &tourism);
        if let Some(found) = self.cached(&key, lat, lon).await {
            return Ok(found);
        }

        let Ok(_slot) = self.one_at_a_time.acquire().await else {
            return Err(UpstreamError::new(
                UPSTREAM,
                "client is shutting down",
                true,
            ));
        };
        // Another caller may have fetched the same area while we queued.
        if let Some(found) = self.cached(&key, lat, lon).await {
            return Ok(found);
        }
        let ql = query::build_query(cell_lat, cell_lon, radius_m, &tourism);
        tracing::debug!(%ql, "overpass query");
        let body = self.interpret(UPSTREAM, &ql).await?;
        let mut found = parse::parse_answer(&body, types, cell_lat, cell_lon)?;

        cache::put_json(self.http.cache.as_ref(), &key, &found, CACHE_TTL).await;
        parse::rank(&mut found, lat, lon);
        Ok(found)
    }

    /// Sends one Overpass QL query to the interpreter (as a form, the way Overpass takes
    /// it) and answers the body of a successful answer; failures are `upstream`'s.
    async fn interpret(&self, upstream: Upstream, ql: &str) -> Result<String, UpstreamError> {
        let form_body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("data", ql)
            .finish();
        let request = self
            .http
            .client
            .post(self.interpreter_url.clone())
            .header(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .body(form_body);
        http::send(upstream, request, self.http.timeout)
            .await?
            .into_success_body(upstream)
    }

    /// Whether the instance serves: its `/api/status` answers 2xx (a query slot is not
    /// taken: the status page is free).
    pub async fn probe(&self) -> Result<(), UpstreamError> {
        let request = self.http.client.get(self.status_url.clone());
        http::probe(UPSTREAM, request, self.http.timeout, false)
            .await
            .map(drop)
    }

    /// Cached answers were ranked from the cell's rounded point; distances
    /// are recomputed from the exact one.
    async fn cached(&self, key: &str, lat: f64, lon: f64) -> Option<Vec<Accommodation>> {
        let mut found =
            cache::get_json::<Vec<Accommodation>>(self.http.cache.as_ref(), key).await?;
        tracing::debug!(%key, "overpass cache hit");
        parse::rank(&mut found, lat, lon);
        Some(found)
    }
}

/// An element's tags from `(key, value)` pairs, as the tests write them.
#[cfg(test)]
fn tags_of(pairs: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}
