//! Valhalla's `/route` and `/sources_to_targets` APIs: JSON requests with bicycle costing
//! chosen by the rider's profile, answered with one polyline6-encoded shape per leg, and
//! Valhalla's own error codes read into our upstream errors.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::polyline::decode_polyline;
use super::{
    Answered, Refusal, RideProfile, RoutePoint, RoutedPath, UPSTREAM, ask, path_length_km,
};
use crate::error::{ConfigError, UpstreamError};
use crate::http;
use crate::text::printable;

/// "Path distance exceeds the max distance limit": the request is cut and asked again.
const DISTANCE_LIMIT: i64 = 154;
/// Codes that mean "these places cannot be connected" rather than "the request is
/// malformed": 170 unconnected regions, 171 no road near a location, 172 no path within the
/// breakage distance, 440-445 no path found.
const NO_ROUTE_CODES: [i64; 9] = [170, 171, 172, 440, 441, 442, 443, 444, 445];

#[derive(Debug, Clone)]
pub struct ValhallaClient {
    http: reqwest::Client,
    route_url: Url,
    matrix_url: Url,
    status_url: Url,
    timeout: Duration,
    /// The request pace a public instance asks for (FOSSGIS: one a second), when set.
    limiter: Option<crate::limiter::RateLimiter>,
}

/// Valhalla's bicycle costing for a profile. `bicycle_type` sets the assumed tyres and
/// speed, `use_roads` how willingly it shares roads with cars (0 = cycleways and quiet
/// streets), `use_hills` how willingly it climbs, `avoid_bad_surfaces` how strongly it
/// avoids rough ones.
fn costing_options(profile: RideProfile) -> Value {
    let (bicycle_type, use_roads, use_hills, avoid_bad_surfaces) = match profile {
        // A loaded touring bike: quiet roads, smooth surfaces, hills avoided a little.
        RideProfile::Touring => ("Hybrid", 0.25, 0.3, 0.6),
        // Narrow tyres: paved roads, traffic accepted, hills too.
        RideProfile::Road => ("Road", 0.6, 0.5, 0.95),
        // Wide tyres: tracks welcome.
        RideProfile::Gravel => ("Cross", 0.2, 0.5, 0.1),
        RideProfile::Mountain => ("Mountain", 0.1, 0.8, 0.0),
    };
    json!({"bicycle": {
        "bicycle_type": bicycle_type,
        "use_roads": use_roads,
        "use_hills": use_hills,
        "avoid_bad_surfaces": avoid_bad_surfaces,
    }})
}

fn location(point: &RoutePoint) -> Value {
    json!({"lat": point.lat, "lon": point.lon})
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
            matrix_url: http::endpoint(base_url, &["sources_to_targets"])?,
            status_url: http::endpoint(base_url, &["status"])?,
            timeout,
            limiter: None,
        })
    }

    /// The same client, starting its requests at `limiter`'s pace (a public instance's
    /// usage policy); share the limiter's clones with every caller of the instance.
    pub fn with_limiter(mut self, limiter: crate::limiter::RateLimiter) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// Whether the server serves: its `/status` answers 2xx.
    pub(crate) async fn probe(&self) -> Result<(), UpstreamError> {
        let request = self.http.get(self.status_url.clone());
        http::probe(UPSTREAM, request, self.timeout, false)
            .await
            .map(drop)
    }

    /// One request through every waypoint (each a `break`: the path passes it).
    pub(crate) async fn route(
        &self,
        waypoints: &[RoutePoint],
        profile: RideProfile,
    ) -> Result<Answered<RoutedPath>, UpstreamError> {
        let request_body = json!({
            "locations": waypoints.iter().map(location).collect::<Vec<_>>(),
            "costing": "bicycle",
            "costing_options": costing_options(profile),
            "units": "kilometers",
            "directions_type": "none",
        });
        self.ask(&self.route_url, &request_body, parse_route).await
    }

    /// Routed distances, km, from every source to every target.
    pub(crate) async fn matrix(
        &self,
        sources: &[RoutePoint],
        targets: &[RoutePoint],
        profile: RideProfile,
    ) -> Result<Vec<Vec<Option<f64>>>, UpstreamError> {
        let request_body = json!({
            "sources": sources.iter().map(location).collect::<Vec<_>>(),
            "targets": targets.iter().map(location).collect::<Vec<_>>(),
            "costing": "bicycle",
            "costing_options": costing_options(profile),
            "units": "kilometers",
        });
        let parse = |body: &str| parse_matrix(body, sources.len(), targets.len());
        match self.ask(&self.matrix_url, &request_body, parse).await? {
            Answered::Parsed(distances) => Ok(distances),
            Answered::TooLong => Err(UpstreamError::new(
                UPSTREAM,
                "no route: the places are too far apart for one distance matrix",
                false,
            )),
        }
    }

    /// Posts a JSON request at the instance's pace, reading Valhalla's error bodies.
    async fn ask<T>(
        &self,
        url: &Url,
        request_body: &Value,
        parse: impl FnOnce(&str) -> Result<T, UpstreamError>,
    ) -> Result<Answered<T>, UpstreamError> {
        let request = self.http.post(url.clone()).json(request_body);
        let read_refusal = |answer: &http::Answer| {
            read_error(&answer.body, answer.status).map(|read| match read {
                Ok(()) => Refusal::TooLong,
                Err(error) => Refusal::Failed(error),
            })
        };
        ask(
            request,
            self.timeout,
            self.limiter.as_ref(),
            read_refusal,
            parse,
        )
        .await
    }
}

#[derive(Debug, Deserialize)]
struct ErrorAnswer {
    error_code: i64,
    #[serde(default)]
    error: Option<String>,
}

/// Valhalla's error body `{error_code, error, status_code}` read into what it means:
/// `Some(Ok(()))` for the distance limit (cut and ask again), `Some(Err)` for an error we
/// can name, `None` when the body is not Valhalla's (the status decides). Server errors stay
/// retryable whatever the body says.
fn read_error(body: &str, status: reqwest::StatusCode) -> Option<Result<(), UpstreamError>> {
    let answer: ErrorAnswer = serde_json::from_str(body).ok()?;
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    if answer.error_code == DISTANCE_LIMIT {
        return Some(Ok(()));
    }
    let detail = answer
        .error
        .as_deref()
        .and_then(|text| printable(text, 200))
        .unwrap_or_else(|| "no detail".to_owned());
    let code = answer.error_code;
    let failure = if NO_ROUTE_CODES.contains(&code) {
        let hint = match code {
            171 => "; a place is off the router's map or far from any road it may use",
            170 => "; the places lie in parts of the map no road joins",
            _ => "",
        };
        format!("no route: {detail} (code {code}){hint}")
    } else {
        tracing::warn!(code, %detail, "valhalla refused the request");
        format!("refused the request: {detail} (code {code})")
    };
    Some(Err(UpstreamError::new(UPSTREAM, failure, false)))
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

#[derive(Debug, Deserialize)]
struct MatrixAnswer {
    sources_to_targets: Vec<Vec<MatrixCell>>,
}

#[derive(Debug, Deserialize)]
struct MatrixCell {
    #[serde(default)]
    distance: Option<f64>,
    from_index: usize,
    to_index: usize,
}

fn parse_matrix(
    body: &str,
    sources: usize,
    targets: usize,
) -> Result<Vec<Vec<Option<f64>>>, UpstreamError> {
    let answer: MatrixAnswer = http::parse_json(UPSTREAM, body)?;
    let mut out = vec![vec![None; targets]; sources];
    for cell in answer.sources_to_targets.into_iter().flatten() {
        let slot = out
            .get_mut(cell.from_index)
            .and_then(|row| row.get_mut(cell.to_index))
            .ok_or_else(|| UpstreamError::unexpected(UPSTREAM, "matrix index out of range"))?;
        *slot = cell.distance.filter(|d| d.is_finite() && *d >= 0.0);
    }
    Ok(out)
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
    fn valhalla_errors_read_as_what_they_mean() {
        let bad = reqwest::StatusCode::BAD_REQUEST;
        let read = |body: &str| read_error(body, bad);
        assert!(matches!(
            read(
                r#"{"error_code":154,"error":"Path distance exceeds the max distance limit","status_code":400}"#
            ),
            Some(Ok(()))
        ));
        let off_map = read(
            r#"{"error_code":171,"error":"No suitable edges near location","status_code":400}"#,
        )
        .and_then(Result::err)
        .expect("no route");
        assert!(off_map.failure.starts_with("no route: No suitable edges near location (code 171); a place is off the router's map"), "{}", off_map.failure);
        assert!(!off_map.retryable);
        let malformed =
            read(r#"{"error_code":100,"error":"Failed to parse json request","status_code":400}"#)
                .and_then(Result::err)
                .expect("refused");
        assert_eq!(
            malformed.failure,
            "refused the request: Failed to parse json request (code 100)"
        );
        assert!(read("<html>").is_none());
        // A server error stays a retryable server error, whatever its body says.
        assert!(
            read_error(
                r#"{"error_code":171,"error":"x"}"#,
                reqwest::StatusCode::SERVICE_UNAVAILABLE
            )
            .is_none()
        );
    }

    #[test]
    fn a_matrix_answer_is_read_by_its_indices() {
        let body = r#"{"sources_to_targets":[[{"from_index":0,"to_index":1,"distance":null},{"from_index":0,"to_index":0,"distance":3.652}]]}"#;
        assert_eq!(
            parse_matrix(body, 1, 2).expect("matrix"),
            vec![vec![Some(3.652), None]]
        );
        let wrong = r#"{"sources_to_targets":[[{"from_index":3,"to_index":0,"distance":1.0}]]}"#;
        assert!(parse_matrix(wrong, 1, 1).is_err());
    }

    #[test]
    fn each_profile_has_its_costing() {
        let road = costing_options(RideProfile::Road);
        assert_eq!(road["bicycle"]["bicycle_type"], "Road");
        let gravel = costing_options(RideProfile::Gravel);
        assert!(
            gravel["bicycle"]["avoid_bad_surfaces"].as_f64()
                < road["bicycle"]["avoid_bad_surfaces"].as_f64()
        );
    }
}
