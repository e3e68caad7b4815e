//! Hourly forecasts for the days of a trip through Open-Meteo's forecast API, behind the
//! [`Forecasts`] port so the workers never know which service answers.
//!
//! One request carries every location still missing from the cache: Open-Meteo takes comma
//! lists of latitudes and longitudes and answers a JSON array, one object per location (a
//! lone location answers a bare object). Dates are clamped to the forecast horizon (today to
//! today + 15): a day outside it is not asked for, so one late day never fails the batch.
//! Each (location at 0.01°, local date) is cached for 3 hours: forecasts are refreshed
//! hourly upstream, and a trip re-analysed after a pace edit reads its days from the cache.

mod parse;

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{Days, NaiveDate};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::cache;
use crate::error::{ConfigError, Upstream, UpstreamError};
use crate::geo::is_valid_position;
use crate::http::{self, CachedHttp};

const UPSTREAM: Upstream = Upstream::Weather;
const CACHE_TTL: Duration = Duration::from_secs(3 * 3600);
/// Open-Meteo's horizon: 16 days starting today, so the last one is today + 15.
pub const HORIZON_DAYS: u64 = 16;
/// Locations per request: a trip's horizon holds at most 16 days × 3 samples, so this is
/// a guard against URLs growing without bound rather than a limit ever met.
const MAX_LOCATIONS_PER_REQUEST: usize = 100;
/// The hourly variables asked for (and parsed).
pub(crate) const HOURLY: &str = "temperature_2m,precipitation_probability,wind_speed_10m,wind_direction_10m,relative_humidity_2m";

/// One place on one (local) date.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForecastQuery {
    pub lat: f64,
    pub lon: f64,
    pub date: NaiveDate,
}

/// One local hour of a forecast; a value the model does not provide is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HourSample {
    /// Local hour of the day, 0–23.
    pub hour: u8,
    pub temperature_c: Option<f64>,
    pub precipitation_probability: Option<f64>,
    pub wind_speed_kmh: Option<f64>,
    pub wind_direction_deg: Option<f64>,
    pub relative_humidity: Option<f64>,
}

/// The hours of one local date at one place, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaySeries {
    pub hours: Vec<HourSample>,
}

impl DaySeries {
    /// The sample of `hour` (local), if the forecast covers it.
    pub fn at(&self, hour: u8) -> Option<&HourSample> {
        self.hours.iter().find(|h| h.hour == hour)
    }
}

/// Where forecasts come from.
#[async_trait]
pub trait Forecasts: Send + Sync + std::fmt::Debug {
    /// The series of each query, in order: `None` for a date outside the horizon (seen
    /// from `today`) or a place the answer does not cover. One upstream request at most.
    async fn days(
        &self,
        queries: &[ForecastQuery],
        today: NaiveDate,
    ) -> Result<Vec<Option<DaySeries>>, UpstreamError>;

    /// Whether the service answers.
    async fn probe(&self) -> Result<(), UpstreamError>;

    /// The provider's name, for reasons and health reports.
    fn provider(&self) -> &'static str;
}

/// The Open-Meteo client.
#[derive(Clone)]
pub struct OpenMeteoClient {
    http: CachedHttp,
    forecast_url: Url,
}

impl std::fmt::Debug for OpenMeteoClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenMeteoClient")
            .field("forecast_url", &self.forecast_url.as_str())
            .field("timeout", &self.http.timeout)
            .finish_non_exhaustive()
    }
}

/// The cache cell of a position: 0.01° (~1 km), the model's resolution at best.
fn cell(coordinate: f64) -> f64 {
    (coordinate * 100.0).round() / 100.0 + 0.0
}

fn cache_key(lat: f64, lon: f64, date: NaiveDate) -> String {
    format!("weather:v1:{lat:.2}:{lon:.2}:{date}")
}

/// Whether `date` is within the forecast horizon seen from `today`.
pub fn within_horizon(date: NaiveDate, today: NaiveDate) -> bool {
    date >= today
        && today
            .checked_add_days(Days::new(HORIZON_DAYS - 1))
            .is_some_and(|last| date <= last)
}

impl OpenMeteoClient {
    /// `base_url` is the service root, e.g. `https://api.open-meteo.com`; forecasts are
    /// read from `{base_url}/v1/forecast`.
    pub fn new(http: CachedHttp, base_url: &str) -> Result<Self, ConfigError> {
        Ok(Self {
            forecast_url: http::endpoint(base_url, &["v1", "forecast"])?,
            http,
        })
    }

    /// One request for `cells` (distinct rounded positions) over `first..=last`.
    async fn fetch(
        &self,
        cells: &[(f64, f64)],
        first: NaiveDate,
        last: NaiveDate,
    ) -> Result<Vec<BTreeMap<NaiveDate, DaySeries>>, UpstreamError> {
        let join = |pick: fn(&(f64, f64)) -> f64| {
            cells
                .iter()
                .map(|c| format!("{:.2}", pick(c)))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut url = self.forecast_url.clone();
        url.query_pairs_mut()
            .append_pair("latitude", &join(|c| c.0))
            .append_pair("longitude", &join(|c| c.1))
            .append_pair("hourly", HOURLY)
            .append_pair("wind_speed_unit", "kmh")
            .append_pair("timezone", "auto")
            .append_pair("start_date", &first.to_string())
            .append_pair("end_date", &last.to_string());
        let answer = http::send(UPSTREAM, self.http.client.get(url), self.http.timeout).await?;
        if answer.status == reqwest::StatusCode::BAD_REQUEST {
            // Open-Meteo explains a refusal: {"error": true, "reason": "…"}.
            let reason = parse::error_reason(&answer.body)
                .map_or_else(String::new, |reason| format!(": {reason}"));
            tracing::warn!(upstream = %UPSTREAM, %reason, "open-meteo refused the request");
            return Err(UpstreamError::new(
                UPSTREAM,
                format!("refused the request (400){reason}"),
                false,
            ));
        }
        let body = answer.into_success_body(UPSTREAM)?;
        parse::parse_answer(&body, cells.len())
    }
}

#[async_trait]
impl Forecasts for OpenMeteoClient {
    async fn days(
        &self,
        queries: &[ForecastQuery],
        today: NaiveDate,
    ) -> Result<Vec<Option<DaySeries>>, UpstreamError> {
        let mut found: Vec<Option<DaySeries>> = vec![None; queries.len()];
        let mut missing: Vec<usize> = Vec::new();
        for (i, q) in queries.iter().enumerate() {
            if !is_valid_position(q.lat, q.lon) {
                return Err(UpstreamError::invalid_request(
                    UPSTREAM,
                    "coordinates out of range",
                ));
            }
            if !within_horizon(q.date, today) {
                continue;
            }
            let key = cache_key(cell(q.lat), cell(q.lon), q.date);
            match cache::get_json::<DaySeries>(self.http.cache.as_ref(), &key).await {
                Some(series) => found[i] = Some(series),
                None => missing.push(i),
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        // Distinct cells, in the order first asked, and the dates they cover.
        let mut cells: Vec<(f64, f64)> = Vec::new();
        for &i in &missing {
            let c = (cell(queries[i].lat), cell(queries[i].lon));
            if !cells.contains(&c) {
                cells.push(c);
            }
        }
        for chunk in cells.chunks(MAX_LOCATIONS_PER_REQUEST) {
            let in_chunk = |i: &usize| {
                let c = (cell(queries[*i].lat), cell(queries[*i].lon));
                chunk.contains(&c)
            };
            let dates: Vec<NaiveDate> = missing
                .iter()
                .filter(|i| in_chunk(i))
                .map(|&i| queries[i].date)
                .collect();
            let (Some(first), Some(last)) = (dates.iter().min(), dates.iter().max()) else {
                continue;
            };
            let answers = self.fetch(chunk, *first, *last).await?;
            for &i in missing.iter().filter(|i| in_chunk(i)) {
                let q = &queries[i];
                let c = (cell(q.lat), cell(q.lon));
                let Some(position) = chunk.iter().position(|x| *x == c) else {
                    continue;
                };
                if let Some(series) = answers.get(position).and_then(|a| a.get(&q.date)) {
                    let key = cache_key(c.0, c.1, q.date);
                    cache::put_json(self.http.cache.as_ref(), &key, series, CACHE_TTL).await;
                    found[i] = Some(series.clone());
                }
            }
        }
        Ok(found)
    }

    /// A one-hour forecast for a fixed point: cheap, and proves the service answers.
    async fn probe(&self) -> Result<(), UpstreamError> {
        let mut url = self.forecast_url.clone();
        url.query_pairs_mut()
            .append_pair("latitude", "0")
            .append_pair("longitude", "0")
            .append_pair("hourly", "temperature_2m")
            .append_pair("forecast_days", "1");
        http::probe(
            UPSTREAM,
            self.http.client.get(url),
            self.http.timeout,
            false,
        )
        .await
        .map(drop)
    }

    fn provider(&self) -> &'static str {
        "open-meteo"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().expect("date")
    }

    #[test]
    fn the_horizon_ends_at_today_plus_fifteen() {
        let today = d("2026-07-01");
        assert!(within_horizon(today, today));
        assert!(within_horizon(d("2026-07-16"), today));
        assert!(!within_horizon(d("2026-07-17"), today));
        assert!(!within_horizon(d("2026-06-30"), today));
    }

    #[test]
    fn cells_round_to_a_hundredth_of_a_degree() {
        assert_eq!(cell(47.996_09), 48.0);
        assert_eq!(cell(-0.001), 0.0);
        assert_eq!(
            cache_key(cell(7.8494), cell(47.004), d("2026-07-01")),
            "weather:v1:7.85:47.00:2026-07-01"
        );
    }
}
