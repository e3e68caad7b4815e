//! Open-Meteo adapter against a local stand-in answering in Open-Meteo's recorded format.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{Canned, dead_base_url, expect_failure, fixture, http_client, serve};
use chrono::NaiveDate;
use etappe_upstream::{
    CachedHttp, ForecastQuery, Forecasts, MemoryCache, OpenMeteoClient, Upstream,
};

fn d(s: &str) -> NaiveDate {
    s.parse().expect("date")
}

const TODAY: &str = "2026-07-01";

fn client_for(base_url: &str) -> OpenMeteoClient {
    OpenMeteoClient::new(
        CachedHttp {
            client: http_client(),
            cache: Arc::new(MemoryCache::new(100)),
            timeout: Duration::from_millis(800),
        },
        base_url,
    )
    .expect("valid configuration")
}

fn query(lat: f64, lon: f64, date: &str) -> ForecastQuery {
    ForecastQuery {
        lat,
        lon,
        date: d(date),
    }
}

#[tokio::test]
async fn one_request_carries_every_location_and_the_array_is_read_in_order() {
    let (base, recorder) = serve(Canned::json(fixture("open_meteo_two_locations.json"))).await;
    let client = client_for(&base);
    let queries = [
        query(47.996, 7.849, "2026-07-02"),
        query(47.5, 8.2, "2026-07-03"),
        // The same cell as the first, another date: no third location.
        query(47.9961, 7.8491, "2026-07-03"),
        // Beyond the horizon (today + 16): not asked for.
        query(46.0, 9.0, "2026-07-17"),
    ];
    let found = client.days(&queries, d(TODAY)).await.expect("answered");
    assert_eq!(recorder.count(), 1, "one request for all the days");
    let request = &recorder.requests()[0];
    assert_eq!(request.uri.path(), "/v1/forecast");
    assert_eq!(
        request.query_value("latitude").as_deref(),
        Some("48.00,47.50")
    );
    assert_eq!(
        request.query_value("longitude").as_deref(),
        Some("7.85,8.20")
    );
    assert_eq!(request.query_value("timezone").as_deref(), Some("auto"));
    assert_eq!(
        request.query_value("start_date").as_deref(),
        Some("2026-07-02")
    );
    assert_eq!(
        request.query_value("end_date").as_deref(),
        Some("2026-07-03")
    );
    let hourly = request.query_value("hourly").expect("hourly");
    for variable in [
        "temperature_2m",
        "precipitation_probability",
        "wind_speed_10m",
        "wind_direction_10m",
        "relative_humidity_2m",
    ] {
        assert!(hourly.contains(variable), "{hourly}");
    }

    let first = found[0].as_ref().expect("first location, 2 July");
    assert_eq!(first.at(8).and_then(|h| h.temperature_c), Some(12.5));
    let second = found[1].as_ref().expect("second location, 3 July");
    assert_eq!(second.at(8).and_then(|h| h.wind_speed_kmh), Some(31.0));
    let third = found[2].as_ref().expect("first location, 3 July");
    assert_eq!(third.at(8).and_then(|h| h.temperature_c), Some(16.0));
    assert!(found[3].is_none(), "beyond the horizon");

    // Asked again: every day comes from the cache, no request.
    let again = client.days(&queries, d(TODAY)).await.expect("cached");
    assert_eq!(recorder.count(), 1, "a cache hit sends nothing");
    assert_eq!(again, found);
}

#[tokio::test]
async fn a_single_location_answers_an_object() {
    let (base, recorder) = serve(Canned::json(fixture("open_meteo_one_location.json"))).await;
    let found = client_for(&base)
        .days(&[query(52.52, 13.41, "2026-07-01")], d(TODAY))
        .await
        .expect("answered");
    assert_eq!(recorder.count(), 1);
    let day = found[0].as_ref().expect("a series");
    assert_eq!(day.hours.len(), 24);
    assert_eq!(
        day.at(12).and_then(|h| h.precipitation_probability),
        Some(55.0)
    );
}

#[tokio::test]
async fn days_outside_the_horizon_send_nothing() {
    let (base, recorder) = serve(Canned::json("[]")).await;
    let found = client_for(&base)
        .days(
            &[
                query(47.0, 7.0, "2026-06-30"),
                query(47.0, 7.0, "2026-07-17"),
            ],
            d(TODAY),
        )
        .await
        .expect("nothing to ask");
    assert_eq!(found, vec![None, None]);
    assert_eq!(recorder.count(), 0);
}

#[tokio::test]
async fn a_refusal_gives_open_meteos_reason() {
    let body = r#"{"error":true,"reason":"Parameter 'start_date' is out of allowed range from 2026-05-01 to 2026-07-16"}"#;
    let (base, _) = serve(Canned {
        content_type: "application/json",
        ..Canned::status(400, body)
    })
    .await;
    let error = expect_failure(
        client_for(&base)
            .days(&[query(47.0, 7.0, "2026-07-02")], d(TODAY))
            .await,
    );
    assert_eq!(error.upstream, Upstream::Weather);
    assert!(!error.retryable);
    assert_eq!(
        error.failure,
        "refused the request (400): Parameter 'start_date' is out of allowed range from 2026-05-01 to 2026-07-16"
    );
}

#[tokio::test]
async fn rate_limits_timeouts_and_a_dead_server_are_retryable() {
    let (limited, _) = serve(
        Canned::status(
            429,
            r#"{"error":true,"reason":"Minutely API request limit exceeded"}"#,
        )
        .with_retry_after("60"),
    )
    .await;
    let error = expect_failure(
        client_for(&limited)
            .days(&[query(47.0, 7.0, "2026-07-02")], d(TODAY))
            .await,
    );
    assert_eq!(error.upstream, Upstream::Weather);
    assert!(error.retryable);
    assert_eq!(error.failure, "rate limited (429), retry after 60s");

    let (slow, _) = serve(Canned::json("[]").delayed(Duration::from_secs(3))).await;
    let error = expect_failure(
        client_for(&slow)
            .days(&[query(47.0, 7.0, "2026-07-02")], d(TODAY))
            .await,
    );
    assert!(error.retryable);
    assert!(error.failure.starts_with("timeout after 0.8s"), "{error}");

    let error = expect_failure(
        client_for(&dead_base_url().await)
            .days(&[query(47.0, 7.0, "2026-07-02")], d(TODAY))
            .await,
    );
    assert!(error.retryable);
    assert!(error.failure.starts_with("unreachable"), "{error}");
    assert!(
        error.to_string().starts_with("the weather upstream failed"),
        "{error}"
    );
}

#[tokio::test]
async fn a_wrong_shape_is_an_unexpected_answer() {
    let (base, _) = serve(Canned::json(r#"[{"hourly":{"time":[]}}]"#)).await;
    // Two locations asked, one answered.
    let error = expect_failure(
        client_for(&base)
            .days(
                &[
                    query(47.0, 7.0, "2026-07-02"),
                    query(48.0, 8.0, "2026-07-02"),
                ],
                d(TODAY),
            )
            .await,
    );
    assert!(error.failure.starts_with("unexpected response"), "{error}");
    assert!(!error.retryable);
}
