//! BRouter and Valhalla adapters against local stand-ins answering in their
//! real formats, and the offline straight-line router.

use std::time::Duration;

use crate::common::{
    Canned, MALFORMED_BODIES, SERVER_ERRORS, dead_base_url, expect_failure, fixture, http_client,
    serve,
};
use etappe_upstream::{
    BRouterClient, RoutePoint, RoutedPath, Router, Upstream, UpstreamError, ValhallaClient,
    spur_detour,
};

const FROM: RoutePoint = RoutePoint {
    lat: 47.99769,
    lon: 7.84115,
    ele: None,
};
const VIA: RoutePoint = RoutePoint {
    lat: 47.98831,
    lon: 7.89324,
    ele: None,
};
const TO: RoutePoint = RoutePoint {
    lat: 47.96528,
    lon: 7.95403,
    ele: None,
};

fn brouter(base_url: &str, timeout: Duration) -> Router {
    Router::BRouter(
        BRouterClient::new(http_client(), base_url, timeout).expect("valid configuration"),
    )
}

fn valhalla(base_url: &str, timeout: Duration) -> Router {
    Router::Valhalla(
        ValhallaClient::new(http_client(), base_url, timeout).expect("valid configuration"),
    )
}

/// Both real routers, so every failure mode is checked for each.
fn routers(base_url: &str, timeout: Duration) -> [Router; 2] {
    [brouter(base_url, timeout), valhalla(base_url, timeout)]
}

async fn route(router: &Router) -> Result<RoutedPath, UpstreamError> {
    router.route_via(FROM, VIA, TO).await
}

#[tokio::test]
async fn brouter_parses_a_recorded_geojson_track() {
    let (base, recorder) = serve(Canned::json(fixture("brouter_route.json"))).await;
    let path = route(&brouter(&base, Duration::from_secs(5)))
        .await
        .expect("route");

    assert!(!path.estimated);
    assert_eq!(path.distance_km, 9.604, "from the track-length property");
    assert_eq!(path.points.len(), 31);
    assert_eq!(
        path.points[0],
        RoutePoint::with_ele(47.99769, 7.84115, 276.72)
    );
    let last = path.points.last().expect("points");
    assert_eq!((last.lat, last.lon), (TO.lat, TO.lon));

    let request = &recorder.requests()[0];
    assert_eq!(request.uri.path(), "/brouter");
    assert_eq!(
        request.query_value("lonlats").as_deref(),
        Some("7.841150,47.997690|7.893240,47.988310|7.954030,47.965280")
    );
    assert_eq!(request.query_value("profile").as_deref(), Some("trekking"));
    assert_eq!(request.query_value("alternativeidx").as_deref(), Some("0"));
    assert_eq!(request.query_value("format").as_deref(), Some("geojson"));
}

#[tokio::test]
async fn brouter_unmapped_positions_mean_no_route() {
    let (base, _) = serve(Canned::status(
        400,
        "to-position not mapped in existing datafile\n",
    ))
    .await;
    let error = expect_failure(route(&brouter(&base, Duration::from_secs(5))).await);
    assert_eq!(
        error.failure,
        "no route: to-position not mapped in existing datafile"
    );
    assert!(!error.retryable);
}

#[tokio::test]
async fn valhalla_parses_a_recorded_trip() {
    let (base, recorder) = serve(Canned::json(fixture("valhalla_route.json"))).await;
    let path = route(&valhalla(&base, Duration::from_secs(5)))
        .await
        .expect("route");

    assert!(!path.estimated);
    assert_eq!(path.distance_km, 9.604, "from trip.summary.length");
    // Two legs of 15 and 17 points share the waypoint between them.
    assert_eq!(path.points.len(), 31);
    assert_eq!(path.points[0], FROM);
    assert!(path.points.contains(&VIA));
    assert_eq!(path.points.last(), Some(&TO));

    let request = &recorder.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.uri.path(), "/route");
    let sent: serde_json::Value = serde_json::from_str(&request.body).expect("json request");
    assert_eq!(sent["costing"], "bicycle");
    assert_eq!(sent["units"], "kilometers");
    assert_eq!(
        sent["locations"][1],
        serde_json::json!({"lat": VIA.lat, "lon": VIA.lon})
    );
    assert_eq!(sent["locations"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn valhalla_no_path_is_a_final_no_route() {
    let (base, _) = serve(Canned {
        content_type: "application/json",
        ..Canned::status(400, fixture("valhalla_no_route.json"))
    })
    .await;
    let error = expect_failure(route(&valhalla(&base, Duration::from_secs(5))).await);
    assert_eq!(error.upstream, Upstream::Router);
    assert_eq!(
        error.failure,
        "no route: No path could be found for input (code 442)"
    );
    assert!(!error.retryable);
}

#[tokio::test]
async fn offline_routing_draws_straight_estimated_legs() {
    let path = Router::Offline
        .route_via(FROM, VIA, TO)
        .await
        .expect("offline always answers");
    assert!(path.estimated);
    assert_eq!(path.points.first(), Some(&FROM));
    assert!(path.points.contains(&VIA));
    assert_eq!(path.points.last(), Some(&TO));
    let straight_km = (FROM.distance_m(&VIA) + VIA.distance_m(&TO)) / 1000.0;
    assert!((path.distance_km - straight_km).abs() < 1e-9);
    assert!(
        path.points
            .windows(2)
            .all(|pair| pair[0].distance_m(&pair[1]) <= 101.0)
    );
}

#[tokio::test]
async fn impossible_waypoints_are_refused_before_any_request() {
    let (base, recorder) = serve(Canned::json(fixture("valhalla_route.json"))).await;
    for router in routers(&base, Duration::from_secs(5)) {
        let error = expect_failure(router.route_via(FROM, RoutePoint::new(95.0, 7.0), TO).await);
        assert!(!error.retryable);
    }
    assert_eq!(recorder.count(), 0);
}

#[test]
fn spur_detour_goes_out_and_back_from_the_nearest_track_point() {
    // A track running north along 7.8°E, one point every ~111 m.
    let track: Vec<RoutePoint> = (0..100)
        .map(|i| RoutePoint::with_ele(48.0 + f64::from(i) * 0.001, 7.8, 250.0))
        .collect();
    let via = RoutePoint::new(48.0402, 7.812);
    let (index, spur) = spur_detour(&track, via);

    assert_eq!(index, 40);
    let branch = track[40];
    assert!(spur.estimated);
    assert_eq!(spur.points.first(), Some(&branch));
    assert_eq!(spur.points.last(), Some(&branch));
    assert!(
        spur.points
            .iter()
            .any(|p| (p.lat, p.lon) == (via.lat, via.lon))
    );
    let one_way_km = branch.distance_m(&via) / 1000.0;
    assert!(
        (spur.distance_km - 2.0 * one_way_km).abs() < 1e-6,
        "{} vs {}",
        spur.distance_km,
        one_way_km
    );
    assert!((one_way_km - 0.894).abs() < 0.01, "{one_way_km}");
    // ~0.9 km each way at ≤ 100 m spacing: 9 steps out, 9 back.
    assert_eq!(spur.points.len(), 19);
    assert!(
        spur.points
            .windows(2)
            .all(|pair| pair[0].distance_m(&pair[1]) <= 100.0)
    );
}

#[tokio::test]
async fn a_slow_answer_is_a_retryable_timeout() {
    let (base, _) = serve(Canned::json("{}").delayed(Duration::from_secs(3))).await;
    for router in routers(&base, Duration::from_millis(300)) {
        let error = expect_failure(route(&router).await);
        assert_eq!(error.failure, "timeout after 0.3s", "{router:?}");
        assert!(error.retryable);
    }
}

#[tokio::test]
async fn rate_limiting_is_retryable_and_names_the_wait() {
    let (base, _) = serve(Canned::status(429, "slow down").with_retry_after("5")).await;
    for router in routers(&base, Duration::from_secs(5)) {
        let error = expect_failure(route(&router).await);
        assert_eq!(
            error.failure, "rate limited (429), retry after 5s",
            "{router:?}"
        );
        assert!(error.retryable);
    }
}

#[tokio::test]
async fn server_errors_are_retryable() {
    for status in SERVER_ERRORS {
        let (base, _) = serve(Canned::status(status, "oops")).await;
        for router in routers(&base, Duration::from_secs(5)) {
            let error = expect_failure(route(&router).await);
            assert_eq!(
                error.failure,
                format!("server error {status}"),
                "{router:?}"
            );
            assert!(error.retryable);
        }
    }
}

#[tokio::test]
async fn a_bad_request_is_not_retryable() {
    let body = r#"{"error_code":100,"error":"Failed to parse json request","status_code":400,"status":"Bad Request"}"#;
    let (base, _) = serve(Canned::status(400, body)).await;
    for router in routers(&base, Duration::from_secs(5)) {
        let error = expect_failure(route(&router).await);
        // Valhalla's own error is read and named; BRouter's body is plain text.
        let expected = match router {
            Router::Valhalla(_) => "refused the request: Failed to parse json request (code 100)",
            _ => "refused the request (400)",
        };
        assert_eq!(error.failure, expected, "{router:?}");
        assert!(!error.retryable);
    }
}

#[tokio::test]
async fn a_malformed_body_is_an_error_not_a_panic() {
    let wrong_shapes = [
        r#"{"type":"FeatureCollection","features":[{"geometry":{"type":"Point","coordinates":[7.8,48.0]}}]}"#,
        r#"{"trip":{"legs":[{"shape":"\u00ff\u0001"}],"status":0}}"#,
    ];
    for body in MALFORMED_BODIES.into_iter().chain(wrong_shapes) {
        let (base, _) = serve(Canned::json(body)).await;
        for router in routers(&base, Duration::from_secs(5)) {
            let error = expect_failure(route(&router).await);
            assert!(
                error.failure.starts_with("unexpected response"),
                "{router:?} {body:?}: {}",
                error.failure
            );
            assert!(!error.retryable);
        }
    }
}

#[tokio::test]
async fn a_dead_port_is_unreachable_and_retryable() {
    let base = dead_base_url().await;
    for router in routers(&base, Duration::from_secs(5)) {
        let error = expect_failure(route(&router).await);
        assert!(
            error.failure.starts_with("unreachable: "),
            "{}",
            error.failure
        );
        assert!(error.retryable);
    }
}
