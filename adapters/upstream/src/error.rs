//! The one error type every adapter returns, and the single place where
//! transport errors and HTTP statuses are turned into it, so that the wording
//! and the retry decision are the same for every upstream.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;
use serde::{Deserialize, Serialize};

/// Which third-party service failed; serialised for API clients and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Upstream {
    Geocoder,
    Router,
    Accommodations,
    /// The weather forecast (Open-Meteo).
    Weather,
    /// OpenStreetMap features along the route through Overpass.
    Overpass,
    /// The local OpenStreetMap index (`etappe osm import`).
    OsmIndex,
    /// Terrain heights: the Open-Meteo elevation API or the local SRTM tiles.
    Elevation,
}

impl Upstream {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Geocoder => "geocoder",
            Self::Router => "router",
            Self::Accommodations => "accommodations",
            Self::Weather => "weather",
            Self::Overpass => "overpass",
            Self::OsmIndex => "osm_index",
            Self::Elevation => "elevation",
        }
    }
}

impl fmt::Display for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed upstream call. `failure` is short and safe to show to a user;
/// `retryable` tells the caller whether the same request may succeed later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct UpstreamError {
    pub upstream: Upstream,
    pub failure: String,
    pub retryable: bool,
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let advice = if self.retryable {
            "trying again later may help"
        } else {
            "trying again will not help"
        };
        write!(
            f,
            "the {} upstream failed: {}; {advice}",
            self.upstream, self.failure
        )
    }
}

impl UpstreamError {
    pub fn new(upstream: Upstream, failure: impl Into<String>, retryable: bool) -> Self {
        Self {
            upstream,
            failure: failure.into(),
            retryable,
        }
    }

    /// Classifies an error raised by reqwest while sending or reading.
    /// `timeout` is the limit the adapter set, so the message can name it.
    pub fn from_transport(upstream: Upstream, error: &reqwest::Error, timeout: Duration) -> Self {
        if error.is_timeout() {
            return Self::new(
                upstream,
                format!("timeout after {}", format_seconds(timeout)),
                true,
            );
        }
        if error.is_connect() {
            return Self::new(
                upstream,
                format!("unreachable: {}", innermost_cause(error)),
                true,
            );
        }
        if error.is_decode() {
            return Self::unexpected(upstream, innermost_cause(error));
        }
        // Resets and truncated bodies mid-transfer are usually transient.
        Self::new(
            upstream,
            format!("transport failure: {}", innermost_cause(error)),
            true,
        )
    }

    /// Classifies a non-success HTTP status. Returns `None` for 2xx.
    pub fn from_status(
        upstream: Upstream,
        status: StatusCode,
        retry_after: Option<Duration>,
    ) -> Option<Self> {
        if status.is_success() {
            return None;
        }
        let code = status.as_u16();
        let error = if status == StatusCode::TOO_MANY_REQUESTS {
            let failure = match retry_after {
                Some(wait) => format!("rate limited (429), retry after {}s", wait.as_secs()),
                None => "rate limited (429)".to_owned(),
            };
            Self::new(upstream, failure, true)
        } else if status.is_server_error() {
            Self::new(upstream, format!("server error {code}"), true)
        } else if status == StatusCode::REQUEST_TIMEOUT {
            // 408 is the server giving up on a slow request, not refusing it.
            Self::new(upstream, format!("server error {code}"), true)
        } else {
            Self::new(upstream, format!("refused the request ({code})"), false)
        };
        Some(error)
    }

    /// The upstream answered, but not in a shape we understand.
    pub fn unexpected(upstream: Upstream, detail: impl fmt::Display) -> Self {
        Self::new(upstream, format!("unexpected response: {detail}"), false)
    }

    /// The caller asked for something no upstream could answer.
    pub fn invalid_request(upstream: Upstream, detail: impl fmt::Display) -> Self {
        Self::new(upstream, format!("invalid request: {detail}"), false)
    }
}

/// A misconfigured adapter: found once at start-up rather than on every call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid base URL {url:?}: {reason}")]
    InvalidBaseUrl { url: String, reason: String },
    #[error("invalid header value for {header}")]
    InvalidHeader { header: &'static str },
    #[error("a non-empty, identifying User-Agent is required")]
    MissingUserAgent,
    #[error("invalid routing profile {0:?}")]
    InvalidProfile(String),
}

/// Parses a `Retry-After` value: delta-seconds or an HTTP date (RFC 9110).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = parse_imf_fixdate(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    // A date already past means "retry now" rather than an unparseable header.
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Parses "Sun, 06 Nov 1994 08:49:37 GMT" into Unix seconds. The obsolete
/// RFC 850 and asctime forms are not accepted: servers must not send them.
fn parse_imf_fixdate(value: &str) -> Option<u64> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: u64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if parts.next()? != "GMT" || parts.next().is_some() || clock.next().is_some() {
        return None;
    }
    if !(1970..=9999).contains(&year)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_since_epoch(year, month, day);
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (year >= 1970).
fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    let is_leap = |y: u64| (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
    let whole_years: u64 = (1970..year)
        .map(|y| if is_leap(y) { 366 } else { 365 })
        .sum();
    const CUMULATIVE: [u64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let month_index = usize::try_from(month - 1).unwrap_or(0);
    let mut days = whole_years + CUMULATIVE.get(month_index).copied().unwrap_or(0) + day - 1;
    if month > 2 && is_leap(year) {
        days += 1;
    }
    days
}

/// "5s" for whole seconds, "0.5s" otherwise, so short test timeouts still read well.
fn format_seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// reqwest's own message ("error sending request") hides the useful part,
/// such as "Connection refused" or the DNS failure, in the source chain.
fn innermost_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    crate::text::printable(&cause.to_string(), 200).unwrap_or_else(|| "unknown cause".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_to_the_documented_shape() {
        let error = UpstreamError::new(Upstream::Geocoder, "timeout after 5s", true);
        let json = serde_json::to_string(&error).expect("serialise");
        assert_eq!(
            json,
            r#"{"upstream":"geocoder","failure":"timeout after 5s","retryable":true}"#
        );
        let names: Vec<String> = [Upstream::Router, Upstream::Accommodations]
            .iter()
            .map(|u| serde_json::to_string(u).expect("serialise"))
            .collect();
        assert_eq!(names, [r#""router""#, r#""accommodations""#]);
    }

    #[test]
    fn display_is_a_sentence_naming_upstream_and_advice() {
        let error = UpstreamError::new(Upstream::Router, "server error 502", true);
        assert_eq!(
            error.to_string(),
            "the router upstream failed: server error 502; trying again later may help"
        );
        let refused = UpstreamError::new(Upstream::Geocoder, "refused the request (400)", false);
        assert!(refused.to_string().ends_with("trying again will not help"));
    }

    #[test]
    fn statuses_are_classified() {
        let classify = |code: u16, wait: Option<u64>| {
            UpstreamError::from_status(
                Upstream::Geocoder,
                StatusCode::from_u16(code).expect("status"),
                wait.map(Duration::from_secs),
            )
        };
        assert_eq!(classify(200, None), None);
        let limited = classify(429, Some(30)).expect("error");
        assert_eq!(limited.failure, "rate limited (429), retry after 30s");
        assert!(limited.retryable);
        assert_eq!(
            classify(429, None).expect("error").failure,
            "rate limited (429)"
        );
        for code in [500, 502, 503, 504] {
            let error = classify(code, None).expect("error");
            assert_eq!(error.failure, format!("server error {code}"));
            assert!(error.retryable);
        }
        let refused = classify(403, None).expect("error");
        assert_eq!(refused.failure, "refused the request (403)");
        assert!(!refused.retryable);
    }

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(
            parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_imf_fixdate("Thu, 29 Feb 2024 00:00:00 GMT"),
            Some(1_709_164_800)
        );
        assert_eq!(parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 CET"), None);
        // A date in the past means "retry now", not an error.
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn fractional_timeouts_stay_readable() {
        assert_eq!(format_seconds(Duration::from_secs(5)), "5s");
        assert_eq!(format_seconds(Duration::from_millis(500)), "0.5s");
    }
}
