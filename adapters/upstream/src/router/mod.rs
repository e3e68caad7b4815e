//! Re-routing a day through a waypoint (an accommodation, a shop, a sight).
//! BRouter and Valhalla give real cycling routes; the offline router is the
//! embedded default that always answers, with straight lines flagged as estimates.

mod brouter;
mod offline;
mod polyline;
mod valhalla;

use serde::{Deserialize, Serialize};

pub use brouter::BRouterClient;
pub use offline::spur_detour;
pub use polyline::{PolylineError, decode_polyline};
pub use valhalla::ValhallaClient;

use crate::error::{Upstream, UpstreamError};
use crate::geo::{haversine_m, is_valid_position};

const UPSTREAM: Upstream = Upstream::Router;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoutePoint {
    pub lat: f64,
    pub lon: f64,
    /// Metres above sea level, when the source knows it.
    pub ele: Option<f64>,
}

impl RoutePoint {
    pub fn new(lat: f64, lon: f64) -> Self {
        Self {
            lat,
            lon,
            ele: None,
        }
    }

    pub fn with_ele(lat: f64, lon: f64, ele: f64) -> Self {
        Self {
            lat,
            lon,
            ele: Some(ele),
        }
    }

    pub fn distance_m(&self, other: &Self) -> f64 {
        haversine_m(self.lat, self.lon, other.lat, other.lon)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutedPath {
    pub points: Vec<RoutePoint>,
    pub distance_km: f64,
    /// True when the path is a straight-line guess rather than a routed way.
    pub estimated: bool,
}

/// The routing backend chosen by configuration.
#[derive(Debug, Clone, Default)]
pub enum Router {
    BRouter(BRouterClient),
    Valhalla(ValhallaClient),
    #[default]
    Offline,
}

impl Router {
    /// Whether the configured router serves (the offline spur always does).
    pub async fn probe(&self) -> Result<(), UpstreamError> {
        match self {
            Self::BRouter(client) => client.probe().await,
            Self::Valhalla(client) => client.probe().await,
            Self::Offline => Ok(()),
        }
    }

    /// A path from `from` through `via` to `to`.
    pub async fn route_via(
        &self,
        from: RoutePoint,
        via: RoutePoint,
        to: RoutePoint,
    ) -> Result<RoutedPath, UpstreamError> {
        let waypoints = [from, via, to];
        if !waypoints.iter().all(|p| is_valid_position(p.lat, p.lon)) {
            return Err(UpstreamError::invalid_request(
                UPSTREAM,
                "coordinates out of range",
            ));
        }
        match self {
            Self::BRouter(client) => client.route(&waypoints).await,
            Self::Valhalla(client) => client.route(&waypoints).await,
            Self::Offline => Ok(offline::straight_path(&waypoints)),
        }
    }
}

/// Length of a polyline in kilometres, for answers that don't state one.
fn path_length_km(points: &[RoutePoint]) -> f64 {
    points
        .windows(2)
        .map(|pair| pair[0].distance_m(&pair[1]))
        .sum::<f64>()
        / 1000.0
}
