//! BRouter's HTTP API (`/brouter?lonlats=…&format=geojson`), which answers
//! with a GeoJSON FeatureCollection whose first feature is the track.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::{
    Answered, Refusal, RideProfile, RoutePoint, RoutedPath, UPSTREAM, ask, path_length_km,
};
use crate::error::{ConfigError, UpstreamError};
use crate::geo::is_valid_position;
use crate::http;
use crate::text::printable;

#[derive(Debug, Clone)]
pub struct BRouterClient {
    http: reqwest::Client,
    route_url: Url,
    profile: String,
    timeout: Duration,
}

impl BRouterClient {
    /// Uses the standard "trekking" (touring bike) profile.
    pub fn new(
        client: reqwest::Client,
        base_url: &str,
        timeout: Duration,
    ) -> Result<Self, ConfigError> {
        Ok(Self {
            http: client,
            route_url: http::endpoint(base_url, &["brouter"])?,
            profile: "trekking".to_owned(),
            timeout,
        })
    }

    /// Another installed profile, e.g. "fastbike". Names are checked because
    /// they end up in the query string.
    pub fn with_profile(mut self, profile: &str) -> Result<Self, ConfigError> {
        let valid = !profile.is_empty()
            && profile.len() <= 64
            && profile
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
        if !valid {
            return Err(ConfigError::InvalidProfile(profile.to_owned()));
        }
        profile.clone_into(&mut self.profile);
        Ok(self)
    }

    /// Whether the server is reachable: BRouter has no status page, so any HTTP answer to
    /// its route endpoint (without a route asked, an error text) proves it listens.
    pub(crate) async fn probe(&self) -> Result<(), UpstreamError> {
        let request = self.http.get(self.route_url.clone());
        http::probe(UPSTREAM, request, self.timeout, true)
            .await
            .map(drop)
    }

    /// The installed profile a ride profile uses: the one configured with
    /// [`BRouterClient::with_profile`] for touring, else BRouter's standard ones. BRouter ships
    /// no standard mountain-bike profile, so a mountain plan rides its gravel one.
    fn profile_for(&self, profile: RideProfile) -> &str {
        match profile {
            RideProfile::Touring => &self.profile,
            RideProfile::Road => "fastbike",
            RideProfile::Gravel | RideProfile::Mountain => "gravel",
        }
    }

    pub(crate) async fn route(
        &self,
        waypoints: &[RoutePoint],
        profile: RideProfile,
    ) -> Result<Answered<RoutedPath>, UpstreamError> {
        let lonlats: Vec<String> = waypoints
            .iter()
            .map(|p| format!("{:.6},{:.6}", p.lon, p.lat))
            .collect();
        // Set verbatim: BRouter's examples and web client send "|" and ","
        // unescaped, and these characters are valid in a query as they are.
        let mut url = self.route_url.clone();
        url.set_query(Some(&format!(
            "lonlats={}&profile={}&alternativeidx=0&format=geojson",
            lonlats.join("|"),
            self.profile_for(profile)
        )));
        // BRouter explains every failure as plain text in a 400 answer.
        let read_refusal = |answer: &http::Answer| {
            (answer.status == reqwest::StatusCode::BAD_REQUEST)
                .then(|| no_route_error(&answer.body))
                .flatten()
                .map(Refusal::Failed)
        };
        ask(
            self.http.get(url),
            self.timeout,
            None,
            read_refusal,
            parse_geojson,
        )
        .await
    }
}

fn no_route_error(message: &str) -> Option<UpstreamError> {
    let lowered = message.to_lowercase();
    let no_route = ["not mapped", "no track found", "island"]
        .iter()
        .any(|marker| lowered.contains(marker));
    no_route.then(|| {
        let detail = printable(message, 200).unwrap_or_default();
        UpstreamError::new(UPSTREAM, format!("no route: {detail}"), false)
    })
}

#[derive(Debug, Deserialize)]
struct FeatureCollection {
    features: Vec<Feature>,
}

#[derive(Debug, Deserialize)]
struct Feature {
    geometry: Geometry,
    #[serde(default)]
    properties: Properties,
}

#[derive(Debug, Deserialize)]
struct Geometry {
    #[serde(rename = "type")]
    kind: String,
    coordinates: Vec<Vec<f64>>,
}

#[derive(Debug, Default, Deserialize)]
struct Properties {
    /// Metres, sent as a string ("12345").
    #[serde(rename = "track-length", default)]
    track_length: Option<serde_json::Value>,
}

fn parse_geojson(body: &str) -> Result<RoutedPath, UpstreamError> {
    let collection: FeatureCollection = http::parse_json(UPSTREAM, body)?;
    let Some(track) = collection.features.into_iter().next() else {
        return Err(UpstreamError::unexpected(UPSTREAM, "no features"));
    };
    if track.geometry.kind != "LineString" {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            "first feature is not a LineString",
        ));
    }
    let points = track
        .geometry
        .coordinates
        .iter()
        .map(|position| match position.as_slice() {
            [lon, lat, rest @ ..] if is_valid_position(*lat, *lon) => Some(RoutePoint {
                lat: *lat,
                lon: *lon,
                ele: rest.first().copied().filter(|ele| ele.is_finite()),
            }),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| UpstreamError::unexpected(UPSTREAM, "invalid coordinate in track"))?;
    if points.len() < 2 {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            "track has fewer than two points",
        ));
    }
    let stated_m = track
        .properties
        .track_length
        .as_ref()
        .and_then(|value| match value {
            serde_json::Value::String(text) => text.trim().parse::<f64>().ok(),
            serde_json::Value::Number(number) => number.as_f64(),
            _ => None,
        });
    let distance_km = match stated_m {
        Some(metres) if metres.is_finite() && metres >= 0.0 => metres / 1000.0,
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
    use super::*;

    #[test]
    fn missing_track_length_is_measured_from_the_geometry() {
        let body = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},
            "geometry":{"type":"LineString","coordinates":[[7.8,48.0],[7.8,48.01,250.5]]}}]}"#;
        let path = parse_geojson(body).expect("parse");
        assert!(
            (path.distance_km - 1.112).abs() < 0.01,
            "{}",
            path.distance_km
        );
        assert_eq!(path.points[0].ele, None);
        assert_eq!(path.points[1].ele, Some(250.5));
    }

    #[test]
    fn rejects_tracks_that_are_not_lines() {
        let point = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},
            "geometry":{"type":"LineString","coordinates":[[7.8]]}}]}"#;
        assert!(parse_geojson(point).is_err());
        assert!(parse_geojson(r#"{"type":"FeatureCollection","features":[]}"#).is_err());
    }

    #[test]
    fn unmapped_positions_mean_no_route() {
        let error =
            no_route_error("from-position not mapped in existing datafile\n").expect("no route");
        assert_eq!(
            error.failure,
            "no route: from-position not mapped in existing datafile"
        );
        assert!(!error.retryable);
        assert!(no_route_error("operation killed by thread-priority-watchdog").is_none());
    }
}
