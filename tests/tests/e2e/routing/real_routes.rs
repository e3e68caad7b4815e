//! Real routes on real data, end to end: Etappe with a real Valhalla (3.9.1, built from the
//! committed OpenStreetMap extract of Liechtenstein, ODbL) as its routing engine, on both
//! backends. A trip planned from places follows the engine's line (REST with coordinates, MCP
//! with place names); a plan the engine cannot route fails visibly with its reason; a detour
//! is a spur that keeps the day; a route without elevation has unknown climbing until an
//! elevation source (an Open-Meteo stand-in, an imported `.hgt` tile) gives it heights; the
//! found list has one entry per place; links that are not routes are refused at the door.
//!
//! Valhalla runs on 127.0.0.1 from `tests/valhalla/install.sh`; without it these tests skip
//! saying so, and fail under `ETAPPE_REQUIRE_SERVICES=1`.

use std::path::Path;
use std::time::{Duration, Instant};

use axum::extract::Query;
use etappe_route::detour::kept_share;
use etappe_route::gpx::{TrackPoint, parse_gpx};
use etappe_tests::valhalla::{self, Valhalla, ValhallaOptions};
use etappe_tests::{Backend, TestApp};
use etappe_upstream::{RideProfile, RoutePoint, Router, ValhallaClient};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const BALZERS: (f64, f64) = (47.0666, 9.5035);
const VADUZ: (f64, f64) = (47.1410, 9.5209);
const RUGGELL: (f64, f64) = (47.2380, 9.5254);

/// A Valhalla on the Liechtenstein tiles, or `None` (skip) when it is not installed.
pub(super) async fn valhalla() -> Option<Valhalla> {
    let extract = valhalla::liechtenstein();
    tokio::task::spawn_blocking(move || valhalla::start(&extract, &ValhallaOptions::default()))
        .await
        .expect("the harness")
}

/// Etappe on `backend` routing with `engine`, with `tweak` for the rest.
pub(super) async fn app_with(
    backend: Backend,
    engine: &Valhalla,
    tweak: impl FnOnce(&mut etappe_services::config::Config),
) -> Option<TestApp> {
    let url = engine.url.clone();
    TestApp::spawn_with(backend, move |config| {
        config.work.upstreams.router = "valhalla".into();
        config.work.upstreams.router_url = Some(url);
        config.work.upstreams.timeout_secs = 20;
        tweak(config);
    })
    .await
}

pub(super) fn place((lat, lon): (f64, f64)) -> Value {
    json!({"lat": lat, "lon": lon})
}

/// The trip's detail once its days are analysed (or its route failed).
pub(super) async fn settled(app: &TestApp, token: &str, id: &str) -> Value {
    app.wait_until(token, id, |d| {
        d["status"] == "failed"
            || (d["partial"] == false
                && d["computationStatus"]["terrain_security"] == "done"
                && d["computationStatus"]["points_of_interest"] != "pending"
                && d["computationStatus"]["points_of_interest"] != "running")
    })
    .await
}

async fn create_planned(app: &TestApp, token: &str, plan: Value) -> (String, Value) {
    let created = app
        .create_trip(token, &json!({"plan": plan, "title": "Real roads"}))
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = settled(app, token, &id).await;
    (id, detail)
}

/// The points of a GPX export.
async fn gpx_points(app: &TestApp, token: &str, template: &str, path: &str) -> Vec<TrackPoint> {
    let answer = app
        .call(Method::GET, template, path, Some(token), &[], None)
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let parsed = parse_gpx(&answer.raw).expect("a GPX file");
    parsed.tracks.into_iter().flatten().collect()
}

pub(super) async fn day_points(
    app: &TestApp,
    token: &str,
    id: &str,
    stage: &str,
) -> Vec<TrackPoint> {
    gpx_points(
        app,
        token,
        "/trips/{id}/stages/{stageId}/export.gpx",
        &format!("/trips/{id}/stages/{stage}/export.gpx"),
    )
    .await
}

/// Metres from `p` to the polyline `line` (on a local plane: the line is a few km long).
pub(super) fn distance_to_line(p: &TrackPoint, line: &[TrackPoint]) -> f64 {
    let k = 111_195.0;
    let cos = p.lat.to_radians().cos();
    let xy = |q: &TrackPoint| ((q.lon - p.lon) * k * cos, (q.lat - p.lat) * k);
    let mut best = f64::INFINITY;
    for pair in line.windows(2) {
        let (a, b) = (xy(&pair[0]), xy(&pair[1]));
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len = dx * dx + dy * dy;
        let t = if len > 0.0 {
            (-(a.0 * dx + a.1 * dy) / len).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (x, y) = (a.0 + t * dx, a.1 + t * dy);
        best = best.min((x * x + y * y).sqrt());
    }
    if line.len() == 1 {
        let (x, y) = xy(&line[0]);
        best = (x * x + y * y).sqrt();
    }
    best
}

/// The share of `points` within `tolerance_m` of `line`.
fn share_near(points: &[TrackPoint], line: &[TrackPoint], tolerance_m: f64) -> f64 {
    let near = points
        .iter()
        .filter(|p| distance_to_line(p, line) <= tolerance_m)
        .count();
    near as f64 / points.len().max(1) as f64
}

/// The engine's own line through `places`, asked directly (the reference a plan must follow).
async fn engine_line(engine: &Valhalla, places: &[(f64, f64)]) -> Vec<TrackPoint> {
    etappe_services::telemetry::install_tls_provider();
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let router = Router::Valhalla(
        ValhallaClient::new(http, &engine.url, Duration::from_secs(20)).expect("client"),
    );
    let waypoints: Vec<RoutePoint> = places
        .iter()
        .map(|&(lat, lon)| RoutePoint::new(lat, lon))
        .collect();
    let path = router
        .route(&waypoints, RideProfile::Touring)
        .await
        .expect("the engine routes its own map");
    path.points
        .iter()
        .map(|p| TrackPoint {
            lat: p.lat,
            lon: p.lon,
            ele: None,
        })
        .collect()
}

/// Every day of `detail` as its stage id.
pub(super) fn stage_ids(detail: &Value) -> Vec<String> {
    detail["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .map(|s| s["stageId"].as_str().expect("id").to_owned())
        .collect()
}

async fn all_points(app: &TestApp, token: &str, id: &str) -> Vec<TrackPoint> {
    gpx_points(app, token, "/trips/{id}.gpx", &format!("/trips/{id}.gpx")).await
}

// ---------- plans follow the engine ----------

async fn a_plan_by_coordinates_follows_the_engines_line(app: TestApp, engine: &Valhalla) {
    let token = app.user().await;
    let started = Instant::now();
    let (id, detail) = create_planned(
        &app,
        &token,
        json!({"from": place(BALZERS), "via": [place(VADUZ)], "to": place(RUGGELL)}),
    )
    .await;
    eprintln!(
        "plan Balzers → Vaduz → Ruggell: {} km in {} day(s), partial false after {:.2} s",
        detail["totalDistance"],
        detail["stageCount"],
        started.elapsed().as_secs_f64()
    );
    assert_eq!(detail["status"], "ready", "{detail}");
    assert_eq!(detail["sourceType"], "plan");
    assert_eq!(detail["plan"]["profile"], "touring");
    let points = all_points(&app, &token, &id).await;
    let line = engine_line(engine, &[BALZERS, VADUZ, RUGGELL]).await;
    let near = share_near(&points, &line, 30.0);
    assert!(
        near >= 0.95,
        "only {near:.3} of the trip's points lie on the engine's line"
    );
    let km = detail["totalDistance"].as_f64().expect("km");
    assert!((15.0..40.0).contains(&km), "{km}");
}

async fn a_plan_the_engine_cannot_route_fails_visibly(app: TestApp) {
    let token = app.user().await;
    // Zürich lies outside the extract: no road the engine knows reaches it.
    let (_, detail) = create_planned(
        &app,
        &token,
        json!({"from": place(VADUZ), "to": place((47.37, 8.54))}),
    )
    .await;
    assert_eq!(detail["status"], "failed", "{detail}");
    assert_eq!(detail["partial"], false);
    let reason = detail["unavailable"]["route"].as_str().expect("a reason");
    assert!(
        reason.contains("valhalla") && reason.contains("no route") && reason.contains("code 171"),
        "{reason}"
    );
    assert!(
        reason.contains("47.3700, 8.5400") && reason.contains("change that place"),
        "names the place and says what to do: {reason}"
    );
    assert!(
        detail["unavailable"]["weather"]
            .as_str()
            .is_some_and(|w| !w.contains("code 171")),
        "the reason is said once, on the route: {detail}"
    );
}

async fn a_plan_change_routes_again_in_one_version(app: TestApp) {
    let token = app.user().await;
    let (id, detail) = create_planned(
        &app,
        &token,
        json!({"from": place(BALZERS), "to": place(VADUZ)}),
    )
    .await;
    let version = detail["version"].as_u64().expect("version");
    let before = detail["totalDistance"].as_f64().expect("km");
    let changed = app
        .patch(
            &token,
            &id,
            Some(&format!("\"{version}\"")),
            &json!({"plan": {"to": place(RUGGELL), "profile": "road"}}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.body["version"], version + 1);
    assert_eq!(changed.body["plan"]["profile"], "road");
    assert_eq!(
        changed.body["plan"]["from"]["lat"], BALZERS.0,
        "an absent end keeps its place"
    );
    let after = settled(&app, &token, &id).await;
    assert_eq!(
        after["version"],
        version + 2,
        "the new days move it once more"
    );
    assert!(after["totalDistance"].as_f64().expect("km") > before + 5.0);
    let history = app
        .call(
            Method::GET,
            "/trips/{id}/history",
            &format!("/trips/{id}/history"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert!(
        history.body.to_string().contains("Plan changed: "),
        "{}",
        history.body
    );
}

// ---------- detours ----------

/// A point `off_m` metres west or east of `line[at]` that the engine puts on a road (its
/// nearest edge within 20 m), searching a few positions along the day.
pub(super) async fn waypoint_near_a_road(engine: &Valhalla, line: &[TrackPoint]) -> (f64, f64) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    for share in [0.4, 0.5, 0.6, 0.3, 0.7] {
        let p = line[(line.len() as f64 * share) as usize];
        for off in [300.0, -300.0, 400.0, -400.0, 500.0, -500.0] {
            let lon = p.lon + off / (111_195.0 * p.lat.to_radians().cos());
            let located: Value = client
                .post(format!("{}/locate", engine.url))
                .json(&json!({"locations": [{"lat": p.lat, "lon": lon}], "costing": "bicycle", "verbose": false}))
                .send()
                .await
                .expect("locate")
                .json()
                .await
                .expect("json");
            let Some(edge) = located[0]["edges"].get(0) else {
                continue;
            };
            let snapped = TrackPoint {
                lat: edge["correlated_lat"].as_f64().unwrap_or(0.0),
                lon: edge["correlated_lon"].as_f64().unwrap_or(0.0),
                ele: None,
            };
            let asked = TrackPoint {
                lat: p.lat,
                lon,
                ele: None,
            };
            let off_route = distance_to_line(&snapped, line);
            if distance_to_line(&asked, &[snapped]) >= 20.0 || off_route <= 200.0 {
                continue;
            }
            // A road the route reaches by a short way: not one across a river or a motorway
            // whose way round is kilometres long (a detour there is long for a good reason).
            let way: Value = client
                .post(format!("{}/route", engine.url))
                .json(&json!({"locations": [{"lat": p.lat, "lon": p.lon}, {"lat": snapped.lat, "lon": snapped.lon}],
                    "costing": "bicycle", "units": "kilometers", "directions_type": "none"}))
                .send()
                .await
                .expect("route")
                .json()
                .await
                .expect("json");
            let way_m = way["trip"]["summary"]["length"]
                .as_f64()
                .unwrap_or(f64::INFINITY)
                * 1000.0;
            if way_m <= 1.6 * off_route {
                return (snapped.lat, snapped.lon);
            }
        }
    }
    panic!("no road a few hundred metres off the route");
}

async fn a_detour_is_a_spur_that_keeps_the_day(app: TestApp, engine: &Valhalla) {
    let token = app.user().await;
    let (id, detail) = create_planned(
        &app,
        &token,
        json!({"from": place(BALZERS), "via": [place(VADUZ)], "to": place(RUGGELL)}),
    )
    .await;
    let stage = stage_ids(&detail).remove(0);
    let before = day_points(&app, &token, &id, &stage).await;
    let own_km = detail["stages"][0]["distance"].as_f64().expect("km");
    let (lat, lon) = waypoint_near_a_road(engine, &before).await;
    let off_m = distance_to_line(
        &TrackPoint {
            lat,
            lon,
            ele: None,
        },
        &before,
    );
    let asked = app
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/trips/{id}/stages/{stage}/poi-waypoint"),
            Some(&token),
            &[],
            Some(&json!({"waypointLat": lat, "waypointLon": lon})),
        )
        .await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
    let after = app
        .wait_until(&token, &id, |d| !d["stages"][0]["detour"].is_null())
        .await;
    let detour = &after["stages"][0]["detour"];
    assert_eq!(detour["router"], "valhalla", "{detour}");
    assert_eq!(detour["estimated"], false);
    let added_m = detour["addedDistance"].as_f64().expect("added") * 1000.0;
    eprintln!(
        "detour through a point {off_m:.0} m off the route: +{added_m:.0} m, {} m of own track skipped",
        detour["skippedDistanceM"]
    );
    assert!(
        (2.0 * off_m..=4.0 * off_m).contains(&added_m),
        "a point {off_m:.0} m off adds {added_m:.0} m"
    );
    let new_day = day_points(&app, &token, &id, &stage).await;
    let kept = kept_share(&before, &new_day, 10.0);
    assert!(kept >= 0.95, "only {kept:.3} of the day's own points kept");
    let passes = new_day
        .iter()
        .map(|p| {
            distance_to_line(
                p,
                &[TrackPoint {
                    lat,
                    lon,
                    ele: None,
                }],
            )
        })
        .fold(f64::INFINITY, f64::min);
    assert!(passes < 30.0, "the day passes the point ({passes:.0} m)");
    assert_eq!(
        after["version"], detail["version"],
        "a detour moves no version"
    );

    // Removed: the day rides its own roads again.
    let removed = app
        .call(
            Method::DELETE,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/trips/{id}/stages/{stage}/poi-waypoint"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    assert!(removed.body["stages"][0]["detour"].is_null());
    assert_eq!(removed.body["stages"][0]["distance"].as_f64(), Some(own_km));
    assert_eq!(removed.body["version"], detail["version"]);
    let again = day_points(&app, &token, &id, &stage).await;
    assert_eq!(again.len(), before.len());
    let twice = app
        .call(
            Method::DELETE,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/trips/{id}/stages/{stage}/poi-waypoint"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(twice.status, StatusCode::CONFLICT, "{}", twice.body);
}

// ---------- climbing never invented ----------

/// The synthetic terrain of the elevation sources: rising 1,500 m a degree northwards, with a
/// 40 m swell every 0.01° east.
fn terrain(lat: f64, lon: f64) -> f64 {
    450.0 + 1_500.0 * (lat - 47.0) + 40.0 * (lon * 628.3).sin()
}

/// The climbing of `points` on [`terrain`], as the planner measures climbing.
fn reference_climb(points: &[TrackPoint]) -> f64 {
    let on_terrain: Vec<TrackPoint> = points
        .iter()
        .map(|p| TrackPoint {
            ele: Some(terrain(p.lat, p.lon)),
            ..*p
        })
        .collect();
    etappe_route::geometry::day_climb(&on_terrain, &[]).0
}

/// An Open-Meteo elevation stand-in answering [`terrain`] in its real format; answers its
/// address and a count of calls.
async fn open_meteo_elevation() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&calls);
    let app = axum::Router::new().route(
        "/v1/elevation",
        axum::routing::get(
            move |Query(q): Query<std::collections::HashMap<String, String>>| {
                let seen = std::sync::Arc::clone(&seen);
                async move {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let numbers = |key: &str| -> Vec<f64> {
                        q.get(key)
                            .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
                            .unwrap_or_default()
                    };
                    let heights: Vec<f64> = numbers("latitude")
                        .iter()
                        .zip(numbers("longitude"))
                        .map(|(&lat, lon)| (terrain(lat, lon) * 10.0).round() / 10.0)
                        .collect();
                    axum::Json(json!({"elevation": heights}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), calls)
}

/// A 3 arc-second SRTM tile of [`terrain`] over N47E009, written to `dir`.
fn hgt_tile(dir: &Path) -> std::path::PathBuf {
    let n = 1201;
    let mut bytes = Vec::with_capacity(n * n * 2);
    for row in 0..n {
        for col in 0..n {
            let lat = 48.0 - row as f64 / (n - 1) as f64;
            let lon = 9.0 + col as f64 / (n - 1) as f64;
            let h = terrain(lat, lon).round() as i16;
            bytes.extend_from_slice(&h.to_be_bytes());
        }
    }
    let path = dir.join("N47E009.hgt");
    std::fs::write(&path, bytes).expect("write the tile");
    path
}

fn assert_climb_near(detail: &Value, reference: f64, source: &str) {
    let climbed = detail["totalElevation"].as_f64().expect("known climbing");
    let tolerance = reference * 0.05 + 10.0;
    assert!(
        (climbed - reference).abs() <= tolerance,
        "{source}: {climbed} m against {reference:.0} m (± {tolerance:.0})"
    );
    assert_eq!(detail["elevation"]["known"], true);
    assert!(
        detail["elevation"]["sources"]
            .as_array()
            .is_some_and(|s| s.contains(&json!(source))),
        "{}",
        detail["elevation"]
    );
    for stage in detail["stages"].as_array().expect("stages") {
        assert!(stage["elevation"].is_number(), "{stage}");
    }
}

const LOOP: [(f64, f64); 3] = [BALZERS, VADUZ, RUGGELL];

pub(super) fn loop_plan() -> Value {
    json!({"from": place(LOOP[0]), "via": [place(LOOP[1])], "to": place(LOOP[2])})
}

async fn a_route_without_elevation_has_unknown_climbing(app: TestApp) {
    let token = app.user().await;
    let (id, detail) = create_planned(&app, &token, loop_plan()).await;
    assert_eq!(detail["status"], "ready");
    assert!(detail["totalElevation"].is_null(), "{detail}");
    assert_eq!(detail["elevation"]["known"], false);
    assert_eq!(detail["elevation"]["pacedWithoutClimbing"], true);
    let reason = detail["elevation"]["missingReason"]
        .as_str()
        .expect("reason");
    assert!(
        reason.contains("ETAPPE_ELEVATION_URL") && reason.contains("etappe elevation import"),
        "{reason}"
    );
    let day = &detail["stages"][0];
    assert!(
        day["elevation"].is_null() && day["elevationLoss"].is_null(),
        "{day}"
    );
    assert!(
        day["alerts"]
            .as_array()
            .expect("alerts")
            .iter()
            .any(|a| a["code"] == "elevation_unknown"),
        "{day}"
    );
    // The files say nothing rather than 0.
    let gpx = app
        .call(
            Method::GET,
            "/trips/{id}.gpx",
            &format!("/trips/{id}.gpx"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert!(!String::from_utf8_lossy(&gpx.raw).contains("<ele>"));
}

async fn heights_come_from_the_elevation_api(backend: Backend, engine: &Valhalla) {
    let (url, calls) = open_meteo_elevation().await;
    let Some(app) = app_with(backend, engine, move |config| {
        config.work.upstreams.elevation_url = Some(url);
    })
    .await
    else {
        return;
    };
    let token = app.user().await;
    let (id, detail) = create_planned(&app, &token, loop_plan()).await;
    let points = all_points(&app, &token, &id).await;
    let km = detail["totalDistance"].as_f64().expect("km");
    let asked = calls.load(std::sync::atomic::Ordering::SeqCst);
    eprintln!(
        "elevation from the Open-Meteo stand-in: {asked} calls for {km} km ({:.1} per 100 km)",
        asked as f64 * 100.0 / km
    );
    assert_climb_near(&detail, reference_climb(&points), "open-meteo");
    assert!(asked >= 1);
}

async fn heights_come_from_an_imported_tile(backend: Backend, engine: &Valhalla) {
    let Some(app) = app_with(backend, engine, |_| {}).await else {
        return;
    };
    let dir = etappe_tests::temp_dir();
    let tile = hgt_tile(dir.path());
    let imported = app.operator_command(&["elevation", "import", &tile.to_string_lossy()]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let token = app.user().await;
    let (id, detail) = create_planned(&app, &token, loop_plan()).await;
    let points = all_points(&app, &token, &id).await;
    assert_climb_near(&detail, reference_climb(&points), "srtm");
    assert!(
        String::from_utf8_lossy(
            &app.call(
                Method::GET,
                "/trips/{id}.gpx",
                &format!("/trips/{id}.gpx"),
                Some(&token),
                &[],
                None
            )
            .await
            .raw
        )
        .contains("<ele>")
    );
}

// ---------- one entry per place and pass ----------

async fn the_found_list_has_one_entry_per_place(app: TestApp) {
    super::import_liechtenstein(&app).await;
    let token = app.user().await;
    let (_, detail) = create_planned(&app, &token, loop_plan()).await;
    let mut listed = 0;
    for stage in detail["stages"].as_array().expect("stages") {
        let found = stage["found"]
            .as_array()
            .expect("found read from the index");
        listed += found.len();
        for (i, a) in found.iter().enumerate() {
            for b in found.iter().skip(i + 1) {
                let same_kind = a["kind"] == b["kind"];
                let same_name =
                    a["name"] == b["name"] || a["name"].is_null() || b["name"].is_null();
                let apart = distance_to_line(
                    &TrackPoint {
                        lat: a["lat"].as_f64().unwrap_or(0.0),
                        lon: a["lon"].as_f64().unwrap_or(0.0),
                        ele: None,
                    },
                    &[TrackPoint {
                        lat: b["lat"].as_f64().unwrap_or(0.0),
                        lon: b["lon"].as_f64().unwrap_or(0.0),
                        ele: None,
                    }],
                );
                // A place passed twice (a loop coming back) is listed at each pass, a
                // kilometre of route apart at least; never twice at one pass.
                let same_pass =
                    (a["km"].as_f64().unwrap_or(0.0) - b["km"].as_f64().unwrap_or(0.0)).abs() < 1.0;
                assert!(
                    !(same_kind && same_name && apart <= 50.0 && same_pass),
                    "listed twice at one pass: {a} and {b} ({apart:.0} m apart)"
                );
            }
        }
    }
    assert!(
        listed > 5,
        "the real extract has places along the route: {listed}"
    );
}

// ---------- the MCP surface ----------

async fn an_agent_plans_from_place_names(app: TestApp, engine: &Valhalla) {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let token = app.user().await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
                .auth_header(token.clone()),
        ))
        .await
        .expect("initialize");
    let call = |name: &'static str, arguments: Value| {
        let client = &client;
        async move {
            let Value::Object(arguments) = arguments else {
                panic!("arguments are an object")
            };
            let result = client
                .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
                .await
                .expect("a tool result");
            assert_eq!(result.is_error, Some(false), "{result:?}");
            result.structured_content.expect("structured")
        }
    };
    let created = call(
        "create_trip",
        json!({"from": "Balzers", "via": ["Vaduz"], "to": "Ruggell", "settings": {"title": "By name"}}),
    )
    .await;
    let id = created["id"].as_str().expect("id").to_owned();
    let detail = settled(&app, &token, &id).await;
    assert_eq!(detail["status"], "ready", "{detail}");
    assert_eq!(detail["plan"]["from"]["name"], "Balzers");
    assert_eq!(detail["plan"]["to"]["name"], "Ruggell");
    let at = |p: &Value| {
        (
            p["lat"].as_f64().expect("lat"),
            p["lon"].as_f64().expect("lon"),
        )
    };
    let plan = &detail["plan"];
    let line = engine_line(
        engine,
        &[at(&plan["from"]), at(&plan["via"][0]), at(&plan["to"])],
    )
    .await;
    let points = all_points(&app, &token, &id).await;
    let near = share_near(&points, &line, 30.0);
    assert!(
        near >= 0.95,
        "only {near:.3} of the points follow the engine"
    );

    // Once the rider named a day, moving the plan re-routes after a confirmation (days
    // nobody touched are cut again without one); a title alone applies at once.
    let named = call(
        "edit_stages",
        json!({"tripId": id, "action": "update", "version": detail["version"],
            "stageId": detail["stages"][0]["stageId"], "label": "Up the valley"}),
    )
    .await;
    let version = named["version"].as_u64().expect("version");
    let asked = call(
        "update_trip_settings",
        json!({"id": id, "version": version, "profile": "gravel"}),
    )
    .await;
    let confirmation = asked["confirmationToken"]
        .as_str()
        .expect("a token")
        .to_owned();
    assert!(
        asked["impact"]["change"]
            .as_str()
            .is_some_and(|c| c.contains("routes the plan again"))
    );
    let done = call(
        "update_trip_settings",
        json!({"id": id, "version": version, "profile": "gravel", "confirmationToken": confirmation}),
    )
    .await;
    assert_eq!(done["version"], version + 1);
    let renamed = call(
        "update_trip_settings",
        json!({"id": id, "version": version + 1, "settings": {"title": "Gravel"}}),
    )
    .await;
    assert!(renamed.get("confirmationToken").is_none(), "{renamed}");
    assert_eq!(renamed["version"], version + 2);
    let _ = client.cancel().await;
}

// ---------- nights at a place to sleep ----------

/// Metres between two `{lat, lon}` objects.
fn metres_apart(a: &Value, b: &Value) -> f64 {
    let point = |v: &Value| TrackPoint {
        lat: v["lat"].as_f64().unwrap_or(0.0),
        lon: v["lon"].as_f64().unwrap_or(0.0),
        ele: None,
    };
    distance_to_line(&point(a), &[point(b)])
}

async fn nights_end_at_beds_and_a_choice_reflows_the_rest(app: TestApp) {
    // Without an OpenStreetMap source the setting is refused at once, naming the way to one.
    let token = app.user().await;
    let plan = json!({"from": place(BALZERS), "via": [place(RUGGELL)], "to": place(VADUZ)});
    let body = json!({"plan": plan, "title": "Nights at beds", "nights": "at_accommodation",
        "startDate": "2030-06-01", "endDate": "2030-06-03"});
    let refused = app.create_trip(&token, &body).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(refused.body["code"], "not_configured", "{}", refused.body);
    assert!(
        refused.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("etappe osm import")),
        "{}",
        refused.body
    );
    super::import_liechtenstein(&app).await;
    let created = app.create_trip(&token, &body).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = settled(&app, &token, &id).await;
    assert_eq!(detail["status"], "ready", "{detail}");
    assert_eq!(detail["nights"], "at_accommodation");
    let stages = detail["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 3, "the dates ask for three days");
    // Every night but the last ends at a bed of the extract (the day's end is the route's
    // point nearest it), or says there is none near its planned end.
    let mut at_beds = 0;
    for day in &stages[..stages.len() - 1] {
        let night = &day["night"];
        match night["outcome"].as_str() {
            Some("at_bed") => {
                let bed = &day["selectedAccommodation"];
                assert_eq!(bed["chosenBy"], "etappe", "{day}");
                let off_route = metres_apart(&day["endPoint"], bed);
                assert!(
                    off_route <= 2_000.0,
                    "{off_route:.0} m off the route: {day}"
                );
                let km = day["distance"].as_f64().expect("km");
                let window = &night["windowKm"];
                let (low, high) = (
                    window[0].as_f64().expect("low"),
                    window[1].as_f64().expect("high"),
                );
                assert!(
                    km >= low - 0.5 && km <= high + 2.5,
                    "{km} km, the window {low}–{high} (and the way to the bed): {day}"
                );
                at_beds += 1;
            }
            Some("no_bed_in_window") => assert!(
                day["alerts"]
                    .as_array()
                    .expect("alerts")
                    .iter()
                    .any(|a| a["code"] == "no_bed_near_target"),
                "{day}"
            ),
            _ => panic!("each night says why it is where it is: {day}"),
        }
    }
    assert!(at_beds >= 1, "Liechtenstein's towns have beds: {detail}");
    eprintln!(
        "nights at a bed within the tolerance: {at_beds} of {}",
        stages.len() - 1
    );
    // The rider chooses another bed for the first night that has one: the nights after it
    // re-flow in one version, and the history says so in one step.
    let (index, other) = stages[..stages.len() - 1]
        .iter()
        .enumerate()
        .find_map(|(i, d)| {
            d["night"]["passedOver"]
                .as_array()
                .and_then(|p| p.first().cloned())
                .map(|c| (i, c))
        })
        .expect("a night with another bed in its window");
    let stage_id = stages[index]["stageId"].as_str().expect("stage id");
    let version = detail["version"].as_u64().expect("version");
    let chosen = app
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}/accommodation",
            &format!("/trips/{id}/stages/{stage_id}/accommodation"),
            Some(&token),
            &[("If-Match", &format!("\"{version}\""))],
            Some(&json!({"lat": other["lat"], "lon": other["lon"]})),
        )
        .await;
    assert_eq!(chosen.status, StatusCode::OK, "{}", chosen.body);
    let after = app
        .call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail"),
            Some(&token),
            &[],
            None,
        )
        .await
        .body;
    assert_eq!(after["version"], version + 1, "one version: {after}");
    let day = &after["stages"][index];
    assert_eq!(day["selectedAccommodation"]["chosenBy"], "rider", "{day}");
    assert!(
        metres_apart(&day["selectedAccommodation"], &other) < 1.0,
        "{day}"
    );
    for (before, now) in stages[..index]
        .iter()
        .zip(after["stages"].as_array().expect("days"))
    {
        assert_eq!(before["endPoint"], now["endPoint"], "the days before stay");
    }
    let days = after["stages"].as_array().expect("days");
    for pair in days.windows(2) {
        assert_eq!(pair[0]["endPoint"], pair[1]["startPoint"], "the days meet");
    }
    let history = app
        .call(
            Method::GET,
            "/trips/{id}/history",
            &format!("/trips/{id}/history"),
            Some(&token),
            &[],
            None,
        )
        .await
        .body;
    let last = history["items"]
        .as_array()
        .and_then(|h| h.iter().rev().find(|e| e["type"] == "StagesEdited"))
        .unwrap_or_else(|| panic!("the edit in the history: {history}"));
    let summary = last["summary"].as_str().expect("summary");
    assert!(
        summary.contains("after you chose") || summary.contains("no night after it had to move"),
        "{summary}"
    );

    // Moving a day's end 300 m back drops the night the rider chose there, and says so.
    let moved = move_end_back(&app, &token, &id, &after["stages"][index], version + 1).await;
    let said = &moved["alsoChanged"][0];
    assert_eq!(said["kind"], "night_removed", "{moved}");
    assert_eq!(said["removedPersonsWork"], true);
    assert!(moved["stages"][index]["selectedAccommodation"].is_null());
    eprintln!("a moved end: {}", said["message"]);
    // Back to the days as paced (the undo), then the same on a night Etappe chose: it is
    // chosen again near the new end.
    let restored = app
        .call(
            Method::POST,
            "/trips/{id}/restore",
            &format!("/trips/{id}/restore"),
            Some(&token),
            &[("If-Match", &format!("\"{}\"", version + 2))],
            Some(&json!({"version": version})),
        )
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.body);
    let paced = restored.body["stages"].as_array().expect("days");
    let etappes = paced[..paced.len() - 1]
        .iter()
        .position(|d| d["selectedAccommodation"]["chosenBy"] == "etappe")
        .expect("a night Etappe chose at a bed");
    let moved = move_end_back(&app, &token, &id, &paced[etappes], version + 3).await;
    let said = &moved["alsoChanged"][0];
    assert_eq!(said["kind"], "night_rechosen", "{moved}");
    let now = &moved["stages"][etappes];
    assert_eq!(now["selectedAccommodation"]["chosenBy"], "etappe", "{now}");
    assert!(
        metres_apart(&now["endPoint"], &now["selectedAccommodation"]) <= 2_000.0,
        "the bed lies near the new end: {now}"
    );
    eprintln!("a moved end: {}", said["message"]);
}

/// Moves `day`'s end 300 m back (REST), answering the trip after it.
async fn move_end_back(app: &TestApp, token: &str, id: &str, day: &Value, version: u64) -> Value {
    let km = day["distance"].as_f64().expect("km");
    let ended = app
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}",
            &format!(
                "/trips/{id}/stages/{}",
                day["stageId"].as_str().expect("id")
            ),
            Some(token),
            &[("If-Match", &format!("\"{version}\""))],
            Some(&json!({"distance": ((km - 0.3) * 10.0).round() / 10.0})),
        )
        .await;
    assert_eq!(ended.status, StatusCode::OK, "{}", ended.body);
    ended.body
}

// ---------- wiring: each on both backends, on one engine ----------

macro_rules! with_engine {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(etappe_tests::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(etappe_tests::Backend::Postgres).await;
                }
            )*
        }
        $(
            async fn $name(backend: Backend) {
                let Some(engine) = valhalla().await else { return };
                run::$name(backend, &engine).await;
            }
        )*
    };
}

/// "Balzers → Malbun → Ruggell" by names, with the extract imported: each name is the
/// extract's village (never Maluñgun in the Philippines), the plan routes on real roads, and
/// "Steg" inside the same plan is Liechtenstein's Steg; a name known only far away is refused
/// naming its candidates, and nothing is created.
async fn names_resolve_where_the_extract_is(app: TestApp) {
    super::import_liechtenstein(&app).await;
    let token = app.user().await;
    let (_, detail) = create_planned(
        &app,
        &token,
        json!({"from": "Balzers", "via": ["Malbun"], "to": "Ruggell"}),
    )
    .await;
    assert_eq!(detail["status"], "ready", "{detail}");
    let malbun = &detail["plan"]["via"][0];
    assert_eq!(malbun["name"], "Malbun", "{detail}");
    let off = etappe_geo::haversine_m(
        malbun["lat"].as_f64().expect("lat"),
        malbun["lon"].as_f64().expect("lon"),
        47.1015,
        9.6100,
    );
    assert!(off < 1_500.0, "Malbun resolved {off:.0} m off: {malbun}");
    let (_, detail) = create_planned(&app, &token, json!({"from": "Steg", "to": "Vaduz"})).await;
    assert_eq!(detail["status"], "ready", "{detail}");
    let steg = &detail["plan"]["from"];
    assert!(
        (47.0..47.3).contains(&steg["lat"].as_f64().expect("lat"))
            && (9.4..9.7).contains(&steg["lon"].as_f64().expect("lon")),
        "Steg is Liechtenstein's: {steg}"
    );
    let refused = app
        .create_trip(
            &token,
            &json!({"plan": {"from": "Balzers", "via": ["Steglitz"], "to": "Ruggell"}}),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let error = &refused.body["errors"][0];
    assert_eq!(error["field"], "via[0]", "{}", refused.body);
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Steglitz") && message.contains("km from the other places"),
        "{message}"
    );
    let list = app
        .call(Method::GET, "/trips", "/trips", Some(&token), &[], None)
        .await;
    assert_eq!(list.body["totalItems"], 2, "the refused plan left nothing");
}

/// Each scenario as `fn(backend, engine)`, whatever its own signature.
mod run {
    use super::*;

    async fn app(backend: Backend, engine: &Valhalla) -> Option<TestApp> {
        app_with(backend, engine, |_| {}).await
    }

    pub(super) async fn plan_by_coordinates(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        a_plan_by_coordinates_follows_the_engines_line(app, engine).await;
    }
    pub(super) async fn plan_by_place_names_over_mcp(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        an_agent_plans_from_place_names(app, engine).await;
    }
    pub(super) async fn plan_by_names_where_the_extract_is(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        names_resolve_where_the_extract_is(app).await;
    }
    pub(super) async fn unroutable_plan(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        a_plan_the_engine_cannot_route_fails_visibly(app).await;
    }
    pub(super) async fn plan_change(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        a_plan_change_routes_again_in_one_version(app).await;
    }
    pub(super) async fn detour_spur(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        a_detour_is_a_spur_that_keeps_the_day(app, engine).await;
    }
    pub(super) async fn unknown_climbing(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        a_route_without_elevation_has_unknown_climbing(app).await;
    }
    pub(super) async fn elevation_api(backend: Backend, engine: &Valhalla) {
        heights_come_from_the_elevation_api(backend, engine).await;
    }
    pub(super) async fn elevation_tile(backend: Backend, engine: &Valhalla) {
        heights_come_from_an_imported_tile(backend, engine).await;
    }
    pub(super) async fn found_list(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        the_found_list_has_one_entry_per_place(app).await;
    }
    pub(super) async fn nights_at_beds(backend: Backend, engine: &Valhalla) {
        let Some(app) = app(backend, engine).await else {
            return;
        };
        nights_end_at_beds_and_a_choice_reflows_the_rest(app).await;
    }
}

with_engine!(
    plan_by_coordinates,
    plan_by_place_names_over_mcp,
    plan_by_names_where_the_extract_is,
    unroutable_plan,
    plan_change,
    detour_spur,
    unknown_climbing,
    elevation_api,
    elevation_tile,
    found_list,
    nights_at_beds,
);

// ---------- at the door, no engine needed ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_that_are_not_routes_and_plans_without_an_engine_are_refused_at_once() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    for link in [
        "https://www.google.com/maps/dir/Basel/Wien",
        "https://www.komoot.com/user/123456",
    ] {
        let refused = app.create_trip(&token, &json!({"sourceUrl": link})).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{link}");
        assert_eq!(
            refused.body["errors"][0]["field"], "sourceUrl",
            "{}",
            refused.body
        );
    }
    let refused = app
        .create_trip(&token, &json!({"plan": {"from": "Basel", "to": "Wien"}}))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(refused.body["code"], "not_configured", "{}", refused.body);
    assert!(
        refused.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("ETAPPE_ROUTER"))
    );
    let list = app
        .call(Method::GET, "/trips", "/trips", Some(&token), &[], None)
        .await;
    assert_eq!(list.body["totalItems"], 0, "nothing was left behind");
}
