//! A detour keeps the day's heights (#31): the spur's points, which the router gives without
//! heights, are looked up in the elevation source like the route's, so a day whose climbing
//! was known stays known, spur included; only without any source does it become unknown.
//! Run end to end over a real (SQLite) store: the trip, the detour job, the recorded day.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use etappe_domain::ids::TripId;
use etappe_domain::trip::TripCommand;
use etappe_domain::trip::stage::{Point, Stage};
use etappe_route::geometry::known_climb;
use etappe_route::gpx::TrackPoint;
use etappe_upstream::{BRouterClient, Elevations, Router, Upstream, UpstreamError};
use uuid::Uuid;

use crate::pipeline::{
    JobError, JobScope, Outcome, Pipeline, one_day_trip, pipeline_on_sqlite, point_at,
};
use crate::upstreams::Upstreams;
use etappe_track::stored;

/// Metres in a degree of latitude.
const DEGREE_M: f64 = 111_195.0;
/// The day's grade northwards, and the terrain's eastwards (the spur's climb).
const NORTH_GRADE: f64 = 0.02;
const EAST_GRADE: f64 = 0.10;

/// The terrain every source agrees on: the day's recorded heights are read off it too.
fn terrain(lat: f64, lon: f64) -> f64 {
    let north_m = (lat - 45.0) * DEGREE_M;
    let east_m = (lon - 6.0) * DEGREE_M * 45f64.to_radians().cos();
    200.0 + NORTH_GRADE * north_m + EAST_GRADE * east_m
}

/// 10 km due north from 45°N 6°E, a point every 100 m, its heights recorded.
fn day_points() -> Vec<TrackPoint> {
    (0..=100)
        .map(|i| {
            let lat = 45.0 + f64::from(i) * 100.0 / DEGREE_M;
            TrackPoint {
                lat,
                lon: 6.0,
                ele: Some(terrain(lat, 6.0)),
            }
        })
        .collect()
}

/// An elevation source answering [`terrain`], or failing as a rate-limited API does.
#[derive(Debug)]
struct Stub {
    fail: bool,
}

#[async_trait::async_trait]
impl Elevations for Stub {
    fn provider(&self) -> &'static str {
        "stub"
    }

    async fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError> {
        if self.fail {
            return Err(UpstreamError::new(
                Upstream::Elevation,
                "HTTP 429 (rate limited)",
                true,
            ));
        }
        Ok(points
            .iter()
            .map(|&(lat, lon)| Some(terrain(lat, lon)))
            .collect())
    }
}

/// A BRouter stand-in drawing straight lines through the asked points, a point every 50 m,
/// without heights (as a router without elevation data answers); its address.
async fn brouter_without_heights() -> String {
    let app = axum::Router::new().route(
        "/brouter",
        axum::routing::get(
            |axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>| async move {
                let asked: Vec<(f64, f64)> = query
                    .get("lonlats")
                    .map(String::as_str)
                    .unwrap_or_default()
                    .split('|')
                    .filter_map(|pair| {
                        let (lon, lat) = pair.split_once(',')?;
                        Some((lon.parse().ok()?, lat.parse().ok()?))
                    })
                    .collect();
                let mut line = Vec::new();
                for leg in asked.windows(2) {
                    let ((lon0, lat0), (lon1, lat1)) = (leg[0], leg[1]);
                    let north_m = (lat1 - lat0) * DEGREE_M;
                    let east_m = (lon1 - lon0) * DEGREE_M * 45f64.to_radians().cos();
                    let steps = (north_m.hypot(east_m) / 50.0).ceil().max(1.0) as usize;
                    for step in 0..steps {
                        let t = step as f64 / steps as f64;
                        line.push(vec![lon0 + (lon1 - lon0) * t, lat0 + (lat1 - lat0) * t]);
                    }
                }
                if let Some(&(lon, lat)) = asked.last() {
                    line.push(vec![lon, lat]);
                }
                axum::Json(serde_json::json!({"type": "FeatureCollection", "features": [
                    {"type": "Feature", "properties": {},
                     "geometry": {"type": "LineString", "coordinates": line}}]}))
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{address}")
}

/// A pipeline over a fresh store in its own directory (removed when dropped).
struct Fixture {
    pipeline: Pipeline,
    dir: std::path::PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // Best effort: a left-over directory in the temp dir harms nothing.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The spur's router: a routing engine (the BRouter stand-in), or none (a straight spur).
#[derive(Clone, Copy, Debug)]
enum Spur {
    Routed,
    Straight,
}

async fn fixture(elevation: Option<Stub>, spur: Spur) -> Fixture {
    let dir = std::env::temp_dir().join(format!("etappe-detour-heights-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let mut upstreams = Upstreams::default();
    upstreams.elevation_api = elevation.map(|s| Arc::new(s) as Arc<dyn Elevations>);
    if let Spur::Routed = spur {
        etappe_infra::telemetry::install_tls_provider();
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a client");
        let url = brouter_without_heights().await;
        upstreams.router = Router::BRouter(
            BRouterClient::new(client, &url, Duration::from_secs(10)).expect("a router"),
        );
        upstreams.router_name = "brouter";
    }
    let pipeline = pipeline_on_sqlite(&dir, upstreams).await;
    Fixture { pipeline, dir }
}

const TRIP: TripId = TripId(Uuid::from_u128(1));
const STAGE: Uuid = Uuid::from_u128(7);

/// Writes a one-day trip over [`day_points`] with its climbing known, and asks for a detour
/// through a point 600 m east of its middle (up the terrain's slope).
async fn trip_with_a_detour_asked(pipeline: &Pipeline) -> Point {
    let points = day_points();
    let (ascent, descent) = known_climb(&points, &[]).expect("recorded heights");
    pipeline
        .store
        .put_blob("track", &stored::encode(&points))
        .await
        .expect("the track");
    let last = points.len() - 1;
    let stage = Stage {
        id: STAGE,
        day_number: 1,
        distance_km: 10.0,
        ascent_m: Some(ascent.round()),
        descent_m: Some(descent.round()),
        start: point_at(&points[0]),
        end: point_at(&points[last]),
        last_point: last,
        ..Default::default()
    };
    let waypoint = Point {
        lat: points[50].lat,
        lon: 6.0 + 600.0 / (DEGREE_M * 45f64.to_radians().cos()),
        ele: None,
    };
    let ask = TripCommand::RequestWaypoint {
        stage_id: STAGE,
        waypoint,
        today: chrono::Utc::now().date_naive(),
    };
    one_day_trip(
        pipeline,
        TRIP,
        Uuid::from_u128(3),
        points.len(),
        stage,
        vec![ask],
    )
    .await;
    waypoint
}

async fn detour(pipeline: &Pipeline, waypoint: Point) -> Result<Outcome, JobError> {
    let scope = JobScope {
        job_id: Uuid::from_u128(4),
        trip_id: TRIP,
        generation: 1,
        traceparent: None,
    };
    pipeline.reroute_stage(scope, STAGE, waypoint).await
}

async fn the_day(pipeline: &Pipeline) -> Stage {
    let view = pipeline.view(TRIP).await.expect("read").expect("the trip");
    view.trip.stages[0].clone()
}

/// The day after a detour through a point 600 m up the slope, its spur drawn by `spur`
/// without heights and looked up in a source answering the terrain.
async fn detoured_with_heights(spur: Spur) {
    let fixture = fixture(Some(Stub { fail: false }), spur).await;
    let pipeline = &fixture.pipeline;
    let waypoint = trip_with_a_detour_asked(pipeline).await;
    let own = the_day(pipeline).await;
    let own_ascent = own.ascent_m.expect("known before the detour");

    let outcome = detour(pipeline, waypoint).await.expect("no retry");
    assert_eq!(outcome, Outcome::Completed);
    let day = the_day(pipeline).await;
    let detour = day.detour.as_ref().expect("the detour");
    assert_eq!(detour.estimated, matches!(spur, Spur::Straight), "{spur:?}");
    // The spur climbs 60 m to the point 600 m east and comes back down.
    let ascent = day.ascent_m.expect("the climbing stays known");
    let descent = day.descent_m.expect("the descent stays known");
    assert!(
        (ascent - own_ascent - 60.0).abs() <= 10.0,
        "{spur:?}: {own_ascent} m of own climbing, {ascent} m with the spur"
    );
    assert!((descent - 60.0).abs() <= 10.0, "{spur:?}: {descent} m down");
    // What the profile draws is what the figures were counted on.
    let bytes = pipeline
        .store
        .get_blob(&detour.track_key)
        .await
        .expect("read")
        .expect("the detour's track");
    let points = stored::decode(&bytes).expect("points");
    assert!(
        points.iter().all(|p| p.ele.is_some()),
        "{spur:?}: every point has a height"
    );
}

#[tokio::test]
async fn a_routed_spur_without_heights_keeps_the_days_climbing_known() {
    detoured_with_heights(Spur::Routed).await;
}

#[tokio::test]
async fn a_straight_spur_keeps_the_days_climbing_known() {
    detoured_with_heights(Spur::Straight).await;
}

#[tokio::test]
async fn without_an_elevation_source_the_spur_leaves_the_climbing_unknown() {
    let fixture = fixture(None, Spur::Routed).await;
    let pipeline = &fixture.pipeline;
    let waypoint = trip_with_a_detour_asked(pipeline).await;

    let outcome = detour(pipeline, waypoint).await.expect("no retry");
    assert_eq!(outcome, Outcome::Completed);
    let day = the_day(pipeline).await;
    assert!(day.detour.is_some());
    assert_eq!(
        (day.ascent_m, day.descent_m),
        (None, None),
        "not flat: unknown"
    );
}

#[tokio::test]
async fn a_failing_elevation_source_retries_the_detour_rather_than_lose_the_climbing() {
    let fixture = fixture(Some(Stub { fail: true }), Spur::Routed).await;
    let pipeline = &fixture.pipeline;
    let waypoint = trip_with_a_detour_asked(pipeline).await;
    let own = the_day(pipeline).await;

    let retried = detour(pipeline, waypoint).await;
    assert!(
        matches!(&retried, Err(JobError::Transient(why)) if why.contains("429")),
        "{retried:?}"
    );
    let day = the_day(pipeline).await;
    assert!(day.detour.is_none(), "nothing recorded yet");
    assert_eq!(day.ascent_m, own.ascent_m);
}
