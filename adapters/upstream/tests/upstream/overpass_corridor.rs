//! Features along a route through Overpass ([`OsmFeatures::along`]) against a local
//! stand-in that reads the `data=` form body, checks the QL and answers in Overpass's JSON
//! format (`version`, `generator`, `osm3s`, `elements`, `remark`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{expect_failure, fixture, http_client};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_analysis::StagePoint;
use etappe_analysis::osm::{
    CulturalKind, FeatureKind, FoodKind, HealthKind, OsmStage, PlaceClass, RouteFeatures,
    SearchPlan, corridors,
};
use etappe_upstream::{
    BedSearch, CachedHttp, MemoryCache, OsmFeatures, OverpassClient, Upstream, UpstreamError,
};

/// Metres per degree of latitude on the analysis crate's sphere.
const M_PER_DEG: f64 = 111_195.0;

/// The stand-in's answer to the n-th request (0-based) carrying this QL.
type Responder = dyn Fn(usize, &str) -> (u16, String) + Send + Sync;

#[derive(Clone)]
struct Stand {
    respond: Arc<Responder>,
    queries: Arc<Mutex<Vec<String>>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    answer_bytes: Arc<AtomicUsize>,
    delay: Duration,
}

impl Stand {
    fn queries(&self) -> Vec<String> {
        self.queries.lock().expect("recorder lock").clone()
    }

    fn count(&self) -> usize {
        self.queries.lock().expect("recorder lock").len()
    }
}

async fn interpreter(State(stand): State<Stand>, body: String) -> Response {
    let ql = url::form_urlencoded::parse(body.as_bytes())
        .find(|(key, _)| key == "data")
        .map(|(_, value)| value.into_owned());
    let Some(ql) = ql.filter(|ql| ql.starts_with("[out:json]") && ql.contains("(around:")) else {
        return (StatusCode::BAD_REQUEST, "Error: line 1: parse error").into_response();
    };
    let now = stand.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    stand.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let index = {
        let mut queries = stand.queries.lock().expect("recorder lock");
        queries.push(ql.clone());
        queries.len() - 1
    };
    tokio::time::sleep(stand.delay).await;
    stand.in_flight.fetch_sub(1, Ordering::SeqCst);
    let (status, answer) = (stand.respond)(index, &ql);
    stand.answer_bytes.fetch_add(answer.len(), Ordering::SeqCst);
    let mut response =
        (StatusCode::from_u16(status).expect("valid status"), answer).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Serves `respond` at `/api/interpreter` of a fresh 127.0.0.1 port.
async fn serve_with(
    delay: Duration,
    respond: impl Fn(usize, &str) -> (u16, String) + Send + Sync + 'static,
) -> (String, Stand) {
    let stand = Stand {
        respond: Arc::new(respond),
        queries: Arc::default(),
        in_flight: Arc::default(),
        max_in_flight: Arc::default(),
        answer_bytes: Arc::default(),
        delay,
    };
    let app = axum::Router::new()
        .route("/api/interpreter", axum::routing::post(interpreter))
        .with_state(stand.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (format!("http://{address}"), stand)
}

async fn serve(
    respond: impl Fn(usize, &str) -> (u16, String) + Send + Sync + 'static,
) -> (String, Stand) {
    serve_with(Duration::ZERO, respond).await
}

fn client_for(base_url: &str, timeout: Duration) -> OverpassClient {
    OverpassClient::new(
        CachedHttp {
            client: http_client(),
            cache: Arc::new(MemoryCache::new(1000)),
            timeout,
        },
        base_url,
    )
    .expect("valid configuration")
}

fn is_chunk(ql: &str) -> bool {
    ql.contains("out tags geom;")
}

/// Overpass's envelope around some elements, with an optional trailing remark.
fn envelope(elements: &[String], remark: Option<&str>) -> String {
    let remark = remark
        .map(|r| format!(",\"remark\":{}", serde_json::to_string(r).expect("string")))
        .unwrap_or_default();
    format!(
        "{{\"version\":0.6,\"generator\":\"Overpass API 0.7.62.1 084b4234\",\
         \"osm3s\":{{\"timestamp_osm_base\":\"2024-06-12T09:14:52Z\",\"copyright\":\"The data included in this document is from www.openstreetmap.org. The data is made available under ODbL.\"}},\
         \"elements\":[{}]{remark}}}",
        elements.join(",")
    )
}

/// Days of `day_km` each due north from (lat0, 7.85), a point every 100 m; `wiggle_m`
/// swings the line east and west with a 4 km period, as a real road does.
fn days(count: u32, day_km: f64, lat0: f64, wiggle_m: f64) -> Vec<Vec<StagePoint>> {
    (0..count)
        .map(|day| {
            let steps = (day_km * 10.0).round() as u32;
            (0..=steps)
                .map(|i| {
                    let along_m = f64::from(day) * day_km * 1000.0 + f64::from(i) * 100.0;
                    let lat = lat0 + along_m / M_PER_DEG;
                    let east_m = wiggle_m * (along_m / 4000.0 * std::f64::consts::TAU).sin();
                    StagePoint {
                        lat,
                        lon: 7.85 + east_m / (M_PER_DEG * lat.to_radians().cos()),
                        ele: None,
                        distance_m: f64::from(i) * 100.0,
                    }
                })
                .collect()
        })
        .collect()
}

fn stages(lines: &[Vec<StagePoint>]) -> Vec<OsmStage<'_>> {
    lines
        .iter()
        .enumerate()
        .map(|(i, points)| {
            let at = |p: &StagePoint| (p.lat, p.lon);
            OsmStage {
                day_number: u32::try_from(i + 1).expect("few days"),
                is_rest_day: false,
                points,
                start: points.first().map(at).expect("points"),
                end: points.last().map(at).expect("points"),
                distance_km: points.last().map_or(0.0, |p| p.distance_m / 1000.0),
                ascent_m: Some(0.0),
                date: None,
                country: None,
            }
        })
        .collect()
}

/// Two 3 km days north of Freiburg: one chunk and three place batches.
fn freiburg_plan() -> SearchPlan {
    let lines = days(2, 3.0, 47.99, 0.0);
    SearchPlan::for_stages(&stages(&lines))
}

fn canned_freiburg(_: usize, ql: &str) -> (u16, String) {
    if is_chunk(ql) {
        (200, fixture("overpass_corridor_chunk.json"))
    } else {
        (200, fixture("overpass_corridor_places.json"))
    }
}

async fn along(client: &OverpassClient, plan: &SearchPlan) -> Result<RouteFeatures, UpstreamError> {
    // Through the port, as the analysis calls it.
    let port: &dyn OsmFeatures = client;
    port.along(plan).await
}

#[tokio::test]
async fn classifies_points_and_keeps_way_and_ferry_geometry() {
    let (base, stand) = serve(canned_freiburg).await;
    let client = client_for(&base, Duration::from_secs(5));
    assert_eq!(OsmFeatures::source(&client), "overpass");
    let found = along(&client, &freiburg_plan()).await.expect("along");

    assert_eq!(
        found.requests, 4,
        "one chunk, health, stations, accommodations"
    );
    assert!(found.uncovered_days.is_empty());
    let kind_of = |id_name: &str| {
        found
            .points
            .iter()
            .find(|f| f.name.as_deref() == Some(id_name))
            .map(|f| f.kind)
    };
    let bakery = found
        .points
        .iter()
        .find(|f| f.kind == FeatureKind::Food(FoodKind::Bakery))
        .expect("bakery");
    assert_eq!(
        bakery.name.as_deref(),
        Some("Bäckerei Kreutz"),
        "control and bidi characters stripped"
    );
    assert_eq!(
        bakery.opening_hours.as_deref(),
        Some("Mo-Fr 06:00-18:00; Sa 06:00-12:00")
    );
    assert_eq!(bakery.website, None, "a javascript: link is no website");
    let water: Vec<_> = found
        .points
        .iter()
        .filter(|f| f.kind == FeatureKind::DrinkingWater)
        .collect();
    assert_eq!(water.len(), 1, "the tap at latitude 148 is dropped");
    assert_eq!((water[0].lat, water[0].lon), (48.0102, 7.8511));
    assert_eq!(kind_of("Dreisamfurt"), Some(FeatureKind::Ford));
    let castle = found
        .points
        .iter()
        .find(|f| f.kind == FeatureKind::Cultural(CulturalKind::Castle))
        .expect("castle at its centre");
    assert_eq!((castle.lat, castle.lon), (48.0411, 7.864));
    assert_eq!(castle.wikidata.as_deref(), Some("Q1011542"));
    assert_eq!(
        castle.website.as_deref(),
        Some("https://www.burg-zaehringen.example/")
    );
    assert_eq!(
        kind_of("Freiburg (Breisgau) Hauptbahnhof"),
        Some(FeatureKind::RailwayStation)
    );
    let museum_line = found
        .points
        .iter()
        .find(|f| f.name.as_deref() == Some("Museumsbahnhof"))
        .expect("tourist station kept, with its usage");
    assert_eq!(museum_line.usage.as_deref(), Some("tourism"));
    assert_eq!(
        kind_of("Universitätsklinikum"),
        Some(FeatureKind::Health(HealthKind::Hospital))
    );
    let camp = found
        .points
        .iter()
        .find(|f| matches!(f.kind, FeatureKind::Accommodation(_)))
        .expect("camp site");
    assert_eq!(camp.seasonal.as_deref(), Some("Apr-Oct"));
    assert_eq!(found.points.len(), 8, "the bench is not kept");

    // Road ways with their geometry; the null splits the track into one placed run.
    assert_eq!(found.ways.len(), 2);
    let secondary = &found.ways[0];
    assert_eq!(secondary.tags.highway, "secondary");
    assert_eq!(secondary.tags.maxspeed.as_deref(), Some("70"));
    assert_eq!(
        secondary.points,
        [(48.0, 7.85), (48.01, 7.85), (48.02, 7.85)]
    );
    assert_eq!(found.ways[1].tags.tracktype.as_deref(), Some("grade3"));
    assert_eq!(found.ways[1].points, [(48.03, 7.86), (48.04, 7.864)]);
    assert_eq!(found.ferries.len(), 1);
    assert_eq!(found.ferries[0].name.as_deref(), Some("Rheinfähre Kappel"));
    assert_eq!(found.ferries[0].points, [(48.035, 7.85), (48.036, 7.87)]);

    // The QL: every family around the day line, ways at 55 m, ferries at 125 m, then the
    // places at their rules' radii.
    let queries = stand.queries();
    assert_eq!(queries.len(), 4);
    let chunk = &queries[0];
    assert!(chunk.starts_with("[out:json][timeout:25];("), "{chunk}");
    assert!(
        chunk.contains(r#"nwr["shop"~"^(supermarket|convenience|bakery"#),
        "{chunk}"
    );
    assert!(
        chunk.contains(r#"nwr["ford"]["ford"!="no"](around:2025,47.99000,7.85000,"#),
        "{chunk}"
    );
    assert!(
        chunk.contains(r#"way["highway"](around:55,47.99000,7.85000,"#),
        "{chunk}"
    );
    assert!(
        chunk.contains(r#"way["route"="ferry"](around:125,"#),
        "{chunk}"
    );
    assert!(queries[1].contains(r#"nwr["amenity"~"^(pharmacy|hospital|clinic)$"](around:15000,"#));
    // Three distinct station searches: the first day's end is the second day's start.
    assert_eq!(
        queries[2]
            .matches(r#"nwr["railway"="station"](around:10000,"#)
            .count(),
        3
    );
    assert_eq!(queries[3].matches("(around:5000,").count(), 2);

    // The analysis takes it from here: the secondary road lies on the first day's line.
    let lines = days(2, 3.0, 47.99, 0.0);
    let per_day = corridors(&stages(&lines), &found);
    // The ford lies 760 m east on a track the day does not ride: found, classified (above),
    // and not the day's.
    assert!(
        !per_day[0]
            .points
            .iter()
            .any(|f| f.kind == FeatureKind::Ford)
    );
    assert_eq!(per_day[0].ways.len(), 1, "{:?}", per_day[0].ways);
    assert!(per_day[0].ways[0].length_m > 1000.0);
}

#[tokio::test]
async fn a_second_call_is_served_from_the_cache() {
    let (base, stand) = serve(canned_freiburg).await;
    let client = client_for(&base, Duration::from_secs(5));
    let first = along(&client, &freiburg_plan()).await.expect("first");
    let second = along(&client, &freiburg_plan()).await.expect("second");
    assert_eq!(stand.count(), 4);
    assert_eq!(second.requests, 0);
    assert_eq!(second.points, first.points);
    assert_eq!(second.ways, first.ways);
    assert_eq!(second.ferries, first.ferries);
}

#[tokio::test]
async fn nothing_to_search_sends_nothing() {
    let (base, stand) = serve(canned_freiburg).await;
    let found = along(
        &client_for(&base, Duration::from_secs(5)),
        &SearchPlan::default(),
    )
    .await
    .expect("empty plan");
    assert_eq!(found, RouteFeatures::default());
    assert_eq!(stand.count(), 0);
}

#[tokio::test]
async fn a_bad_radius_is_refused_locally() {
    let (base, stand) = serve(canned_freiburg).await;
    let plan = SearchPlan {
        way_radius_m: -1.0,
        ..freiburg_plan()
    };
    let error = expect_failure(along(&client_for(&base, Duration::from_secs(5)), &plan).await);
    assert_eq!(error.upstream, Upstream::Overpass);
    assert!(error.failure.contains("way_radius_m"), "{}", error.failure);
    assert!(!error.retryable);
    assert_eq!(stand.count(), 0);
}

/// Overpass answering every query of a 1,000 km route: per chunk, a water tap at every
/// vertex of its polyline (ids from the rounded position, so a vertex two chunks share is
/// the same node), `ways_per_vertex` road ways of 12 vertices each; per place, one match.
fn synthetic(ways_per_vertex: usize) -> impl Fn(usize, &str) -> (u16, String) + Send + Sync {
    move |index, ql| {
        let mut elements = Vec::new();
        if is_chunk(ql) {
            for (lat, lon) in first_polyline(ql) {
                let id = (lat * 1e5).round() as u64 * 1_000_000 + (lon * 1e5).round() as u64;
                elements.push(format!(
                    r#"{{"type":"node","id":{id},"lat":{lat},"lon":{lon},"tags":{{"amenity":"drinking_water"}}}}"#
                ));
                elements.push(format!(
                    r#"{{"type":"node","id":{},"lat":{},"lon":{lon},"tags":{{"shop":"bakery","name":"Beck","opening_hours":"Mo-Sa 07:00-18:00"}}}}"#,
                    id + 1,
                    lat + 0.002
                ));
                for w in 0..ways_per_vertex {
                    let geometry: Vec<String> = (0..12)
                        .map(|k| {
                            format!(
                                r#"{{"lat":{},"lon":{}}}"#,
                                lat + 0.000_3 * f64::from(k),
                                lon + 0.000_2 * (w as f64)
                            )
                        })
                        .collect();
                    elements.push(format!(
                        r#"{{"type":"way","id":{},"bounds":{{}},"geometry":[{}],"tags":{{"highway":"residential","surface":"asphalt","maxspeed":"30"}}}}"#,
                        id * 100 + w as u64,
                        geometry.join(",")
                    ));
                }
            }
        } else {
            let tags = if ql.contains("railway") {
                r#"{"railway":"station"}"#
            } else if ql.contains("pharmacy") {
                r#"{"amenity":"pharmacy"}"#
            } else {
                r#"{"tourism":"hotel"}"#
            };
            for (i, (lat, lon)) in around_points(ql).into_iter().enumerate() {
                let id = 9_000_000_000 + index as u64 * 1000 + i as u64;
                elements.push(format!(
                    r#"{{"type":"node","id":{id},"lat":{lat},"lon":{lon},"tags":{tags}}}"#
                ));
            }
        }
        (200, envelope(&elements, None))
    }
}

/// The polyline of a chunk query's first `around`.
fn first_polyline(ql: &str) -> Vec<(f64, f64)> {
    let start = ql.find("(around:").expect("an around") + "(around:".len();
    let end = start + ql[start..].find(')').expect("closed");
    let numbers: Vec<f64> = ql[start..end]
        .split(',')
        .skip(1)
        .map(|n| n.parse().expect("a number"))
        .collect();
    numbers.chunks(2).map(|p| (p[0], p[1])).collect()
}

/// The centre of each `around:R,lat,lon` of a place query.
fn around_points(ql: &str) -> Vec<(f64, f64)> {
    ql.split("(around:")
        .skip(1)
        .map(|part| {
            let end = part.find(')').expect("closed");
            let numbers: Vec<f64> = part[..end]
                .split(',')
                .map(|n| n.parse().expect("a number"))
                .collect();
            (numbers[1], numbers[2])
        })
        .collect()
}

/// Requests a 1,000 km route of 10 days costs: 7 chunks of at most 150 km plus one batch
/// per place class.
const REQUESTS_PER_1000_KM: usize = 10;

#[tokio::test]
async fn a_1000_km_route_is_a_handful_of_requests() {
    let lines = days(10, 100.0, 45.0, 0.0);
    let plan = SearchPlan::for_stages(&stages(&lines));
    assert!(
        (plan.length_km() - 1000.0).abs() < 1.0,
        "{}",
        plan.length_km()
    );
    let (base, stand) = serve(synthetic(1)).await;
    let client = client_for(&base, Duration::from_secs(5));
    let found = along(&client, &plan).await.expect("along");

    assert_eq!(stand.count(), REQUESTS_PER_1000_KM);
    assert_eq!(found.requests as usize, REQUESTS_PER_1000_KM);
    let queries = stand.queries();
    assert_eq!(queries.iter().filter(|q| is_chunk(q)).count(), 7);
    // Chunks cover the line end to end: each starts where the previous ended.
    let chunks: Vec<Vec<(f64, f64)>> = queries
        .iter()
        .filter(|q| is_chunk(q))
        .map(|q| first_polyline(q))
        .collect();
    for pair in chunks.windows(2) {
        assert_eq!(pair[0].last(), pair[1].first());
    }
    // A tap at every vertex; the six vertices two chunks share are counted once.
    let vertices: usize = chunks.iter().map(Vec::len).sum();
    let taps = found
        .points
        .iter()
        .filter(|f| f.kind == FeatureKind::DrinkingWater)
        .count();
    assert_eq!(taps, vertices - 6);
    assert_eq!(found.ways.len(), vertices - 6);
    // One match per place: 10 midpoints, 11 distinct day starts and ends, 10 ends.
    let count = |class: PlaceClass| {
        found
            .points
            .iter()
            .filter(|f| class.contains(f.kind))
            .count()
    };
    assert_eq!(count(PlaceClass::Health), 10);
    assert_eq!(count(PlaceClass::RailwayStation), 11);
    assert_eq!(count(PlaceClass::Accommodation), 10);
    println!(
        "1,000 km in 10 days: {} requests ({} chunks of at most 150 km, {} place batches)",
        stand.count(),
        chunks.len(),
        stand.count() - chunks.len()
    );
}

#[tokio::test]
async fn a_winding_1000_km_route_stays_within_budget() {
    // 300 m swings every 4 km: thinning keeps many vertices, and chunks fill by count too.
    let lines = days(10, 100.0, 45.0, 300.0);
    let plan = SearchPlan::for_stages(&stages(&lines));
    let vertices: usize = plan.lines.iter().map(Vec::len).sum();
    let (base, stand) = serve(synthetic(20)).await;
    let client = client_for(&base, Duration::from_secs(30));
    let started = Instant::now();
    let found = along(&client, &plan).await.expect("along");
    let elapsed = started.elapsed();
    let queries = stand.queries();
    let query_bytes: usize = queries.iter().map(String::len).sum();
    println!(
        "winding 1,000 km ({:.0} km of line, {vertices} thinned vertices): {} requests, \
         {} KB of QL, {:.1} MB of answers, {} points, {} ways, along took {:.0} ms \
         (the stand-in writing its answers included)",
        plan.length_km(),
        stand.count(),
        query_bytes / 1024,
        stand.answer_bytes.load(Ordering::SeqCst) as f64 / 1e6,
        found.points.len(),
        found.ways.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    assert!(stand.count() <= 16, "{} requests", stand.count());
    // The rest of the analysis on what came back: the clipping and the rules.
    let days = stages(&lines);
    let started = Instant::now();
    let corridors = corridors(&days, &found);
    let settings = etappe_analysis::osm::OsmSettings {
        departure_hour: 8,
        average_speed_kmh: 15.0,
        reach: Default::default(),
    };
    let alerts = etappe_analysis::osm::analyse_osm(&days, &corridors, &settings);
    let rules = started.elapsed();
    println!(
        "then corridors() and the rules: {:.0} ms ({} alerts); the analysis in all {:.0} ms",
        rules.as_secs_f64() * 1000.0,
        alerts.iter().map(Vec::len).sum::<usize>(),
        (elapsed + rules).as_secs_f64() * 1000.0
    );
    let started = Instant::now();
    let cached = along(&client, &plan).await.expect("cached");
    println!(
        "the same from the cache: {} requests, {:.0} ms",
        cached.requests,
        started.elapsed().as_secs_f64() * 1000.0
    );
    assert_eq!(cached.requests, 0);
    assert_eq!(cached.points.len(), found.points.len());
}

fn failing(status: u16, body: &'static str) -> impl Fn(usize, &str) -> (u16, String) + Send + Sync {
    move |_, _| (status, body.to_owned())
}

#[tokio::test]
async fn a_runtime_error_remark_is_a_failure_naming_overpass() {
    let (base, _) = serve(|_, _| {
        (
            200,
            envelope(
                &[r#"{"type":"node","id":1,"lat":47.99,"lon":7.85,"tags":{"amenity":"drinking_water"}}"#.to_owned()],
                Some(r#"runtime error: Query timed out in "query" at line 1 after 26 seconds."#),
            ),
        )
    })
    .await;
    let error =
        expect_failure(along(&client_for(&base, Duration::from_secs(5)), &freiburg_plan()).await);
    assert_eq!(error.upstream, Upstream::Overpass);
    assert!(
        error
            .to_string()
            .starts_with("the overpass upstream failed"),
        "{error}"
    );
    assert!(
        error.failure.contains("Query timed out"),
        "{}",
        error.failure
    );
    assert!(
        error.failure.ends_with("(corridor part 1 of 4)"),
        "{}",
        error.failure
    );
    assert!(error.retryable);
}

#[tokio::test]
async fn too_many_requests_and_gateway_timeouts_are_retryable_failures() {
    let (base, _) = serve(failing(429, "rate_limited")).await;
    let error =
        expect_failure(along(&client_for(&base, Duration::from_secs(5)), &freiburg_plan()).await);
    assert_eq!(error.upstream, Upstream::Overpass);
    assert!(
        error.failure.starts_with("rate limited (429)"),
        "{}",
        error.failure
    );
    assert!(error.retryable);

    let (base, _) = serve(failing(504, "<html><body>Gateway Timeout</body></html>")).await;
    let error =
        expect_failure(along(&client_for(&base, Duration::from_secs(5)), &freiburg_plan()).await);
    assert_eq!(error.failure, "server error 504 (corridor part 1 of 4)");
    assert!(error.retryable);
}

#[tokio::test]
async fn invalid_json_is_a_failure_not_an_empty_corridor() {
    for body in [
        "<html>Bad Gateway</html>",
        "{\"elements\": [",
        "",
        "null",
        r#"{"version":0.6}"#,
    ] {
        let (base, _) = serve(failing(200, body)).await;
        let error = expect_failure(
            along(&client_for(&base, Duration::from_secs(5)), &freiburg_plan()).await,
        );
        assert_eq!(error.upstream, Upstream::Overpass);
        assert!(
            error.failure.starts_with("unexpected response"),
            "{body:?}: {}",
            error.failure
        );
        assert!(!error.retryable);
    }
}

#[tokio::test]
async fn a_slow_instance_is_a_retryable_timeout() {
    let (base, _) = serve_with(Duration::from_secs(3), canned_freiburg).await;
    let error = expect_failure(
        along(
            &client_for(&base, Duration::from_millis(300)),
            &freiburg_plan(),
        )
        .await,
    );
    assert_eq!(error.failure, "timeout after 0.3s (corridor part 1 of 4)");
    assert!(error.retryable);
}

#[tokio::test]
async fn a_failure_part_way_keeps_the_answered_parts_cached() {
    // The third query fails once; the retry sends only it and the one after.
    let (base, stand) = serve(|index, ql| {
        if index == 2 {
            (504, "Gateway Timeout".to_owned())
        } else {
            canned_freiburg(index, ql)
        }
    })
    .await;
    let client = client_for(&base, Duration::from_secs(5));
    let error = expect_failure(along(&client, &freiburg_plan()).await);
    assert!(
        error.failure.ends_with("(corridor part 3 of 4)"),
        "{}",
        error.failure
    );
    assert_eq!(stand.count(), 3);
    let found = along(&client, &freiburg_plan()).await.expect("retry");
    assert_eq!(found.requests, 2);
    assert_eq!(stand.count(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_query_at_a_time_across_callers() {
    let (base, stand) = serve_with(Duration::from_millis(100), canned_freiburg).await;
    let client = client_for(&base, Duration::from_secs(5));
    let other = SearchPlan::for_stages(&stages(&days(2, 3.0, 46.5, 0.0)));
    let tasks: Vec<_> = [freiburg_plan(), other]
        .into_iter()
        .map(|plan| {
            let client = client.clone();
            tokio::spawn(async move { client.along(&plan).await })
        })
        .collect();
    // The accommodation search shares the gate (the places answer holds no hotel).
    let hotels = client
        .accommodations_near(BedSearch {
            lat: 47.99,
            lon: 7.85,
            radius_m: 2000,
            types: &[etappe_upstream::AccommodationType::Hotel],
        })
        .await
        .expect("accommodations");
    assert!(hotels.is_empty());
    for task in tasks {
        task.await.expect("task").expect("along");
    }
    assert_eq!(stand.count(), 9);
    assert_eq!(stand.max_in_flight.load(Ordering::SeqCst), 1);
}
