//! Routing: planning a route from places, and the spur of a detour to a waypoint.
//! Valhalla (the primary engine) and BRouter give real cycling routes; the offline router is
//! the embedded default, which plans nothing and draws detours as straight spurs flagged as
//! estimates.
//!
//! Engines refuse requests whose places lie too far apart (Valhalla's
//! `service_limits.bicycle.max_distance`, 500 km by default, summed over the straight lines
//! between consecutive locations). A long plan is therefore asked in legs ([`legs`]), and a
//! leg the engine still finds too long is cut in two and asked again, so the operator's
//! limit need not be known here.

mod brouter;
mod offline;
mod polyline;
mod valhalla;

use std::collections::VecDeque;
use std::time::Duration;

use reqwest::RequestBuilder;
use serde::{Deserialize, Serialize};

pub use brouter::BRouterClient;
pub use etappe_domain::trip::plan::RideProfile;
pub use offline::spur_detour;
pub use polyline::{PolylineError, decode_polyline};
pub use valhalla::ValhallaClient;

use crate::error::{Upstream, UpstreamError};
use crate::geo::{haversine_m, is_valid_position};
use crate::http::{self, Answer};
use crate::limiter::RateLimiter;

const UPSTREAM: Upstream = Upstream::Router;

/// The straight-line length of one request's legs together, km: below Valhalla's default
/// limit (500 km), so a public instance is not asked what it refuses.
pub const DEFAULT_MAX_LEG_KM: f64 = 400.0;
/// How often a leg the engine calls too long is cut in two before giving up (2⁸ pieces).
const MAX_SPLITS: u32 = 8;

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

    /// The point half way along the great circle to `other`.
    fn midpoint(&self, other: &Self) -> Self {
        let (lat1, lon1) = (self.lat.to_radians(), self.lon.to_radians());
        let (lat2, lon2) = (other.lat.to_radians(), other.lon.to_radians());
        let dlon = lon2 - lon1;
        let bx = lat2.cos() * dlon.cos();
        let by = lat2.cos() * dlon.sin();
        let lat = (lat1.sin() + lat2.sin()).atan2(((lat1.cos() + bx).powi(2) + by * by).sqrt());
        let lon = lon1 + by.atan2(lat1.cos() + bx);
        Self::new(lat.to_degrees(), lon.to_degrees())
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

impl RoutedPath {
    /// Paths one after the other: where one ends the next starts, kept once.
    pub fn join(paths: Vec<RoutedPath>) -> RoutedPath {
        let mut joined = RoutedPath {
            points: Vec::new(),
            distance_km: 0.0,
            estimated: false,
        };
        for path in paths {
            let skip = usize::from(matches!(
                (joined.points.last(), path.points.first()),
                (Some(last), Some(first)) if last.distance_m(first) < 0.5
            ));
            joined.points.extend(path.points.into_iter().skip(skip));
            joined.distance_km += path.distance_km;
            joined.estimated |= path.estimated;
        }
        joined
    }
}

/// What an engine answered to one request: its answer, or "these places are too far apart
/// for one request" (a route is cut and asked again).
#[derive(Debug)]
pub(crate) enum Answered<T> {
    Parsed(T),
    TooLong,
}

/// What an engine reads from the body of an answer that is not a success.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The places are too far apart for one request.
    TooLong,
    /// An error the engine's body names (no route, a malformed request).
    Failed(UpstreamError),
}

/// The shape every engine request shares: waits for the engine's pace when it has one,
/// sends through the shared HTTP client within `timeout`, lets the engine read its own
/// refusal from a failed answer (`read_refusal`; `None` leaves it to the status), and parses
/// a success with the engine's `parse`. Each client keeps only its format.
async fn ask<T>(
    request: RequestBuilder,
    timeout: Duration,
    limiter: Option<&RateLimiter>,
    read_refusal: impl FnOnce(&Answer) -> Option<Refusal>,
    parse: impl FnOnce(&str) -> Result<T, UpstreamError>,
) -> Result<Answered<T>, UpstreamError> {
    if let Some(limiter) = limiter {
        limiter.acquire().await;
    }
    let answer = http::send(UPSTREAM, request, timeout).await?;
    if !answer.status.is_success()
        && let Some(refusal) = read_refusal(&answer)
    {
        return match refusal {
            Refusal::TooLong => Ok(Answered::TooLong),
            Refusal::Failed(error) => Err(error),
        };
    }
    let body = answer.into_success_body(UPSTREAM)?;
    parse(&body).map(Answered::Parsed)
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
    /// The engine's name as recorded on a detour and shown in statuses.
    pub fn name(&self) -> &'static str {
        match self {
            Self::BRouter(_) => "brouter",
            Self::Valhalla(_) => "valhalla",
            Self::Offline => "offline",
        }
    }

    /// Whether a real engine is configured (the offline router plans nothing).
    pub fn routes(&self) -> bool {
        !matches!(self, Self::Offline)
    }

    /// Whether the configured router serves (the offline spur always does).
    pub async fn probe(&self) -> Result<(), UpstreamError> {
        match self {
            Self::BRouter(client) => client.probe().await,
            Self::Valhalla(client) => client.probe().await,
            Self::Offline => Ok(()),
        }
    }

    /// A path from `from` through `via` to `to` on the touring profile.
    pub async fn route_via(
        &self,
        from: RoutePoint,
        via: RoutePoint,
        to: RoutePoint,
    ) -> Result<RoutedPath, UpstreamError> {
        match self {
            Self::Offline => {
                check_positions(&[from, via, to])?;
                Ok(offline::straight_path(&[from, via, to]))
            }
            _ => self.route(&[from, via, to], RideProfile::Touring).await,
        }
    }

    /// One routed path through every waypoint in order (each one is passed, not skipped).
    /// A request the engine finds too long is cut in two and asked again, up to
    /// [`MAX_SPLITS`] times. The offline router refuses: it cannot route.
    pub async fn route(
        &self,
        waypoints: &[RoutePoint],
        profile: RideProfile,
    ) -> Result<RoutedPath, UpstreamError> {
        check_positions(waypoints)?;
        if waypoints.len() < 2 {
            return Err(UpstreamError::invalid_request(
                UPSTREAM,
                "a route needs at least two places",
            ));
        }
        let mut pending: VecDeque<(Vec<RoutePoint>, u32)> =
            VecDeque::from([(waypoints.to_vec(), 0)]);
        let mut routed = Vec::new();
        while let Some((piece, splits)) = pending.pop_front() {
            match self.attempt(&piece, profile).await? {
                Answered::Parsed(path) => routed.push(path),
                Answered::TooLong if splits < MAX_SPLITS => {
                    let (first, second) = halve(&piece);
                    pending.push_front((second, splits + 1));
                    pending.push_front((first, splits + 1));
                }
                Answered::TooLong => {
                    return Err(UpstreamError::new(
                        UPSTREAM,
                        format!(
                            "no route: the router refuses these places as too far apart even in {} pieces",
                            1 << MAX_SPLITS
                        ),
                        false,
                    ));
                }
            }
        }
        Ok(RoutedPath::join(routed))
    }

    async fn attempt(
        &self,
        waypoints: &[RoutePoint],
        profile: RideProfile,
    ) -> Result<Answered<RoutedPath>, UpstreamError> {
        match self {
            Self::BRouter(client) => client.route(waypoints, profile).await,
            Self::Valhalla(client) => client.route(waypoints, profile).await,
            Self::Offline => Err(UpstreamError::new(
                UPSTREAM,
                "no routing engine is configured (ETAPPE_ROUTER=offline)",
                false,
            )),
        }
    }

    /// Routed distances, km, from each source to each target (`None` where the engine found
    /// no way); `Ok(None)` when the engine has no matrix service (BRouter, offline), so the
    /// caller falls back to asking single routes.
    pub async fn distances(
        &self,
        sources: &[RoutePoint],
        targets: &[RoutePoint],
        profile: RideProfile,
    ) -> Result<Option<Vec<Vec<Option<f64>>>>, UpstreamError> {
        check_positions(sources)?;
        check_positions(targets)?;
        match self {
            Self::Valhalla(client) => client.matrix(sources, targets, profile).await.map(Some),
            Self::BRouter(_) | Self::Offline => Ok(None),
        }
    }
}

fn check_positions(points: &[RoutePoint]) -> Result<(), UpstreamError> {
    if points.iter().all(|p| is_valid_position(p.lat, p.lon)) {
        Ok(())
    } else {
        Err(UpstreamError::invalid_request(
            UPSTREAM,
            "coordinates out of range",
        ))
    }
}

/// Cuts a request in two: between its middle waypoints, or, for two places, at the great
/// circle's midpoint (the engine snaps it to the nearest road).
fn halve(piece: &[RoutePoint]) -> (Vec<RoutePoint>, Vec<RoutePoint>) {
    if piece.len() >= 3 {
        let middle = piece.len() / 2;
        (piece[..=middle].to_vec(), piece[middle..].to_vec())
    } else {
        let (a, b) = (piece[0], piece[piece.len() - 1]);
        let m = a.midpoint(&b);
        (vec![a, m], vec![m, b])
    }
}

/// The requests a plan is asked in, in order: consecutive waypoints grouped while their
/// straight-line legs add up to at most `max_leg_km`, and a single leg longer than that cut
/// along the great circle. Consecutive requests share their end and start place, so the
/// paths join. Fewer than two waypoints: no request.
pub fn legs(waypoints: &[RoutePoint], max_leg_km: f64) -> Vec<Vec<RoutePoint>> {
    let limit_m = if max_leg_km.is_finite() && max_leg_km > 0.0 {
        max_leg_km * 1000.0
    } else {
        DEFAULT_MAX_LEG_KM * 1000.0
    };
    // Long legs cut first, so every consecutive pair is within the limit.
    let mut points: Vec<RoutePoint> = waypoints.first().copied().into_iter().collect();
    for pair in waypoints.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let pieces = (a.distance_m(&b) / limit_m).ceil().clamp(1.0, 1024.0) as u32;
        for k in 1..pieces {
            points.push(interpolate(&a, &b, f64::from(k) / f64::from(pieces)));
        }
        points.push(b);
    }
    let mut requests: Vec<Vec<RoutePoint>> = Vec::new();
    let mut current: Vec<RoutePoint> = Vec::new();
    let mut length_m = 0.0;
    for point in points {
        if let Some(last) = current.last() {
            let step = last.distance_m(&point);
            if length_m + step > limit_m && current.len() >= 2 {
                let start = *last;
                requests.push(std::mem::take(&mut current));
                current.push(start);
                length_m = 0.0;
            }
            length_m += current.last().map_or(0.0, |l| l.distance_m(&point));
        }
        current.push(point);
    }
    if current.len() >= 2 {
        requests.push(current);
    }
    requests
}

/// A point at fraction `t` between `a` and `b` on the great circle: the two unit vectors
/// blended and normalised. Not uniform in angle, which does not matter for cut points the
/// engine snaps to a road anyway.
fn interpolate(a: &RoutePoint, b: &RoutePoint, t: f64) -> RoutePoint {
    let vector = |p: &RoutePoint| {
        let (lat, lon) = (p.lat.to_radians(), p.lon.to_radians());
        (lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin())
    };
    let (ax, ay, az) = vector(a);
    let (bx, by, bz) = vector(b);
    let (x, y, z) = (ax + (bx - ax) * t, ay + (by - ay) * t, az + (bz - az) * t);
    let norm = (x * x + y * y + z * z).sqrt().max(f64::MIN_POSITIVE);
    RoutePoint::new((z / norm).asin().to_degrees(), y.atan2(x).to_degrees())
}

/// Length of a polyline in kilometres, for answers that don't state one.
fn path_length_km(points: &[RoutePoint]) -> f64 {
    points
        .windows(2)
        .map(|pair| pair[0].distance_m(&pair[1]))
        .sum::<f64>()
        / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn along_45n(km: f64) -> RoutePoint {
        // A degree of longitude at 45° N is about 78.7 km.
        RoutePoint::new(45.0, 5.0 + km / 78.7)
    }

    #[test]
    fn a_long_plan_is_asked_in_legs_that_meet() {
        let plan = [along_45n(0.0), along_45n(300.0), along_45n(1000.0)];
        let requests = legs(&plan, 400.0);
        for request in &requests {
            let length: f64 = request.windows(2).map(|w| w[0].distance_m(&w[1])).sum();
            assert!(length <= 400_000.0 + 1.0, "{length}");
            assert!(request.len() >= 2);
        }
        for pair in requests.windows(2) {
            assert_eq!(pair[0].last(), pair[1].first(), "legs meet");
        }
        assert_eq!(requests.first().and_then(|r| r.first()), Some(&plan[0]));
        assert_eq!(requests.last().and_then(|r| r.last()), Some(&plan[2]));
        // Every place of the plan is a point of some request.
        assert!(requests.iter().any(|r| r.contains(&plan[1])));
        assert!(requests.len() >= 3, "{}", requests.len());
    }

    #[test]
    fn a_short_plan_is_one_request_with_every_place() {
        let plan = [along_45n(0.0), along_45n(10.0), along_45n(25.0)];
        assert_eq!(legs(&plan, 400.0), vec![plan.to_vec()]);
        assert!(legs(&plan[..1], 400.0).is_empty());
    }

    #[test]
    fn halving_keeps_the_places_and_meets_in_the_middle() {
        let (a, b) = halve(&[along_45n(0.0), along_45n(100.0)]);
        assert_eq!(a.last(), b.first());
        assert!((a[0].distance_m(&a[1]) - 50_000.0).abs() < 100.0);
        let three = [along_45n(0.0), along_45n(10.0), along_45n(20.0)];
        let (a, b) = halve(&three);
        assert_eq!((a.len(), b.len()), (2, 2));
        assert_eq!(a[1], three[1]);
    }

    #[test]
    fn joined_paths_keep_a_shared_point_once() {
        let path = |from: f64, to: f64| RoutedPath {
            points: vec![along_45n(from), along_45n(to)],
            distance_km: to - from,
            estimated: false,
        };
        let joined = RoutedPath::join(vec![path(0.0, 10.0), path(10.0, 30.0)]);
        assert_eq!(joined.points.len(), 3);
        assert!((joined.distance_km - 30.0).abs() < 1e-9);
    }
}
