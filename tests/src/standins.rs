//! Stand-ins for the third-party upstreams on loopback, speaking their real formats:
//! Nominatim (`/status`, `/search` jsonv2), Overpass (`/api/status`, `/api/interpreter` with
//! Overpass QL in a form body, answered with `out center tags` JSON), Open-Meteo
//! (`/v1/forecast` with comma lists of locations, answered with an array, or an object for
//! one; 400 with a reason, 429) and Valhalla (`/status`, `/route` with polyline6 legs). Each answers around what it is asked, so a scan finds a
//! hotel near every day's end and a route really passes through its waypoint. A slow
//! geocoder stands for one that is down.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, Query, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

mod overpass;

/// The recorded shape of a Nominatim jsonv2 search (three Freiburgs).
const NOMINATIM_SEARCH: &str =
    include_str!("../../adapters/upstream/tests/fixtures/nominatim_search_freiburg.json");

/// A running set of stand-ins, and what they were asked.
#[derive(Debug, Clone)]
pub struct StandIns {
    pub addr: SocketAddr,
    /// `METHOD path User-Agent` of every request, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    /// How the Open-Meteo stand-in answers (changeable while it runs).
    pub weather: Arc<Mutex<WeatherMode>>,
}

/// How the Open-Meteo stand-in answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeatherMode {
    /// Forecasts with this wind everywhere (from `wind_from_deg`, at `wind_kmh`); 12 °C at
    /// midnight rising 0.4 °C an hour, rain 20 %, humidity 60 %.
    Forecast { wind_kmh: f64, wind_from_deg: f64 },
    /// 400 `{"error": true, "reason": …}`, as for a parameter out of range.
    Refuse,
    /// 429, "Minutely API request limit exceeded".
    RateLimited,
}

impl Default for WeatherMode {
    /// An east wind of 30 km/h: a headwind for the synthetic routes, which head east.
    fn default() -> Self {
        Self::Forecast {
            wind_kmh: 30.0,
            wind_from_deg: 90.0,
        }
    }
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

/// Starts Nominatim, Overpass, Open-Meteo and Valhalla stand-ins on one free loopback port.
pub async fn start() -> StandIns {
    let requests: Log = Arc::default();
    let weather: Arc<Mutex<WeatherMode>> = Arc::default();
    let forecast = Router::new()
        .route("/open-meteo/v1/forecast", get(open_meteo_forecast))
        .with_state((Arc::clone(&requests), Arc::clone(&weather)));
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
        .with_state(Arc::clone(&requests))
        .merge(forecast);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind stand-ins");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    StandIns {
        addr,
        requests,
        weather,
    }
}

/// `latitude=a,b&longitude=c,d&hourly=…&start_date&end_date&timezone=auto` → one object per
/// location with every hour of every date asked (an object alone for one location). Dates
/// past today + 15 are refused as Open-Meteo does.
async fn open_meteo_forecast(
    State((log, mode)): State<(Log, Arc<Mutex<WeatherMode>>)>,
    headers: HeaderMap,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let get = |key: &str| query.get(key).cloned().unwrap_or_default();
    record(
        &log,
        &format!(
            "GET /open-meteo/v1/forecast latitude={} longitude={} start_date={} end_date={}",
            get("latitude"),
            get("longitude"),
            get("start_date"),
            get("end_date")
        ),
        &headers,
    );
    let mode = mode.lock().map(|m| *m).unwrap_or_default();
    let refuse = |reason: String| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": true, "reason": reason})),
        )
            .into_response()
    };
    let (wind_kmh, wind_from_deg) = match mode {
        WeatherMode::Refuse => {
            return refuse("Parameter 'start_date' is out of allowed range".into());
        }
        WeatherMode::RateLimited => {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                Json(json!({"error": true, "reason": "Minutely API request limit exceeded. Please try again in one minute."})),
            )
                .into_response();
        }
        WeatherMode::Forecast {
            wind_kmh,
            wind_from_deg,
        } => (wind_kmh, wind_from_deg),
    };
    let numbers = |list: String| -> Vec<f64> {
        list.split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect()
    };
    let (lats, lons) = (numbers(get("latitude")), numbers(get("longitude")));
    if lats.is_empty() || lats.len() != lons.len() {
        return refuse(
            "Parameter 'latitude' and 'longitude' must have the same number of elements".into(),
        );
    }
    let date = |key: &str| get(key).parse::<chrono::NaiveDate>().ok();
    let today = chrono::Utc::now().date_naive();
    let last = today + chrono::Days::new(15);
    let days: u64 = get("forecast_days").parse().unwrap_or(7);
    let (start, end) = match (date("start_date"), date("end_date")) {
        (Some(start), Some(end)) => (start, end),
        (None, None) if (1..=16).contains(&days) => (today, today + chrono::Days::new(days - 1)),
        _ => {
            return refuse("Parameter 'start_date' and 'end_date' must be given together".into());
        }
    };
    if end > last || start > end {
        return refuse(format!(
            "Parameter 'end_date' is out of allowed range from {} to {last}",
            today - chrono::Days::new(92)
        ));
    }
    let mut time = Vec::new();
    let mut day = start;
    while day <= end {
        for hour in 0..24 {
            time.push(format!("{day}T{hour:02}:00"));
        }
        day = day + chrono::Days::new(1);
    }
    let hours = time.len();
    let temperature: Vec<f64> = (0..hours).map(|i| 12.0 + 0.4 * (i % 24) as f64).collect();
    let locations: Vec<Value> = lats
        .iter()
        .zip(&lons)
        .map(|(lat, lon)| {
            json!({
                "latitude": lat, "longitude": lon, "generationtime_ms": 0.5,
                "utc_offset_seconds": 3600, "timezone": "Europe/Paris",
                "timezone_abbreviation": "CET", "elevation": 300.0,
                "hourly_units": {"time": "iso8601", "temperature_2m": "°C",
                    "precipitation_probability": "%", "wind_speed_10m": "km/h",
                    "wind_direction_10m": "°", "relative_humidity_2m": "%"},
                "hourly": {
                    "time": time,
                    "temperature_2m": temperature,
                    "precipitation_probability": vec![20; hours],
                    "wind_speed_10m": vec![wind_kmh; hours],
                    "wind_direction_10m": vec![wind_from_deg; hours],
                    "relative_humidity_2m": vec![60; hours],
                }
            })
        })
        .collect();
    match <[Value; 1]>::try_from(locations) {
        Ok([one]) => Json(one).into_response(),
        Err(many) => Json(Value::Array(many)).into_response(),
    }
}

/// Overpass's interpreter: the elements [`overpass::elements`] makes up for the query.
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
    Json(json!({
        "version": 0.6,
        "generator": "Overpass API 0.7.62.1 (stand-in)",
        "osm3s": {"timestamp_osm_base": "2026-11-30T00:00:00Z",
                  "copyright": "The data included in this document is from www.openstreetmap.org. The data is made available under ODbL."},
        "elements": overpass::elements(&query)
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
