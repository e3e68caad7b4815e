//! Nominatim adapter against a local stand-in answering in jsonv2.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{
    Canned, MALFORMED_BODIES, SERVER_ERRORS, dead_base_url, expect_failure, fixture, http_client,
    serve,
};
use etappe_upstream::{MemoryCache, NominatimClient, RateLimiter, Upstream};

const USER_AGENT: &str = "Etappe/0.1 (trip planner; ops@etappe.example)";

fn client_for(base_url: &str, timeout: Duration) -> NominatimClient {
    NominatimClient::new(
        http_client(),
        base_url,
        USER_AGENT,
        RateLimiter::new(Duration::ZERO),
        Arc::new(MemoryCache::new(100)),
        timeout,
    )
    .expect("valid configuration")
}

#[tokio::test]
async fn parses_a_recorded_jsonv2_answer() {
    let (base, _) = serve(Canned::json(fixture("nominatim_search_freiburg.json"))).await;
    let places = client_for(&base, Duration::from_secs(5))
        .search("Freiburg", 3)
        .await
        .expect("search succeeds");

    assert_eq!(places.len(), 3);
    let city = &places[0];
    assert_eq!(city.name, "Freiburg im Breisgau");
    assert_eq!(
        city.display_name,
        "Freiburg im Breisgau, Baden-Württemberg, Deutschland"
    );
    assert_eq!((city.lat, city.lon), (47.996_090_1, 7.849_400_5));
    assert_eq!(city.kind, "city");
    assert_eq!(city.country_code.as_deref(), Some("de"));
    assert_eq!(places[1].country_code.as_deref(), Some("ch"));
    assert_eq!(places[1].kind, "town");
    assert_eq!(places[2].kind, "village");

    let json = serde_json::to_value(city).expect("serialise");
    assert_eq!(
        json["displayName"],
        "Freiburg im Breisgau, Baden-Württemberg, Deutschland"
    );
    assert_eq!(json["countryCode"], "de");
}

#[tokio::test]
async fn sends_the_documented_request() {
    let (base, recorder) = serve(Canned::json("[]")).await;
    let client = client_for(&base, Duration::from_secs(5))
        .with_accept_language("de,en")
        .expect("valid language");
    client
        .search("  Freiburg   im Breisgau ", 25)
        .await
        .expect("search succeeds");

    let requests = recorder.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.uri.path(), "/search");
    assert_eq!(request.header("user-agent").as_deref(), Some(USER_AGENT));
    assert_eq!(request.header("accept-language").as_deref(), Some("de,en"));
    assert_eq!(request.query_value("format").as_deref(), Some("jsonv2"));
    assert_eq!(
        request.query_value("q").as_deref(),
        Some("freiburg im breisgau")
    );
    assert_eq!(
        request.query_value("limit").as_deref(),
        Some("10"),
        "limit is clamped to 10"
    );
    assert_eq!(request.query_value("addressdetails").as_deref(), Some("1"));
}

#[tokio::test]
async fn refuses_to_start_without_a_user_agent() {
    let built = NominatimClient::new(
        http_client(),
        "https://nominatim.openstreetmap.org",
        "  ",
        RateLimiter::nominatim_public(),
        Arc::new(MemoryCache::new(1)),
        Duration::from_secs(5),
    );
    assert!(built.is_err());
}

#[tokio::test]
async fn a_cache_hit_makes_no_second_request() {
    let (base, recorder) = serve(Canned::json(fixture("nominatim_search_freiburg.json"))).await;
    let client = client_for(&base, Duration::from_secs(5));
    let first = client.search("Freiburg", 3).await.expect("first search");
    let second = client
        .search("  FREIBURG ", 3)
        .await
        .expect("second search");
    assert_eq!(first, second);
    assert_eq!(recorder.count(), 1);

    client.search("Freiburg", 5).await.expect("other limit");
    assert_eq!(recorder.count(), 2, "the limit is part of the cache key");
}

#[tokio::test]
async fn a_cache_hit_takes_no_limiter_slot() {
    let (base, recorder) = serve(Canned::json("[]")).await;
    let client = NominatimClient::new(
        http_client(),
        &base,
        USER_AGENT,
        RateLimiter::new(Duration::from_secs(2)),
        Arc::new(MemoryCache::new(10)),
        Duration::from_secs(5),
    )
    .expect("valid configuration");
    client.search("Basel", 1).await.expect("first search");
    let started = std::time::Instant::now();
    client.search("basel", 1).await.expect("cached search");
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(recorder.count(), 1);
}

#[tokio::test]
async fn failures_are_not_cached() {
    let (base, recorder) = serve(Canned::status(503, "busy")).await;
    let client = client_for(&base, Duration::from_secs(5));
    expect_failure(client.search("Colmar", 1).await);
    expect_failure(client.search("Colmar", 1).await);
    assert_eq!(recorder.count(), 2);
}

#[tokio::test]
async fn a_slow_answer_is_a_retryable_timeout() {
    let (base, _) = serve(Canned::json("[]").delayed(Duration::from_secs(3))).await;
    let error = expect_failure(
        client_for(&base, Duration::from_millis(300))
            .search("Bern", 1)
            .await,
    );
    assert_eq!(error.upstream, Upstream::Geocoder);
    assert_eq!(error.failure, "timeout after 0.3s");
    assert!(error.retryable);
}

#[tokio::test]
async fn rate_limiting_is_retryable_and_names_the_wait() {
    let (base, _) = serve(Canned::status(429, "Too Many Requests").with_retry_after("17")).await;
    let error = expect_failure(
        client_for(&base, Duration::from_secs(5))
            .search("Bern", 1)
            .await,
    );
    assert_eq!(error.failure, "rate limited (429), retry after 17s");
    assert!(error.retryable);
}

#[tokio::test]
async fn server_errors_are_retryable() {
    for status in SERVER_ERRORS {
        let (base, _) = serve(Canned::status(status, "oops")).await;
        let error = expect_failure(
            client_for(&base, Duration::from_secs(5))
                .search("Bern", 1)
                .await,
        );
        assert_eq!(error.failure, format!("server error {status}"));
        assert!(error.retryable, "{status}");
    }
}

#[tokio::test]
async fn a_bad_request_is_not_retryable() {
    let body = r#"{"error":{"code":400,"message":"Parameter 'limit' must be a number."}}"#;
    let (base, _) = serve(Canned::status(400, body)).await;
    let error = expect_failure(
        client_for(&base, Duration::from_secs(5))
            .search("Bern", 1)
            .await,
    );
    assert_eq!(error.failure, "refused the request (400)");
    assert!(!error.retryable);
}

#[tokio::test]
async fn a_malformed_body_is_an_error_not_a_panic() {
    let wrong_shapes = [
        r#"{"error":"Unable to geocode"}"#,
        r#"[{"lat":"x","lon":"y"}]"#,
    ];
    for body in MALFORMED_BODIES.into_iter().chain(wrong_shapes) {
        let (base, _) = serve(Canned::json(body)).await;
        let error = expect_failure(
            client_for(&base, Duration::from_secs(5))
                .search("Bern", 1)
                .await,
        );
        assert!(
            error.failure.starts_with("unexpected response"),
            "{body:?}: {}",
            error.failure
        );
        assert!(!error.retryable);
    }
}

#[tokio::test]
async fn a_dead_port_is_unreachable_and_retryable() {
    let base = dead_base_url().await;
    let error = expect_failure(
        client_for(&base, Duration::from_secs(5))
            .search("Bern", 1)
            .await,
    );
    assert!(
        error.failure.starts_with("unreachable: "),
        "{}",
        error.failure
    );
    assert!(error.retryable);
}

/// An observed call: its upstream, its outcome, its seconds.
type Call = (&'static str, &'static str, f64);

/// Every call reaches the process's observer (its metrics): the service, how it ended, its
/// time — a refusal, an answer, no answer at all.
#[tokio::test]
async fn each_call_reaches_the_observer_with_its_outcome() {
    let seen: Arc<std::sync::Mutex<Vec<Call>>> = Arc::default();
    let record = Arc::clone(&seen);
    etappe_upstream::observe_calls(Arc::new(move |upstream, outcome, seconds| {
        if let Ok(mut seen) = record.lock() {
            seen.push((upstream, outcome, seconds));
        }
    }));
    let (refusing, _) = serve(Canned::status(400, "{}")).await;
    let _ = client_for(&refusing, Duration::from_secs(5))
        .search("Bern", 1)
        .await;
    let dead = dead_base_url().await;
    let _ = client_for(&dead, Duration::from_secs(5))
        .search("Bern", 1)
        .await;
    let seen = seen.lock().expect("seen").clone();
    for outcome in ["status_4xx", "failed"] {
        assert!(
            seen.iter()
                .any(|(u, o, s)| *u == "geocoder" && *o == outcome && *s >= 0.0),
            "{outcome}: {seen:?}"
        );
    }
}
