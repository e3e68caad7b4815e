//! The Open-Meteo elevation adapter against a local stand-in that speaks the real API:
//! comma lists of latitudes and longitudes, at most 100, answered `{"elevation":[…]}` in
//! order, a refusal as 400 `{"error":true,"reason":"…"}`, no data as a bare `nan`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{Canned, MALFORMED_BODIES, dead_base_url, expect_failure, http_client, serve};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use etappe_upstream::{CachedHttp, Elevations, MemoryCache, OpenMeteoElevationClient, Upstream};

/// The stand-in's terrain: a plane rising north and east; west of 0° is sea (no data).
fn terrain(lat: f64, lon: f64) -> Option<f64> {
    (lon >= 0.0).then_some(100.0 + 10.0 * lat + lon)
}

/// What the stand-in was asked: the number of points of each request.
#[derive(Clone, Default)]
struct Asked(Arc<Mutex<Vec<usize>>>);

impl Asked {
    fn sizes(&self) -> Vec<usize> {
        self.0.lock().expect("lock").clone()
    }
}

fn refuse(reason: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [("content-type", "application/json")],
        serde_json::json!({"error": true, "reason": reason}).to_string(),
    )
        .into_response()
}

async fn elevation(
    State(asked): State<Asked>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let list = |key: &str| -> Option<Vec<f64>> {
        query
            .get(key)?
            .split(',')
            .map(|v| v.trim().parse().ok())
            .collect()
    };
    let (Some(lats), Some(lons)) = (list("latitude"), list("longitude")) else {
        return refuse("Parameter 'latitude' and 'longitude' must be floating point arrays");
    };
    if lats.len() != lons.len() {
        return refuse(
            "Parameter 'latitude' and 'longitude' must have the same number of elements",
        );
    }
    if lats.len() > 100 {
        return refuse("Only up to 100 coordinates can be requested at once");
    }
    asked.0.lock().expect("lock").push(lats.len());
    // Open-Meteo writes a missing value as a bare `nan`, not JSON's null.
    let heights: Vec<String> = lats
        .iter()
        .zip(&lons)
        .map(|(&lat, &lon)| {
            terrain(lat, lon).map_or_else(|| "nan".to_owned(), |h| format!("{h:.1}"))
        })
        .collect();
    (
        [("content-type", "application/json; charset=utf-8")],
        format!("{{\"elevation\":[{}]}}", heights.join(",")),
    )
        .into_response()
}

async fn open_meteo() -> (String, Asked) {
    let asked = Asked::default();
    let app = axum::Router::new()
        .route("/v1/elevation", axum::routing::get(elevation))
        .with_state(asked.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (format!("http://{address}"), asked)
}

fn client_for(base_url: &str) -> OpenMeteoElevationClient {
    OpenMeteoElevationClient::new(
        CachedHttp {
            client: http_client(),
            cache: Arc::new(MemoryCache::new(10_000)),
            timeout: Duration::from_millis(800),
        },
        base_url,
    )
    .expect("valid configuration")
}

/// `n` distinct points 0.001° apart going north-east from (45, 6).
fn points(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let step = i as f64 * 0.001;
            (45.0 + step, 6.0 + step)
        })
        .collect()
}

#[tokio::test]
async fn points_are_asked_a_hundred_at_a_time_then_read_from_the_cache() {
    let (base, asked) = open_meteo().await;
    let client = client_for(&base);
    assert_eq!(client.provider(), "open-meteo");
    let route = points(250);
    let heights = client.heights(&route).await.expect("answered");
    assert_eq!(asked.sizes(), [100, 100, 50]);
    assert_eq!(client.calls(), 3);
    assert_eq!(client.points_asked(), 250);
    assert_eq!(heights.len(), 250);
    for (&(lat, lon), height) in route.iter().zip(&heights) {
        let expected = terrain(lat, lon).expect("on land");
        let got = height.expect("a height");
        assert!((got - expected).abs() < 0.06, "{got} at {lat},{lon}");
    }

    // The same points again: every one from the cache, no call.
    assert_eq!(client.heights(&route).await.expect("cached"), heights);
    assert_eq!(client.calls(), 3);
    // Points within the same ~11 m cell as cached ones are cache hits too; new ones are
    // asked for alone.
    let mixed = [(45.000_01, 6.000_02), (50.0, 7.0)];
    let found = client.heights(&mixed).await.expect("answered");
    assert_eq!(found[0], heights[0]);
    assert_eq!(found[1], Some(607.0));
    assert_eq!(asked.sizes(), [100, 100, 50, 1]);
    assert_eq!(client.points_asked(), 251);
}

#[tokio::test]
async fn sea_and_impossible_positions_have_no_height() {
    let (base, asked) = open_meteo().await;
    let client = client_for(&base);
    let found = client
        .heights(&[
            (45.0, -3.0),
            (f64::NAN, 6.0),
            (91.0, 6.0),
            (45.0, 6.0),
            (45.0, 6.0),
        ])
        .await
        .expect("answered");
    assert_eq!(found, [None, None, None, Some(556.0), Some(556.0)]);
    // Only the two valid, distinct positions were sent.
    assert_eq!(asked.sizes(), [2]);
    assert!(client.heights(&[]).await.expect("nothing").is_empty());
    assert_eq!(client.calls(), 1, "an empty ask sends nothing");
    assert!(client.probe().await.is_ok());
    assert_eq!(client.calls(), 1, "probes are not look-ups");
}

#[tokio::test]
async fn a_rate_limit_is_retryable_and_names_the_elevation_upstream() {
    let (limited, _) = serve(
        Canned::status(
            429,
            r#"{"error":true,"reason":"Minutely API request limit exceeded"}"#,
        )
        .with_retry_after("60"),
    )
    .await;
    let client = client_for(&limited);
    let error = expect_failure(client.heights(&points(3)).await);
    assert_eq!(error.upstream, Upstream::Elevation);
    assert!(error.retryable);
    assert_eq!(error.failure, "rate limited (429), retry after 60s");
    assert!(
        error
            .to_string()
            .starts_with("the elevation upstream failed"),
        "{error}"
    );
    assert_eq!(client.calls(), 1);
    assert!(expect_failure(client.probe().await).retryable);

    let (broken, _) = serve(Canned::status(503, "<html>down</html>")).await;
    let error = expect_failure(client_for(&broken).heights(&points(1)).await);
    assert!(error.retryable);
    assert_eq!(error.failure, "server error 503");

    let error = expect_failure(client_for(&dead_base_url().await).heights(&points(1)).await);
    assert!(error.retryable);
    assert!(error.failure.starts_with("unreachable"), "{error}");

    let (slow, _) =
        serve(Canned::json(r#"{"elevation":[1.0]}"#).delayed(Duration::from_secs(3))).await;
    let error = expect_failure(client_for(&slow).heights(&points(1)).await);
    assert!(error.retryable);
    assert!(error.failure.starts_with("timeout after 0.8s"), "{error}");
}

#[tokio::test]
async fn garbage_is_not_retryable() {
    for body in
        MALFORMED_BODIES
            .iter()
            .chain(&[r#"{"elevation":"high"}"#, r#"{"height":[1.0]}"#, "[1.0]"])
    {
        let (base, _) = serve(Canned::json(*body)).await;
        let error = expect_failure(client_for(&base).heights(&points(1)).await);
        assert_eq!(error.upstream, Upstream::Elevation);
        assert!(!error.retryable, "{body:?}: {error}");
        assert!(error.failure.starts_with("unexpected response"), "{error}");
    }
}

#[tokio::test]
async fn an_answer_of_the_wrong_length_is_an_error_and_not_cached() {
    let (base, recorder) = serve(Canned::json(r#"{"elevation":[10.0,20.0]}"#)).await;
    let client = client_for(&base);
    let error = expect_failure(client.heights(&points(3)).await);
    assert!(!error.retryable);
    assert_eq!(
        error.failure,
        "unexpected response: 2 heights for 3 points asked"
    );
    // Nothing of the broken answer was kept: the next ask goes out again.
    let _ = client.heights(&points(3)).await;
    assert_eq!(recorder.count(), 2);
    // Two points asked, two answered: that one is fine.
    assert_eq!(
        client
            .heights(&[(1.0, 1.0), (2.0, 2.0)])
            .await
            .expect("answered"),
        [Some(10.0), Some(20.0)]
    );
}

#[tokio::test]
async fn a_refusal_gives_open_meteos_reason() {
    let (base, _) = serve(Canned {
        content_type: "application/json",
        ..Canned::status(
            400,
            r#"{"error":true,"reason":"Latitude must be in range of -90 to 90°. Given: 91.0."}"#,
        )
    })
    .await;
    let error = expect_failure(client_for(&base).heights(&points(1)).await);
    assert!(!error.retryable);
    assert_eq!(
        error.failure,
        "refused the request (400): Latitude must be in range of -90 to 90°. Given: 91.0."
    );
}

#[tokio::test]
async fn a_base_url_with_a_path_keeps_it() {
    let (base, recorder) = serve(Canned::json(r#"{"elevation":[44.8]}"#)).await;
    let client = client_for(&format!("{base}/open-meteo/"));
    assert_eq!(
        client.heights(&[(52.52, 13.41)]).await.expect("answered"),
        [Some(44.8)]
    );
    let request = &recorder.requests()[0];
    assert_eq!(request.uri.path(), "/open-meteo/v1/elevation");
    assert_eq!(request.query_value("latitude").as_deref(), Some("52.5200"));
    assert_eq!(request.query_value("longitude").as_deref(), Some("13.4100"));
    assert!(
        OpenMeteoElevationClient::new(
            CachedHttp {
                client: http_client(),
                cache: Arc::new(MemoryCache::new(1)),
                timeout: Duration::from_secs(1),
            },
            "ftp://example.org",
        )
        .is_err()
    );
}
