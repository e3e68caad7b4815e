//! A local HTTP server that serves route fixtures the way the outside world would: a good
//! GPX file, one that is not GPX, an empty one, a truncated one, one over 30 MB, a redirect to
//! a private address, a 404, and a slow one (for fault tests).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use etappe_route::synthetic::{Profile, synthetic_route, to_gpx};

/// A running fixture server.
#[derive(Debug, Clone)]
pub struct Fixtures {
    pub addr: SocketAddr,
}

impl Fixtures {
    /// The URL of a fixture path.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// A route of `km` kilometres with climbs of 400 m every 20 km, as GPX.
// A 400 m climb every 20 km: 300 km climb 6,000 m, 420 km of effort at the default 50 m per
// flat km, so the tests that want three days of 100 km ask for 140 km of effort a day.
pub fn route_gpx(km: f64, spacing_m: f64) -> String {
    let points = synthetic_route(
        km,
        spacing_m,
        Profile::Climbs {
            height_m: 400.0,
            period_km: 20.0,
        },
    );
    to_gpx(&points, "Synthetic Alps")
}

/// Starts the fixture server on a free loopback port.
pub async fn start() -> Fixtures {
    let good = Arc::new(route_gpx(300.0, 50.0));
    let long = Arc::new(route_gpx(1000.0, 25.0));
    // Alpine: a 500 m climb every 10 km (10 % on average), so every day has alerts.
    let steep = Arc::new(to_gpx(
        &synthetic_route(
            1000.0,
            25.0,
            Profile::Climbs {
                height_m: 500.0,
                period_km: 10.0,
            },
        ),
        "Synthetic passes",
    ));
    let app = Router::new()
        // The route the committed OpenStreetMap extract is drawn around.
        .route(
            "/osm-route.gpx",
            get(|| async { include_str!("../fixtures/osm/route.gpx") }),
        )
        .route("/route.gpx", get({
            let good = Arc::clone(&good);
            move || async move { good.as_str().to_owned() }
        }))
        .route("/steep.gpx", get({
            let steep = Arc::clone(&steep);
            move || async move { steep.as_str().to_owned() }
        }))
        .route("/long.gpx", get({
            let long = Arc::clone(&long);
            move || async move { long.as_str().to_owned() }
        }))
        .route("/slow.gpx", get({
            let good = Arc::clone(&good);
            move || async move {
                tokio::time::sleep(Duration::from_secs(3)).await;
                good.as_str().to_owned()
            }
        }))
        .route("/not-gpx.txt", get(|| async { "this is a shopping list, not a route" }))
        .route("/empty.gpx", get(|| async {
            r#"<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>Empty</name><trkseg></trkseg></trk></gpx>"#
        }))
        .route("/truncated.gpx", get({
            let good = Arc::clone(&good);
            move || async move { good[..good.len() / 2].to_owned() }
        }))
        .route("/huge.gpx", get(|| async {
            // 31 MB, streamed without a Content-Length so the cap is enforced while reading.
            let chunk = vec![b' '; 1024 * 1024];
            let stream = futures::stream::iter((0..31).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
            Response::builder()
                .header(header::CONTENT_TYPE, "application/gpx+xml")
                .body(Body::from_stream(stream))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }))
        .route("/redirect-private", get(|| async {
            (StatusCode::FOUND, [(header::LOCATION, "https://169.254.169.254/latest/meta-data")])
        }))
        .route("/missing.gpx", get(|| async { StatusCode::NOT_FOUND }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind fixtures");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    Fixtures { addr }
}
