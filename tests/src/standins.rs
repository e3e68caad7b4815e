//! Stand-ins for the third-party upstreams on loopback, speaking their real formats:
//! Nominatim (`/status`, `/search` jsonv2), Overpass (`/api/status`, `/api/interpreter` with
//! Overpass QL in a form body, answered with `out center tags` JSON) and Valhalla (`/status`,
//! `/route` with polyline6 legs). Each answers around what it is asked, so a scan finds a
//! hotel near every day's end and a route really passes through its waypoint. A slow
//! geocoder stands for one that is down.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

/// The recorded shape of a Nominatim jsonv2 search (three Freiburgs).
const NOMINATIM_SEARCH: &str =
    include_str!("../../adapters/upstream/tests/fixtures/nominatim_search_freiburg.json");

/// A running set of stand-ins, and what they were asked.
#[derive(Debug, Clone)]
pub struct StandIns {
    pub addr: SocketAddr,
    /// `METHOD path User-Agent` of every request, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl StandIns {
    /// The base URL of one upstream (`nominatim`, `overpass`, `valhalla`).
    pub fn url(&self, upstream: &str) -> String {
        format!("http://{}/{upstream}", self.addr)
    }

    /// The requests whose line contains `needle`.
    pub fn requests_to(&self, needle: &str) -> Vec<String> {
        self.requests
            .lock()
            .map(|r| r.iter().filter(|l| l.contains(needle)).cloned().collect())
            .unwrap_or_default()
    }
}

type Log = Arc<Mutex<Vec<String>>>;

fn record(log: &Log, line: &str, headers: &HeaderMap) {
    let agent = headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    if let Ok(mut log) = log.lock() {
        log.push(format!("{line} {agent}"));
    }
}

/// Starts Nominatim, Overpass and Valhalla stand-ins on one free loopback port.
pub async fn start() -> StandIns {
    let requests: Log = Arc::default();
    let app = Router::new()
        .route(
            "/nominatim/status",
            get(|State(log): State<Log>, headers: HeaderMap| async move {
                record(&log, "GET /nominatim/status", &headers);
                Json(json!({"status": 0, "message": "OK", "software_version": "4.4.0"}))
            }),
        )
        .route(
            "/nominatim/search",
            get(|State(log): State<Log>, headers: HeaderMap| async move {
                record(&log, "GET /nominatim/search", &headers);
                ([("content-type", "application/json")], NOMINATIM_SEARCH)
            }),
        )
        .route(
            "/overpass/api/status",
            get(|State(log): State<Log>, headers: HeaderMap| async move {
                record(&log, "GET /overpass/api/status", &headers);
                "Connected as: 2130706433\nRate limit: 2\n2 slots available now.\n"
            }),
        )
        .route("/overpass/api/interpreter", post(overpass_interpreter))
        .route(
            "/valhalla/status",
            get(|State(log): State<Log>, headers: HeaderMap| async move {
                record(&log, "GET /valhalla/status", &headers);
                Json(json!({"version": "3.5.1", "tileset_last_modified": 1_717_000_000}))
            }),
        )
        .route("/valhalla/route", post(valhalla_route))
        .with_state(Arc::clone(&requests));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind stand-ins");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    StandIns { addr, requests }
}

/// `nwr["tourism"~"^(…)$"](around:R,LAT,LON);` → one hotel 200 m north of the point.
async fn overpass_interpreter(
    State(log): State<Log>,
    headers: HeaderMap,
    Form(form): Form<std::collections::HashMap<String, String>>,
) -> Json<Value> {
    let query = form.get("data").cloned().unwrap_or_default();
    record(
        &log,
        &format!("POST /overpass/api/interpreter {query}"),
        &headers,
    );
    let around = query
        .split("(around:")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .map(|inside| {
            inside
                .split(',')
                .filter_map(|n| n.trim().parse::<f64>().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let elements = match around.as_slice() {
        [_, lat, lon] => vec![json!({
            "type": "node",
            "id": 4_242_424_242_u64,
            "lat": lat + 0.0018,
            "lon": lon,
            "tags": {"tourism": "hotel", "name": "Hôtel du Relais", "stars": "2",
                     "website": "https://relais.example"}
        })],
        _ => Vec::new(),
    };
    Json(json!({
        "version": 0.6,
        "generator": "Overpass API 0.7.62.1 (stand-in)",
        "osm3s": {"timestamp_osm_base": "2026-11-30T00:00:00Z",
                  "copyright": "The data included in this document is from www.openstreetmap.org. The data is made available under ODbL."},
        "elements": elements
    }))
}

/// Legs as straight lines between the asked locations, ten points each, polyline6.
async fn valhalla_route(
    State(log): State<Log>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Json<Value> {
    record(&log, "POST /valhalla/route", &headers);
    let locations: Vec<(f64, f64)> = body["locations"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|p| Some((p["lat"].as_f64()?, p["lon"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let legs: Vec<Value> = locations
        .windows(2)
        .map(|pair| {
            let (a, b) = (pair[0], pair[1]);
            let shape: Vec<(f64, f64)> = (0..=10)
                .map(|i| {
                    let t = f64::from(i) / 10.0;
                    (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
                })
                .collect();
            json!({"shape": encode_polyline6(&shape), "summary": {"length": 1.0}})
        })
        .collect();
    Json(json!({"trip": {"status": 0, "legs": legs, "units": "kilometers"}}))
}

/// Google's polyline algorithm at 6 decimals, as Valhalla encodes shapes.
fn encode_polyline6(points: &[(f64, f64)]) -> String {
    let mut out = String::new();
    let (mut previous_lat, mut previous_lon) = (0_i64, 0_i64);
    for &(lat, lon) in points {
        let (lat, lon) = ((lat * 1e6).round() as i64, (lon * 1e6).round() as i64);
        for delta in [lat - previous_lat, lon - previous_lon] {
            let mut value = if delta < 0 { !(delta << 1) } else { delta << 1 } as u64;
            while value >= 0x20 {
                out.push(char::from(((0x20 | (value & 0x1f)) + 63) as u8));
                value >>= 5;
            }
            out.push(char::from((value + 63) as u8));
        }
        (previous_lat, previous_lon) = (lat, lon);
    }
    out
}

/// A geocoder that accepts connections and answers nothing for `delay`: with a shorter
/// upstream timeout it is a geocoder that is down.
pub async fn slow_geocoder(delay: Duration) -> String {
    let app = Router::new().fallback(move || async move {
        tokio::time::sleep(delay).await;
        Json(json!([]))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind slow geocoder");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}
