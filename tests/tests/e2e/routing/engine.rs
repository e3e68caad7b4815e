//! Routing through a real Valhalla (3.9.1, `tests/valhalla/install.sh`), started by the
//! harness in `etappe_tests::valhalla` on tiles built from the committed extracts, and called
//! only through Etappe's own adapter (`ValhallaClient` behind `Router`): the real extract of
//! Liechtenstein (2013) for a town-to-town route and the error paths, the synthetic 60 km
//! fixture for a route whose road we know exactly. Everything listens on 127.0.0.1.
//!
//! Skips, saying how to install Valhalla, when it is not installed; fails instead under
//! `ETAPPE_REQUIRE_SERVICES=1`.

use std::path::Path;
use std::time::Duration;

use etappe_tests::valhalla::{self, Valhalla, ValhallaOptions};
use etappe_upstream::{RideProfile, RoutePoint, RoutedPath, Router, UpstreamError, ValhallaClient};

const VADUZ: RoutePoint = point(47.1410, 9.5209);
const SCHAAN: RoutePoint = point(47.1651, 9.5097);
/// North of Schaan, near Nendeln, on the road to the Austrian border.
const NORTH_OF_SCHAAN: RoutePoint = point(47.2000, 9.5300);
/// Zürich: well inside the bicycle limit of Vaduz, but outside the extract.
const ZURICH: RoutePoint = point(47.37, 8.54);

const fn point(lat: f64, lon: f64) -> RoutePoint {
    RoutePoint {
        lat,
        lon,
        ele: None,
    }
}

/// A service on `extract`'s tiles and a router that calls it; `None` when Valhalla is not
/// installed. Prints what the tiles cost.
async fn engine(extract: &Path, options: ValhallaOptions) -> Option<(Valhalla, Router)> {
    etappe_services::telemetry::install_tls_provider();
    let path = extract.to_path_buf();
    let valhalla = tokio::task::spawn_blocking(move || valhalla::start(&path, &options))
        .await
        .expect("join the harness")?;
    let tiles = &valhalla.tiles;
    eprintln!(
        "valhalla tiles for {}: {:.2} s to build{}, {:.0} KiB ({})",
        extract
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        tiles.seconds,
        if tiles.reused {
            " (earlier build reused)"
        } else {
            ""
        },
        tiles.bytes as f64 / 1024.0,
        tiles.dir.display()
    );
    // No proxy: a proxy variable in the environment must not send loopback calls elsewhere.
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client");
    let client = ValhallaClient::new(http, &valhalla.url, Duration::from_secs(10))
        .expect("the service's URL is valid");
    Some((valhalla, Router::Valhalla(client)))
}

fn straight_km(points: &[RoutePoint]) -> f64 {
    points
        .windows(2)
        .map(|p| p[0].distance_m(&p[1]))
        .sum::<f64>()
        / 1000.0
}

/// How close the path comes to `target`, in metres.
fn nearest_m(path: &RoutedPath, target: &RoutePoint) -> f64 {
    path.points
        .iter()
        .map(|p| p.distance_m(target))
        .fold(f64::INFINITY, f64::min)
}

fn no_route(result: Result<RoutedPath, UpstreamError>, valhalla: &Valhalla) -> UpstreamError {
    let error = match result {
        Ok(path) => panic!(
            "expected no route, got {:.2} km over {} points",
            path.distance_km,
            path.points.len()
        ),
        Err(error) => error,
    };
    assert!(
        error.failure.starts_with("no route"),
        "{error:?}; the service's log ends:\n{}",
        valhalla.log_tail()
    );
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_extract_routes_vaduz_through_schaan() {
    let Some((valhalla, router)) =
        engine(&valhalla::liechtenstein(), ValhallaOptions::default()).await
    else {
        return;
    };
    router
        .probe()
        .await
        .expect("the adapter's probe reaches /status");
    let path = router
        .route_via(VADUZ, SCHAAN, NORTH_OF_SCHAAN)
        .await
        .unwrap_or_else(|e| panic!("{e:?}; log:\n{}", valhalla.log_tail()));

    assert!(!path.estimated, "a routed path is not an estimate");
    assert!(path.points.len() >= 2, "{} points", path.points.len());
    let straight = straight_km(&[VADUZ, SCHAAN, NORTH_OF_SCHAAN]);
    assert!(
        path.distance_km > straight && path.distance_km < 2.0 * straight,
        "{:.2} km routed for {straight:.2} km straight",
        path.distance_km
    );
    // The line is the road's: its own length is the distance Valhalla reports, within the
    // rounding of six-decimal coordinates, and it starts, passes and ends at the three places
    // (snapped to the nearest road, so within a couple of hundred metres).
    let line_km = straight_km(&path.points);
    assert!(
        (line_km - path.distance_km).abs() < 0.02 * path.distance_km,
        "line {line_km:.3} km, reported {:.3} km",
        path.distance_km
    );
    for (name, place) in [
        ("Vaduz", VADUZ),
        ("Schaan", SCHAAN),
        ("the end", NORTH_OF_SCHAAN),
    ] {
        let off = nearest_m(&path, &place);
        assert!(off < 200.0, "the path passes {off:.0} m from {name}");
    }
    let (first, last) = (path.points[0], path.points[path.points.len() - 1]);
    assert!(first.distance_m(&VADUZ) < 200.0 && last.distance_m(&NORTH_OF_SCHAAN) < 200.0);
}

/// The synthetic route (`make_fixtures.py`): its sections share their end nodes, so its road
/// runs unbroken from the start to the end at km 60.
mod synthetic_road {
    use super::{RoutePoint, point, valhalla};

    const METRES_PER_DEG: f64 = 111_320.0;
    pub(super) const KM: f64 = 60.0;

    /// The point `km` along the route (`make_fixtures.py`'s `at_km` and `route_lon`: a gentle
    /// 150 m wiggle, so a straight line from end to end strays from it).
    pub(super) fn at_km(km: f64) -> RoutePoint {
        let lat = 45.0 + km * 1000.0 / METRES_PER_DEG;
        point(lat, 5.0 + 0.002 * ((lat - 45.0) * 20.0).sin())
    }

    /// The route's line as the fixture's GPX has it (`route.gpx`, a point every 100 m).
    pub(super) fn line() -> Vec<RoutePoint> {
        let path = valhalla::synthetic().with_file_name("route.gpx");
        let gpx = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        gpx.split("<trkpt ")
            .skip(1)
            .map(|piece| {
                let attr = |name: &str| -> f64 {
                    let start =
                        piece.find(&format!("{name}=\"")).expect("attribute") + name.len() + 2;
                    let end = start + piece[start..].find('"').expect("closing quote");
                    piece[start..end].parse().expect("a number")
                };
                point(attr("lat"), attr("lon"))
            })
            .collect()
    }

    /// How far `p` lies from the nearest segment of `line`, in metres (flat around `p`: the
    /// segments are 100 m long).
    pub(super) fn off_line_m(p: &RoutePoint, line: &[RoutePoint]) -> f64 {
        let east = METRES_PER_DEG * p.lat.to_radians().cos();
        let flat = |q: &RoutePoint| ((q.lon - p.lon) * east, (q.lat - p.lat) * METRES_PER_DEG);
        line.windows(2)
            .map(|s| {
                let ((ax, ay), (bx, by)) = (flat(&s[0]), flat(&s[1]));
                let (dx, dy) = (bx - ax, by - ay);
                let t = (-(ax * dx + ay * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
                (ax + t * dx).hypot(ay + t * dy)
            })
            .fold(f64::INFINITY, f64::min)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_synthetic_route_is_routed_end_to_end_along_its_road() {
    let Some((valhalla, router)) = engine(&valhalla::synthetic(), ValhallaOptions::default()).await
    else {
        return;
    };
    // Only the two ends: a path between them has to cross every seam between sections, the
    // ford and the track (the other roads are kilometres away).
    let path = router
        .route(
            &[
                synthetic_road::at_km(0.0),
                synthetic_road::at_km(synthetic_road::KM),
            ],
            RideProfile::Touring,
        )
        .await
        .unwrap_or_else(|e| panic!("{e:?}; log:\n{}", valhalla.log_tail()));

    let expected_km = synthetic_road::KM;
    assert!(
        (path.distance_km - expected_km).abs() < 0.1 * expected_km,
        "reported {:.2} km for {expected_km:.0} km of road",
        path.distance_km
    );
    let line_km = straight_km(&path.points);
    assert!(
        (line_km - expected_km).abs() < 0.1 * expected_km,
        "routed line {line_km:.2} km for {expected_km:.0} km of road"
    );
    // It follows the route's road, wiggle and all (the straight line strays 150 m from it).
    let line = synthetic_road::line();
    let on_road = path
        .points
        .iter()
        .filter(|p| synthetic_road::off_line_m(p, &line) <= 30.0)
        .count();
    assert!(
        on_road as f64 >= 0.95 * path.points.len() as f64,
        "{on_road} of {} points of the path lie within 30 m of the route",
        path.points.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_point_outside_the_map_is_no_route() {
    let Some((valhalla, router)) =
        engine(&valhalla::liechtenstein(), ValhallaOptions::default()).await
    else {
        return;
    };
    let error = no_route(router.route_via(VADUZ, SCHAAN, ZURICH).await, &valhalla);
    // 171: no road near a location (Zürich is 80 km from the nearest tile's roads).
    assert!(error.failure.contains("(code 171)"), "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_over_the_engines_distance_limit_is_cut_into_pieces_and_joined() {
    // Vaduz → Schaan → north is 7 km as the crow flies; this service refuses more than 5 km
    // in one request (Valhalla's service_limits.bicycle.max_distance, error 154).
    let options = ValhallaOptions {
        bicycle_max_distance_m: Some(5_000.0),
    };
    let Some((valhalla, router)) = engine(&valhalla::liechtenstein(), options).await else {
        return;
    };
    let raw: serde_json::Value = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
        .post(format!("{}/route", valhalla.url))
        .json(&serde_json::json!({"locations": [
            {"lat": VADUZ.lat, "lon": VADUZ.lon}, {"lat": SCHAAN.lat, "lon": SCHAAN.lon},
            {"lat": NORTH_OF_SCHAAN.lat, "lon": NORTH_OF_SCHAAN.lon}], "costing": "bicycle"}))
        .send()
        .await
        .expect("route")
        .json()
        .await
        .expect("json");
    assert_eq!(
        raw["error_code"], 154,
        "the limit reaches the service: {raw}"
    );
    // Through the adapter the same plan is cut where the engine refuses it, and joined.
    let path = router
        .route_via(VADUZ, SCHAAN, NORTH_OF_SCHAAN)
        .await
        .unwrap_or_else(|e| panic!("{e:?}; log:\n{}", valhalla.log_tail()));
    let straight = straight_km(&[VADUZ, SCHAAN, NORTH_OF_SCHAAN]);
    assert!(
        path.distance_km > straight && path.distance_km < 2.0 * straight,
        "{:.2} km routed for {straight:.2} km straight",
        path.distance_km
    );
    for place in [VADUZ, SCHAAN, NORTH_OF_SCHAAN] {
        assert!(nearest_m(&path, &place) < 200.0, "{place:?} not passed");
    }
    for pair in path.points.windows(2) {
        assert!(
            pair[0].distance_m(&pair[1]) < 500.0,
            "the pieces meet: a {:.0} m jump",
            pair[0].distance_m(&pair[1])
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tileset_is_built_once_and_services_run_side_by_side() {
    let Some((first, first_router)) =
        engine(&valhalla::liechtenstein(), ValhallaOptions::default()).await
    else {
        return;
    };
    let Some((second, second_router)) =
        engine(&valhalla::liechtenstein(), ValhallaOptions::default()).await
    else {
        return;
    };
    assert!(second.tiles.reused, "the second start rebuilt the tiles");
    assert_eq!(first.tiles.dir, second.tiles.dir);
    assert_ne!(first.url, second.url);
    // Two services at once: their ports and ipc sockets are their own.
    for router in [&first_router, &second_router] {
        router.probe().await.expect("both services answer");
    }
    let url = second.url.clone();
    drop(second);
    assert!(
        second_router.probe().await.is_err(),
        "{url} still answers after its Valhalla was dropped"
    );
    first_router
        .probe()
        .await
        .expect("the first one still serves");
    drop(first);
}
