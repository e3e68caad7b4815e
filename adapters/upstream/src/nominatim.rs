//! Place search through Nominatim's `/search` endpoint (jsonv2 format),
//! paced by a shared [`RateLimiter`] and cached for a day, as the public
//! instance's usage policy asks.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT_LANGUAGE, HeaderValue, USER_AGENT};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::cache::{self, ResponseCache};
use crate::error::{ConfigError, Upstream, UpstreamError};
use crate::geo::is_valid_position;
use crate::http;
use crate::limiter::RateLimiter;
use crate::text::printable;

const UPSTREAM: Upstream = Upstream::Geocoder;
/// Place names change rarely; a day keeps us well inside the usage policy.
const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
const MAX_LIMIT: usize = 10;
/// Longer queries are not place names; cutting them keeps cache keys bounded.
const MAX_QUERY_CHARS: usize = 200;

/// One search result, as Etappe shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    pub name: String,
    pub display_name: String,
    pub lat: f64,
    pub lon: f64,
    /// What the place is, e.g. "city", "village", "hotel", "peak".
    pub kind: String,
    /// ISO 3166-1 alpha-2, lower case as Nominatim sends it.
    pub country_code: Option<String>,
    /// Nominatim's ranking weight (0–1), when it sends one: tells a city from its namesakes.
    pub importance: Option<f64>,
}

#[derive(Clone)]
pub struct NominatimClient {
    http: reqwest::Client,
    search_url: Url,
    status_url: Url,
    user_agent: HeaderValue,
    accept_language: Option<HeaderValue>,
    limiter: RateLimiter,
    cache: Arc<dyn ResponseCache>,
    timeout: Duration,
}

impl std::fmt::Debug for NominatimClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NominatimClient")
            .field("search_url", &self.search_url.as_str())
            .field("user_agent", &self.user_agent)
            .field("accept_language", &self.accept_language)
            .field("limiter", &self.limiter)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl NominatimClient {
    /// `user_agent` must identify the application (the usage policy bans
    /// anonymous or library-default agents). `timeout` bounds each HTTP
    /// request; time spent waiting for a limiter slot is not counted.
    pub fn new(
        client: reqwest::Client,
        base_url: &str,
        user_agent: &str,
        limiter: RateLimiter,
        cache: Arc<dyn ResponseCache>,
        timeout: Duration,
    ) -> Result<Self, ConfigError> {
        if user_agent.trim().is_empty() {
            return Err(ConfigError::MissingUserAgent);
        }
        let user_agent =
            HeaderValue::from_str(user_agent.trim()).map_err(|_| ConfigError::InvalidHeader {
                header: "User-Agent",
            })?;
        Ok(Self {
            http: client,
            search_url: http::endpoint(base_url, &["search"])?,
            status_url: http::endpoint(base_url, &["status"])?,
            user_agent,
            accept_language: None,
            limiter,
            cache,
            timeout,
        })
    }

    /// Asks for names in these languages (an Accept-Language value such as "de,en").
    pub fn with_accept_language(mut self, languages: &str) -> Result<Self, ConfigError> {
        let value =
            HeaderValue::from_str(languages.trim()).map_err(|_| ConfigError::InvalidHeader {
                header: "Accept-Language",
            })?;
        self.accept_language = (!value.is_empty()).then_some(value);
        Ok(self)
    }

    /// Finds up to `limit` places (clamped to 1..=10) matching free text.
    /// An empty query returns no places without asking the upstream.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<Place>, UpstreamError> {
        let query = normalise_query(query);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let limit = limit.clamp(1, MAX_LIMIT);
        let key = self.cache_key(&query, limit);
        if let Some(places) = cache::get_json::<Vec<Place>>(self.cache.as_ref(), &key).await {
            tracing::debug!(%key, "nominatim cache hit");
            return Ok(places);
        }

        // reqwest's `query` helper is behind a feature we don't enable; the
        // url crate encodes the same way.
        let mut url = self.search_url.clone();
        url.query_pairs_mut()
            .append_pair("q", &query)
            .append_pair("format", "jsonv2")
            .append_pair("limit", &limit.to_string())
            .append_pair("addressdetails", "1");

        self.limiter.acquire().await;
        let mut request = self
            .http
            .get(url)
            .header(USER_AGENT, self.user_agent.clone());
        if let Some(languages) = &self.accept_language {
            request = request.header(ACCEPT_LANGUAGE, languages.clone());
        }
        let body = http::send(UPSTREAM, request, self.timeout)
            .await?
            .into_success_body(UPSTREAM)?;
        let places = parse_search_response(&body)?;

        cache::put_json(self.cache.as_ref(), &key, &places, CACHE_TTL).await;
        Ok(places)
    }

    /// Whether the instance serves: its `/status?format=json` answers `status: 0`. Paced
    /// like a search, so that probing never breaks the usage policy.
    pub async fn probe(&self) -> Result<(), UpstreamError> {
        #[derive(serde::Deserialize)]
        struct Status {
            status: i64,
            #[serde(default)]
            message: String,
        }
        let mut url = self.status_url.clone();
        url.query_pairs_mut().append_pair("format", "json");
        self.limiter.acquire().await;
        let request = self
            .http
            .get(url)
            .header(USER_AGENT, self.user_agent.clone());
        let body = http::probe(UPSTREAM, request, self.timeout, true).await?;
        match serde_json::from_str::<Status>(&body) {
            Ok(Status { status: 0, .. }) => Ok(()),
            Ok(Status { status, message }) => Err(UpstreamError::new(
                UPSTREAM,
                format!(
                    "status {status}: {}",
                    printable(&message, 80).unwrap_or_default()
                ),
                true,
            )),
            Err(e) => Err(UpstreamError::unexpected(
                UPSTREAM,
                format!("status answer: {e}"),
            )),
        }
    }

    /// The language is part of the key: the same query answers with
    /// different names per language, and the cache may be shared.
    fn cache_key(&self, normalised_query: &str, limit: usize) -> String {
        let language = self
            .accept_language
            .as_ref()
            .and_then(|value| value.to_str().ok())
            .unwrap_or("-");
        format!("nominatim:search:v1:{language}:{limit}:{normalised_query}")
    }
}

/// Trimmed, lower-cased, inner whitespace collapsed, control characters
/// dropped: "  Freiburg   im Breisgau" and "freiburg im breisgau" are one query.
pub fn normalise_query(query: &str) -> String {
    printable(query, MAX_QUERY_CHARS)
        .map(|text| text.to_lowercase())
        .unwrap_or_default()
}

/// A jsonv2 search result; only the fields we use. Unknown fields are ignored
/// so upstream additions never break us.
#[derive(Debug, Deserialize)]
struct RawPlace {
    lat: Coordinate,
    lon: Coordinate,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(rename = "type", default)]
    place_type: Option<String>,
    #[serde(default)]
    addresstype: Option<String>,
    #[serde(default)]
    address: Option<RawAddress>,
    #[serde(default)]
    importance: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct RawAddress {
    #[serde(default)]
    country_code: Option<String>,
}

/// jsonv2 sends coordinates as strings; accept numbers too in case a
/// proxy or a future version converts them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Coordinate {
    Text(String),
    Number(f64),
}

impl Coordinate {
    fn value(&self) -> Option<f64> {
        match self {
            Self::Text(text) => text.trim().parse().ok(),
            Self::Number(number) => Some(*number),
        }
    }
}

fn parse_search_response(body: &str) -> Result<Vec<Place>, UpstreamError> {
    let raw: Vec<RawPlace> = http::parse_json(UPSTREAM, body)?;
    raw.into_iter().map(into_place).collect()
}

fn into_place(raw: RawPlace) -> Result<Place, UpstreamError> {
    let (Some(lat), Some(lon)) = (raw.lat.value(), raw.lon.value()) else {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            "unparseable coordinates",
        ));
    };
    if !is_valid_position(lat, lon) {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            "coordinates out of range",
        ));
    }
    let display_name = raw
        .display_name
        .as_deref()
        .and_then(|text| printable(text, 500))
        .unwrap_or_default();
    // Unnamed results (an address, a bare road) still need a short label:
    // the first part of the display name is what Nominatim's own UI shows.
    let name = raw
        .name
        .as_deref()
        .and_then(|text| printable(text, 200))
        .or_else(|| {
            display_name
                .split(',')
                .next()
                .and_then(|part| printable(part, 200))
        })
        .unwrap_or_else(|| "unnamed place".to_owned());
    let country_code = raw
        .address
        .and_then(|address| address.country_code)
        .and_then(|code| printable(&code, 3));
    Ok(Place {
        name,
        display_name,
        lat,
        lon,
        kind: place_kind(
            raw.category.as_deref(),
            raw.place_type.as_deref(),
            raw.addresstype.as_deref(),
        ),
        country_code,
        importance: raw.importance.filter(|i| i.is_finite()),
    })
}

/// For administrative boundaries the type is just "administrative"; the
/// address type ("city", "village", "county") is what a person wants to read.
fn place_kind(
    category: Option<&str>,
    place_type: Option<&str>,
    addresstype: Option<&str>,
) -> String {
    let preferred = if category == Some("boundary") {
        addresstype.or(place_type)
    } else {
        place_type.or(addresstype)
    };
    preferred
        .and_then(|kind| printable(kind, 50))
        .unwrap_or_else(|| "place".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_normalised_for_caching() {
        assert_eq!(
            normalise_query("  Freiburg \t im   BREISGAU \n"),
            "freiburg im breisgau"
        );
        assert_eq!(normalise_query(" \u{0} "), "");
    }

    #[test]
    fn boundaries_are_named_by_address_type() {
        assert_eq!(
            place_kind(Some("boundary"), Some("administrative"), Some("city")),
            "city"
        );
        assert_eq!(
            place_kind(Some("tourism"), Some("hotel"), Some("tourism")),
            "hotel"
        );
        assert_eq!(place_kind(None, None, None), "place");
    }

    #[test]
    fn unnamed_results_take_the_first_part_of_the_display_name() {
        let body = r#"[{"lat":"47.99","lon":"7.85","name":"","display_name":"12, Kaiser-Joseph-Straße, Freiburg","category":"place","type":"house","addresstype":"place"}]"#;
        let places = parse_search_response(body).expect("parse");
        assert_eq!(places[0].name, "12");
        assert_eq!(places[0].country_code, None);
    }

    #[test]
    fn impossible_coordinates_are_an_error() {
        let body = r#"[{"lat":"not a number","lon":"7.85","display_name":"x"}]"#;
        assert!(
            !parse_search_response(body)
                .expect_err("must fail")
                .retryable
        );
        let body = r#"[{"lat":"147.0","lon":"7.85","display_name":"x"}]"#;
        assert!(parse_search_response(body).is_err());
    }
}
