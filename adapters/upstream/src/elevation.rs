//! Terrain heights for routes that carry none, behind the [`Elevations`] port: the
//! Open-Meteo elevation API ([`OpenMeteoElevationClient`], Copernicus GLO-90 data) here, the
//! local SRTM tiles in crate `etappe-elevation`, and [`LayeredElevations`] asking several in
//! turn (local tiles first, the API for what they do not cover).
//!
//! Open-Meteo takes up to 100 comma-separated coordinates per call and answers
//! `{"elevation":[44.8, …]}` in the same order. Each point is cached at 4 decimals (~11 m,
//! finer than the 90 m data) for 30 days, since terrain does not change; a point the service
//! has no value for is cached for a day only, so a passing outage of its data is not
//! remembered for a month. Only points missing from the cache are asked for.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;

use crate::cache;
use crate::error::{ConfigError, Upstream, UpstreamError};
use crate::geo::is_valid_position;
use crate::http::{self, CachedHttp};

const UPSTREAM: Upstream = Upstream::Elevation;
/// Open-Meteo's limit of coordinates per request.
pub const MAX_POINTS_PER_REQUEST: usize = 100;
/// Terrain does not change: a height is good for a month.
const CACHE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// "No value here" may be a passing gap in the service's data: asked again after a day.
const NO_VALUE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Heights outside this range are no terrain on Earth (the Dead Sea shore is at −430 m,
/// Everest 8,849 m): a fill value such as −9999 reads as "no value", not as a height.
const PLAUSIBLE_M: std::ops::RangeInclusive<f64> = -1_000.0..=9_000.0;

/// Where terrain heights come from.
#[async_trait]
pub trait Elevations: Send + Sync + std::fmt::Debug {
    /// Short provider name for statuses and logs: "open-meteo", "srtm".
    fn provider(&self) -> &'static str;

    /// Cheap readiness check.
    async fn probe(&self) -> Result<(), UpstreamError> {
        Ok(())
    }

    /// Metres above sea level at each (lat, lon), in order; None where this source has no
    /// value (outside its coverage, a void). A failure of the whole call is an UpstreamError.
    async fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError>;
}

/// The Open-Meteo elevation client.
pub struct OpenMeteoElevationClient {
    http: CachedHttp,
    elevation_url: Url,
    calls: AtomicU64,
    points_asked: AtomicU64,
}

impl std::fmt::Debug for OpenMeteoElevationClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenMeteoElevationClient")
            .field("elevation_url", &self.elevation_url.as_str())
            .field("timeout", &self.http.timeout)
            .field("calls", &self.calls())
            .finish_non_exhaustive()
    }
}

/// A position on the cache's 1e-4° grid, as integers so equal cells compare equal.
type Cell = (i64, i64);

/// The cell of a position; the caller has checked it is a valid position, so the product
/// is far inside i64 (the cast saturates anyway).
fn cell_of(lat: f64, lon: f64) -> Cell {
    #[allow(clippy::cast_possible_truncation)]
    let round = |x: f64| (x * 10_000.0).round() as i64;
    (round(lat), round(lon))
}

/// A cell's coordinate as sent and as keyed: 4 decimals, never "-0.0000".
fn coordinate(units: i64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let degrees = units as f64 / 10_000.0 + 0.0;
    format!("{degrees:.4}")
}

fn cache_key(cell: Cell) -> String {
    format!("elevation:v1:{}:{}", coordinate(cell.0), coordinate(cell.1))
}

/// A height as this adapter accepts it: finite and plausible.
fn plausible(height: Option<f64>) -> Option<f64> {
    height.filter(|h| h.is_finite() && PLAUSIBLE_M.contains(h))
}

#[derive(Deserialize)]
struct Answer {
    elevation: Vec<Option<f64>>,
}

#[derive(Deserialize)]
struct Refusal {
    reason: String,
}

/// Open-Meteo writes a missing value as a bare `nan` (its encoder's spelling), which is
/// not JSON; outside strings it is read as `null`.
fn nan_as_null(body: &str) -> Cow<'_, str> {
    if !body
        .as_bytes()
        .windows(3)
        .any(|w| w.eq_ignore_ascii_case(b"nan"))
    {
        return Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = body;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let bare = rest.strip_prefix('-').unwrap_or(rest);
            if let (Some(word), Some(after)) = (bare.get(..3), bare.get(3..))
                && word.eq_ignore_ascii_case("nan")
            {
                out.push_str("null");
                rest = after;
                continue;
            }
        }
        out.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
    Cow::Owned(out)
}

/// The heights of a success body, one per point asked.
fn parse_heights(body: &str, asked: usize) -> Result<Vec<Option<f64>>, UpstreamError> {
    let answer: Answer = http::parse_json(UPSTREAM, &nan_as_null(body))?;
    if answer.elevation.len() != asked {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            format!(
                "{} heights for {asked} points asked",
                answer.elevation.len()
            ),
        ));
    }
    Ok(answer.elevation.into_iter().map(plausible).collect())
}

impl OpenMeteoElevationClient {
    /// `base_url` is the service root, e.g. `https://api.open-meteo.com`; heights are read
    /// from `{base_url}/v1/elevation`.
    pub fn new(http: CachedHttp, base_url: &str) -> Result<Self, ConfigError> {
        Ok(Self {
            elevation_url: http::endpoint(base_url, &["v1", "elevation"])?,
            http,
            calls: AtomicU64::new(0),
            points_asked: AtomicU64::new(0),
        })
    }

    /// HTTP look-ups made so far (probes not counted), for "look-ups per 100 km".
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Points sent to the service so far (cache hits not counted).
    pub fn points_asked(&self) -> u64 {
        self.points_asked.load(Ordering::Relaxed)
    }

    fn url_for(&self, cells: &[Cell]) -> Url {
        let join = |pick: fn(&Cell) -> i64| {
            cells
                .iter()
                .map(|c| coordinate(pick(c)))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut url = self.elevation_url.clone();
        url.query_pairs_mut()
            .append_pair("latitude", &join(|c| c.0))
            .append_pair("longitude", &join(|c| c.1));
        url
    }

    /// One request for at most [`MAX_POINTS_PER_REQUEST`] cells.
    async fn fetch(&self, cells: &[Cell]) -> Result<Vec<Option<f64>>, UpstreamError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.points_asked.fetch_add(
            u64::try_from(cells.len()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        let answer = http::send(
            UPSTREAM,
            self.http.client.get(self.url_for(cells)),
            self.http.timeout,
        )
        .await?;
        if answer.status == reqwest::StatusCode::BAD_REQUEST {
            // Open-Meteo explains a refusal: {"error": true, "reason": "…"}.
            let reason = serde_json::from_str::<Refusal>(&answer.body)
                .ok()
                .and_then(|r| crate::text::printable(&r.reason, 200))
                .map_or_else(String::new, |reason| format!(": {reason}"));
            tracing::warn!(upstream = %UPSTREAM, %reason, "open-meteo refused the request");
            return Err(UpstreamError::new(
                UPSTREAM,
                format!("refused the request (400){reason}"),
                false,
            ));
        }
        let body = answer.into_success_body(UPSTREAM)?;
        parse_heights(&body, cells.len())
    }
}

#[async_trait]
impl Elevations for OpenMeteoElevationClient {
    fn provider(&self) -> &'static str {
        "open-meteo"
    }

    /// One look-up of a fixed point: cheap, and proves the service answers in its format.
    async fn probe(&self) -> Result<(), UpstreamError> {
        let body = http::probe(
            UPSTREAM,
            self.http.client.get(self.url_for(&[(0, 0)])),
            self.http.timeout,
            false,
        )
        .await?;
        parse_heights(&body, 1).map(drop)
    }

    /// A position that is not one (NaN, beyond ±90°/±180°) has no height: None, so one bad
    /// point does not cost the whole route its profile.
    async fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError> {
        let cells: Vec<Option<Cell>> = points
            .iter()
            .map(|&(lat, lon)| is_valid_position(lat, lon).then(|| cell_of(lat, lon)))
            .collect();
        let mut known: HashMap<Cell, Option<f64>> = HashMap::new();
        let mut missing: Vec<Cell> = Vec::new();
        let mut seen: HashSet<Cell> = HashSet::new();
        for cell in cells.iter().flatten() {
            if !seen.insert(*cell) {
                continue;
            }
            match cache::get_json::<Option<f64>>(self.http.cache.as_ref(), &cache_key(*cell)).await
            {
                Some(height) => {
                    known.insert(*cell, plausible(height));
                }
                None => missing.push(*cell),
            }
        }
        for chunk in missing.chunks(MAX_POINTS_PER_REQUEST) {
            let heights = self.fetch(chunk).await?;
            for (cell, height) in chunk.iter().zip(heights) {
                let ttl = if height.is_some() {
                    CACHE_TTL
                } else {
                    NO_VALUE_TTL
                };
                cache::put_json(self.http.cache.as_ref(), &cache_key(*cell), &height, ttl).await;
                known.insert(*cell, height);
            }
        }
        Ok(cells
            .iter()
            .map(|cell| cell.and_then(|c| known.get(&c).copied().flatten()))
            .collect())
    }
}

/// Several sources asked in turn: the first for every point, each next one only for the
/// points still without a height. A failing layer is logged and passed over; the call fails
/// only when every layer asked failed, with the last layer's error.
#[derive(Debug, Clone)]
pub struct LayeredElevations {
    layers: Vec<Arc<dyn Elevations>>,
}

impl LayeredElevations {
    /// The layers in the order they are asked.
    pub fn new(layers: Vec<Arc<dyn Elevations>>) -> Self {
        Self { layers }
    }

    /// Every layer's provider name, in the order they are asked.
    pub fn providers(&self) -> Vec<&'static str> {
        self.layers.iter().map(|l| l.provider()).collect()
    }

    /// Like [`Elevations::heights`], with the provider that answered each height.
    pub async fn heights_with_providers(
        &self,
        points: &[(f64, f64)],
    ) -> Result<Vec<Option<(f64, &'static str)>>, UpstreamError> {
        let mut found: Vec<Option<(f64, &'static str)>> = vec![None; points.len()];
        let mut last_error = None;
        let mut any_answered = false;
        for layer in &self.layers {
            let wanted: Vec<usize> = (0..points.len())
                .filter(|&i| found.get(i).is_some_and(Option::is_none))
                .collect();
            if wanted.is_empty() {
                break;
            }
            let asked: Vec<(f64, f64)> = wanted
                .iter()
                .filter_map(|&i| points.get(i).copied())
                .collect();
            match layer.heights(&asked).await {
                Ok(heights) if heights.len() == asked.len() => {
                    any_answered = true;
                    for (&i, height) in wanted.iter().zip(heights) {
                        if let (Some(slot), Some(h)) = (found.get_mut(i), plausible(height)) {
                            *slot = Some((h, layer.provider()));
                        }
                    }
                }
                Ok(heights) => {
                    // A layer breaking the port's contract is a failure, never a shifted profile.
                    let error = UpstreamError::unexpected(
                        UPSTREAM,
                        format!(
                            "{} gave {} heights for {} points",
                            layer.provider(),
                            heights.len(),
                            asked.len()
                        ),
                    );
                    tracing::warn!(provider = layer.provider(), %error, "elevation layer failed");
                    last_error = Some(error);
                }
                Err(error) => {
                    tracing::warn!(provider = layer.provider(), %error, "elevation layer failed");
                    last_error = Some(error);
                }
            }
        }
        match last_error {
            Some(error) if !any_answered => Err(error),
            _ => Ok(found),
        }
    }

    /// Which providers answered at least one of `heights`, in the order of the layers.
    pub fn providers_used(&self, heights: &[Option<(f64, &'static str)>]) -> Vec<&'static str> {
        self.providers()
            .into_iter()
            .filter(|p| heights.iter().flatten().any(|(_, q)| q == p))
            .collect()
    }
}

#[async_trait]
impl Elevations for LayeredElevations {
    /// The first layer's name (the one preferred), "none" without layers.
    fn provider(&self) -> &'static str {
        self.layers.first().map_or("none", |l| l.provider())
    }

    /// Ready when any layer is; else the last layer's failure.
    async fn probe(&self) -> Result<(), UpstreamError> {
        let mut last_error = None;
        for layer in &self.layers {
            match layer.probe().await {
                Ok(()) => return Ok(()),
                Err(error) => last_error = Some(error),
            }
        }
        last_error.map_or(Ok(()), Err)
    }

    async fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError> {
        Ok(self
            .heights_with_providers(points)
            .await?
            .into_iter()
            .map(|h| h.map(|(height, _)| height))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn cells_round_to_four_decimals() {
        assert_eq!(cell_of(47.123_449, 7.000_05), (471_234, 70_001));
        assert_eq!(
            cache_key(cell_of(-0.000_01, 9.5)),
            "elevation:v1:0.0000:9.5000"
        );
        assert_eq!(coordinate(-471_234), "-47.1234");
    }

    #[test]
    fn a_bare_nan_reads_as_no_value() {
        assert_eq!(
            parse_heights(r#"{"elevation":[44.8,nan,-NaN,12]}"#, 4),
            Ok(vec![Some(44.8), None, None, Some(12.0)])
        );
        // Inside a string "nan" is text, and the shape is still checked.
        assert!(parse_heights(r#"{"elevation":[1.0],"note":"nan"}"#, 1).is_ok());
        assert_eq!(nan_as_null(r#"{"a":"ba\"nan"}"#), r#"{"a":"ba\"nan"}"#);
        assert_eq!(
            parse_heights(r#"{"elevation":[null,-9999,8848.9]}"#, 3),
            Ok(vec![None, None, Some(8848.9)])
        );
        let error = parse_heights(r#"{"elevation":[1,2]}"#, 3).expect_err("short");
        assert_eq!(
            error.failure,
            "unexpected response: 2 heights for 3 points asked"
        );
        assert!(parse_heights("nan", 1).is_err());
        assert!(parse_heights("{\"elevation\":[n", 1).is_err());
    }

    /// The terrain of a fake source.
    type Terrain = fn(f64, f64) -> Option<f64>;

    /// A source answering from a table of heights, or failing; records what it was asked.
    #[derive(Debug)]
    struct Fake {
        name: &'static str,
        answer: Result<Terrain, UpstreamError>,
        asked: Mutex<Vec<Vec<(f64, f64)>>>,
    }

    impl Fake {
        fn answering(name: &'static str, height: Terrain) -> Arc<Self> {
            Arc::new(Self {
                name,
                answer: Ok(height),
                asked: Mutex::default(),
            })
        }

        fn failing(name: &'static str, failure: &str) -> Arc<Self> {
            Arc::new(Self {
                name,
                answer: Err(UpstreamError::new(UPSTREAM, failure, true)),
                asked: Mutex::default(),
            })
        }

        fn asked(&self) -> Vec<Vec<(f64, f64)>> {
            self.asked.lock().expect("lock").clone()
        }
    }

    #[async_trait]
    impl Elevations for Fake {
        fn provider(&self) -> &'static str {
            self.name
        }

        async fn probe(&self) -> Result<(), UpstreamError> {
            self.answer.as_ref().map(drop).map_err(Clone::clone)
        }

        async fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError> {
            self.asked.lock().expect("lock").push(points.to_vec());
            let height = self.answer.clone()?;
            Ok(points.iter().map(|&(lat, lon)| height(lat, lon)).collect())
        }
    }

    /// Local tiles covering latitudes below 47 only.
    fn south_of_47(lat: f64, _lon: f64) -> Option<f64> {
        (lat < 47.0).then_some(100.0)
    }

    fn everywhere(_lat: f64, _lon: f64) -> Option<f64> {
        Some(500.0)
    }

    const POINTS: [(f64, f64); 3] = [(46.5, 7.0), (47.5, 7.0), (46.9, 7.0)];

    #[tokio::test]
    async fn the_next_layer_is_asked_only_for_what_is_missing() {
        let local = Fake::answering("srtm", south_of_47);
        let api = Fake::answering("open-meteo", everywhere);
        let layered = LayeredElevations::new(vec![local.clone(), api.clone()]);
        assert_eq!(layered.provider(), "srtm");
        let found = layered
            .heights_with_providers(&POINTS)
            .await
            .expect("answered");
        assert_eq!(
            found,
            vec![
                Some((100.0, "srtm")),
                Some((500.0, "open-meteo")),
                Some((100.0, "srtm"))
            ]
        );
        assert_eq!(local.asked(), vec![POINTS.to_vec()]);
        assert_eq!(api.asked(), vec![vec![(47.5, 7.0)]]);
        assert_eq!(layered.providers_used(&found), ["srtm", "open-meteo"]);
        assert_eq!(
            layered.heights(&POINTS).await.expect("answered"),
            [Some(100.0), Some(500.0), Some(100.0)]
        );

        assert_eq!(api.asked().len(), 2);

        // Everything answered by the first: the second is not asked at all.
        let inside = [(46.0, 7.0)];
        let found = layered.heights(&inside).await.expect("answered");
        assert_eq!(found, [Some(100.0)]);
        assert_eq!(api.asked().len(), 2);
    }

    #[tokio::test]
    async fn a_failing_layer_is_passed_over_and_all_failing_fails() {
        let broken = Fake::failing("srtm", "database down");
        let api = Fake::answering("open-meteo", everywhere);
        let layered = LayeredElevations::new(vec![broken.clone(), api.clone()]);
        assert_eq!(
            layered.heights(&POINTS).await.expect("the API answers"),
            [Some(500.0); 3]
        );
        assert_eq!(api.asked(), vec![POINTS.to_vec()], "asked for every point");
        assert!(layered.probe().await.is_ok(), "one layer ready is ready");

        // An answering first layer and a failing second: what the first found stands.
        let layered = LayeredElevations::new(vec![
            Fake::answering("srtm", south_of_47),
            Fake::failing("open-meteo", "rate limited (429)"),
        ]);
        assert_eq!(
            layered.heights(&POINTS).await.expect("partial"),
            [Some(100.0), None, Some(100.0)]
        );

        let layered = LayeredElevations::new(vec![
            Fake::failing("srtm", "database down"),
            Fake::failing("open-meteo", "rate limited (429)"),
        ]);
        let error = layered.heights(&POINTS).await.expect_err("all failed");
        assert_eq!(error.failure, "rate limited (429)", "the last error");
        assert_eq!(
            layered.probe().await.expect_err("none ready").failure,
            "rate limited (429)"
        );
    }

    #[tokio::test]
    async fn no_layers_know_nothing() {
        let layered = LayeredElevations::new(Vec::new());
        assert_eq!(layered.provider(), "none");
        assert_eq!(
            layered.heights(&POINTS).await.expect("nothing to fail"),
            [None; 3]
        );
        assert_eq!(layered.heights(&[]).await.expect("empty"), []);
    }

    #[derive(Debug)]
    struct Short;

    #[async_trait]
    impl Elevations for Short {
        fn provider(&self) -> &'static str {
            "short"
        }
        async fn heights(&self, _: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError> {
            Ok(vec![Some(1.0)])
        }
    }

    #[tokio::test]
    async fn a_layer_answering_the_wrong_count_counts_as_failed() {
        let layered = LayeredElevations::new(vec![Arc::new(Short)]);
        let error = layered.heights(&POINTS).await.expect_err("contract broken");
        assert_eq!(
            error.failure,
            "unexpected response: short gave 1 heights for 3 points"
        );
        let layered = LayeredElevations::new(vec![
            Arc::new(Short),
            Fake::answering("open-meteo", everywhere),
        ]);
        assert_eq!(
            layered.heights(&POINTS).await.expect("second"),
            [Some(500.0); 3]
        );
    }
}
