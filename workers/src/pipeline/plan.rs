//! The route of a trip planned from places: asked of the routing engine leg by leg (a long
//! plan is cut into requests the engine accepts, see `etappe_upstream::router`), each leg
//! reported as progress, the legs joined into the one line the days are cut from.

use etappe_domain::trip::Trip;
use etappe_route::gpx::{ParsedRoute, TrackPoint};
use etappe_upstream::router::legs;
use etappe_upstream::{RoutePoint, RoutedPath};

use crate::progress::{ProgressState, Reporter};

use super::Pipeline;
use super::route::RouteFailure;

impl Pipeline {
    pub(super) async fn route_plan(
        &self,
        trip: &Trip,
        reporter: &mut Reporter<'_>,
    ) -> Result<ParsedRoute, RouteFailure> {
        let Some(plan) = &trip.source.plan else {
            return Err(RouteFailure::Terminal(
                "the trip has no plan to route".into(),
            ));
        };
        let router = &self.upstreams.router;
        if !router.routes() {
            return Err(RouteFailure::Terminal(format!(
                "no routing engine is configured to plan a route: set ETAPPE_ROUTER=valhalla and ETAPPE_ROUTER_URL (or start with ETAPPE_ONLINE=1), then ask again with POST /trips/{}/analyze (MCP: analyze_trip)",
                trip.id
            )));
        }
        let waypoints: Vec<RoutePoint> = plan
            .places()
            .map(|p| RoutePoint::new(p.lat, p.lon))
            .collect();
        let requests = legs(&waypoints, self.upstreams.router_max_leg_km);
        let count = requests.len();
        let mut paths = Vec::with_capacity(count);
        for (i, leg) in requests.iter().enumerate() {
            // Routing takes the first part of the job's progress (10 % to 40 %).
            let pct = 10 + u8::try_from(30 * i / count.max(1)).unwrap_or(30);
            reporter
                .report(
                    pct,
                    "routing",
                    format!("routing leg {} of {count} with {}", i + 1, router.name()),
                    ProgressState::Running,
                )
                .await;
            match router.route(leg, plan.profile).await {
                Ok(path) => paths.push(path),
                Err(error) if error.retryable => {
                    return Err(RouteFailure::Transient(error.to_string()));
                }
                Err(error) => {
                    // A request through several places: find the pair the engine cannot
                    // join, so the failure names one leg, not the whole plan.
                    let mut failing: Vec<RoutePoint> = leg.clone();
                    if leg.len() > 2 {
                        for pair in leg.windows(2) {
                            if matches!(router.route(pair, plan.profile).await, Err(e) if !e.retryable)
                            {
                                failing = pair.to_vec();
                                break;
                            }
                        }
                    }
                    let stretch = if count > 1 {
                        format!(" (leg {} of {count})", i + 1)
                    } else {
                        String::new()
                    };
                    return Err(RouteFailure::Terminal(format!(
                        "the routing engine ({}) could not route {}{stretch}: {}. One of these places is not on a road its map reaches: change that place in the plan, plan with another profile, or delete the trip",
                        router.name(),
                        leg_places(plan, &failing),
                        error.failure,
                    )));
                }
            }
        }
        let joined = RoutedPath::join(paths);
        let points: Vec<TrackPoint> = joined
            .points
            .iter()
            .map(|p| TrackPoint {
                lat: p.lat,
                lon: p.lon,
                ele: p.ele,
            })
            .collect();
        Ok(ParsedRoute {
            name: Some(plan.describe()),
            tracks: vec![points],
            ..ParsedRoute::default()
        })
    }
}

/// The places of `plan` a routing request `leg` goes through, in a sentence: "Vaduz →
/// Malbun"; a stretch of a long leg split between them names the places it lies between.
fn leg_places(plan: &etappe_domain::trip::plan::RoutePlan, leg: &[RoutePoint]) -> String {
    let on_leg = |p: &etappe_domain::trip::plan::PlanPlace| {
        leg.iter().any(|q| q.lat == p.lat && q.lon == p.lon)
    };
    let named: Vec<String> = plan
        .places()
        .filter(|p| on_leg(p))
        .map(|p| p.describe())
        .collect();
    match named.as_slice() {
        [] => format!("a stretch of {}", plan.describe()),
        [one] => format!("a stretch from or to {one}"),
        _ => named.join(" → "),
    }
}
