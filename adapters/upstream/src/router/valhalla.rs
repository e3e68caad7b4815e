//! Valhalla's `/route` API: a JSON request with bicycle costing, answered
//! with one polyline6-encoded shape per leg.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::polyline::decode_polyline;
use super::{RoutePoint, RoutedPath, UPSTREAM, path_length_km};
use crate::error::{ConfigError, UpstreamError};
use crate::http;
use crate::text::printable;

/// Valhalla's error codes that mean "these points cannot be connected"
/// rather than "your request is malformed": 154 distance limit, 171/172
/// no road near a location, 440-444 no path found.
const NO_ROUTE_CODES: [i64; 8] = [154, 171, 172, 440, 441, 442, 443, 444];

#[derive(Debug, Clone)]
pub struct ValhallaClient {
    http: reqwest::Client,
    route_url: Url,
    status_url: Url,
    timeout: Duration,
}

impl ValhallaClient {
    pub fn new(
        client: reqwest::Client,
        base_url: &str,
        timeout: Duration,
    ) -> Result<Self, ConfigError> {
        Ok(Self {
            http: client,
            route_url: http::endpoint(base_url, &["route"])?,
            status_url: http::endpoint(base_url, &["status"])?,
            timeout,
        })
    }

    /// Whether the server serves: its `/status` answers 2xx.
    pub(crate) async fn probe(&self) -> Result<(), UpstreamError> {
        let request = self.http.get(self.status_url.clone());
        http::probe(UPSTREAM, request, self.timeout, false)
            .await
            .map(drop)
    }

    pub(crate) async fn route(
        &self,
        waypoints: &[RoutePoint],
    ) -> Result<RoutedPath, UpstreamError> {
        let locations: Vec<_> = waypoints
            .iter()
            .map(|p| json!({ "lat": p.lat, "lon": p.lon }))
            .collect();
        let request_body = json!({
            "locations": locations,
            "costing": "bicycle",
            "units": "kilometers",
        });
        let request = self.http.post(self.route_url.clone()).json(&request_body);
        let answer = http::send(UPSTREAM, request, self.timeout).await?;
        if answer.status.is_client_error()
            && let Some(error) = no_route_error(&answer.body)
        {
            return Err(error);
        }
        let body = answer.into_success_body(UPSTREAM)?;
        parse_route(&body)
    }
}

#[derive(Debug, Deserialize)]
struct ErrorAnswer {
    error_code: i64,
    #[serde(default)]
    error: Option<String>,
}

fn no_route_error(body: &str) -> Option<UpstreamError> {
    let answer: ErrorAnswer = serde_json::from_str(body).ok()?;
    if !NO_ROUTE_CODES.contains(&answer.error_code) {
        tracing::warn!(code = answer.error_code, error = ?answer.error, "valhalla refused the request");
        return None;
    }
    let detail = answer
        .error
        .as_deref()
        .and_then(|text| printable(text, 200))
        .unwrap_or_else(|| "no path found".to_owned());
    Some(UpstreamError::new(
        UPSTREAM,
        format!("no route: {detail} (code {})", answer.error_code),
        false,
    ))
}

#[derive(Debug, Deserialize)]
struct RouteAnswer {
    trip: Trip,
}

#[derive(Debug, Deserialize)]
struct Trip {
    legs: Vec<Leg>,
    #[serde(default)]
    summary: Option<Summary>,
    #[serde(default)]
    status: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct Leg {
    shape: String,
}

#[derive(Debug, Deserialize)]
struct Summary {
    /// Kilometres, because the request asks for them.
    length: f64,
}

fn parse_route(body: &str) -> Result<RoutedPath, UpstreamError> {
    let answer: RouteAnswer = http::parse_json(UPSTREAM, body)?;
    let trip = answer.trip;
    if trip.status.is_some_and(|status| status != 0) {
        return Err(UpstreamError::unexpected(UPSTREAM, "trip status is not 0"));
    }
    let mut points: Vec<RoutePoint> = Vec::new();
    for leg in &trip.legs {
        let shape = decode_polyline(&leg.shape, 6).map_err(|error| {
            UpstreamError::unexpected(UPSTREAM, format!("bad leg shape: {error}"))
        })?;
        // Each leg starts where the previous one ended; keep that point once.
        let skip = usize::from(
            matches!((points.last(), shape.first()), (Some(last), Some(first)) if last.lat == first.0 && last.lon == first.1),
        );
        points.extend(
            shape
                .into_iter()
                .skip(skip)
                .map(|(lat, lon)| RoutePoint::new(lat, lon)),
        );
    }
    if points.len() < 2 {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            "route has fewer than two points",
        ));
    }
    let distance_km = match trip.summary {
        Some(summary) if summary.length.is_finite() && summary.length >= 0.0 => summary.length,
        _ => path_length_km(&points),
    };
    Ok(RoutedPath {
        points,
        distance_km,
        estimated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::super::polyline::encode_polyline;
    use super::*;

    #[test]
    fn joins_legs_without_repeating_the_waypoint() {
        let first = encode_polyline(&[(48.0, 7.8), (48.01, 7.8)], 6);
        let second = encode_polyline(&[(48.01, 7.8), (48.01, 7.81)], 6);
        let body = format!(
            r#"{{"trip":{{"legs":[{{"shape":"{first}"}},{{"shape":"{second}"}}],"status":0,"summary":{{"length":1.9}}}}}}"#
        );
        let path = parse_route(&body).expect("parse");
        assert_eq!(path.points.len(), 3);
        assert_eq!(path.distance_km, 1.9);
        assert!(!path.estimated);
    }

    #[test]
    fn undecodable_shapes_are_errors() {
        let body = r#"{"trip":{"legs":[{"shape":"_izlhA"}],"status":0}}"#;
        let error = parse_route(body).expect_err("must fail");
        assert!(
            error
                .failure
                .starts_with("unexpected response: bad leg shape")
        );
    }

    #[test]
    fn other_error_codes_are_not_no_route() {
        assert!(
            no_route_error(
                r#"{"error_code":100,"error":"Failed to parse json request","status_code":400}"#
            )
            .is_none()
        );
        assert!(no_route_error("<html>").is_none());
    }
}
