//! A stand-in for the route services on loopback, answering in their formats: Komoot tour
//! and collection pages (the JSON state passed to `kmtBoot.setProps("…")`), Strava's GPX
//! export and RideWithGPS's route JSON. The application is pointed at it through
//! `config.work.fetch_hooks.source_origins`, so links naming the real hosts are recognised as
//! usual while every page comes from here.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, Uri};
use axum::response::IntoResponse;
use axum::routing::get;
use etappe_route::TrackPoint;
use etappe_route::synthetic::{Profile, synthetic_route, to_gpx};
use serde_json::json;

/// The length of every route the stand-in serves, and of each collection tour.
pub const ROUTE_KM: f64 = 120.0;

/// A running stand-in and the paths it was asked for.
#[derive(Debug, Clone)]
pub struct RouteServices {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl RouteServices {
    /// The origin to put in `SourceOrigins`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The paths asked for so far.
    pub fn paths(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn route() -> Vec<TrackPoint> {
    synthetic_route(
        ROUTE_KM,
        200.0,
        Profile::Climbs {
            height_m: 300.0,
            period_km: 30.0,
        },
    )
}

/// A JSON document as the JavaScript string literal Komoot pages pass to `setProps`.
fn komoot_page(state: &serde_json::Value) -> String {
    let json = state.to_string();
    let literal = json
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('/', "\\/");
    format!(
        "<!DOCTYPE html><html><head><title>Tour</title></head><body><div id=\"pageMountNode\"></div>\n<script>\n  window.kmtBoot.setProps(\"{literal}\");\n</script></body></html>"
    )
}

fn komoot_tour(id: &str) -> String {
    let items: Vec<serde_json::Value> = route()
        .iter()
        .map(|p| json!({"lat": p.lat, "lng": p.lon, "alt": p.ele}))
        .collect();
    komoot_page(&json!({"page": {"_embedded": {"tour": {
        "id": id,
        "name": format!("Komoot tour {id}"),
        "sport": "touringbicycle",
        "_embedded": {"coordinates": {"items": items}}
    }}}}))
}

/// Starts the stand-in on a free loopback port.
pub async fn start() -> RouteServices {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = |requests: &Arc<Mutex<Vec<String>>>, path: String| {
        if let Ok(mut r) = requests.lock() {
            r.push(path);
        }
    };
    let (r1, r2, r3, r4, r5, r6) = (
        Arc::clone(&requests),
        Arc::clone(&requests),
        Arc::clone(&requests),
        Arc::clone(&requests),
        Arc::clone(&requests),
        Arc::clone(&requests),
    );
    let app = Router::new()
        .route(
            "/{locale}/tour/{id}",
            get(
                move |Path((locale, id)): Path<(String, String)>| async move {
                    seen(&r1, format!("/{locale}/tour/{id}"));
                    komoot_tour(&id)
                },
            ),
        )
        .route(
            "/tour/{id}",
            get(move |Path(id): Path<String>| async move {
                seen(&r2, format!("/tour/{id}"));
                komoot_tour(&id)
            }),
        )
        .route(
            "/collection/{id}",
            get(move |Path(id): Path<String>| async move {
                seen(&r3, format!("/collection/{id}"));
                komoot_page(&json!({"page": {"_embedded": {"collectionHal": {
                    "name": "Alps in two",
                    "_embedded": {"compilation": {"_embedded": {"items": [
                        {"id": 11, "type": "tour_planned"},
                        {"id": 900, "type": "highlight_point"},
                        {"id": "12", "type": "tour_recorded"}
                    ]}}}
                }}}}))
            }),
        )
        .route(
            "/routes/{id}/export_gpx",
            get(move |Path(id): Path<String>| async move {
                seen(&r4, format!("/routes/{id}/export_gpx"));
                to_gpx(&route(), "Strava route")
            }),
        )
        .route(
            "/routes/{id}",
            get(move |Path(file): Path<String>| async move {
                seen(&r5, format!("/routes/{file}"));
                let points: Vec<serde_json::Value> = route()
                    .iter()
                    .map(|p| json!({"x": p.lon, "y": p.lat, "e": p.ele}))
                    .collect();
                axum::Json(json!({"type": "route", "route": {
                    "id": file.trim_end_matches(".json"),
                    "name": "RideWithGPS route",
                    "track_points": points
                }}))
            }),
        )
        .fallback(move |uri: Uri| async move {
            seen(&r6, uri.path().to_owned());
            StatusCode::NOT_FOUND.into_response()
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind route services");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    RouteServices { addr, requests }
}
