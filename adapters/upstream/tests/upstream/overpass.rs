//! Overpass adapter against a local stand-in answering in Overpass JSON.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{
    Canned, MALFORMED_BODIES, SERVER_ERRORS, dead_base_url, expect_failure, fixture, http_client,
    serve,
};
use etappe_upstream::{
    AccommodationType, BedSearch, CachedHttp, MemoryCache, OsmType, OverpassClient, Upstream,
};

const END_LAT: f64 = 47.996_09;
const END_LON: f64 = 7.849_4;

fn client_for(base_url: &str, timeout: Duration) -> OverpassClient {
    OverpassClient::new(
        CachedHttp {
            client: http_client(),
            cache: Arc::new(MemoryCache::new(100)),
            timeout,
        },
        base_url,
    )
    .expect("valid configuration")
}

async fn search(
    client: &OverpassClient,
) -> Result<Vec<etappe_upstream::Accommodation>, etappe_upstream::UpstreamError> {
    client
        .accommodations_near(BedSearch {
            lat: END_LAT,
            lon: END_LON,
            radius_m: 5000,
            types: &AccommodationType::ALL,
        })
        .await
}

#[tokio::test]
async fn parses_and_ranks_a_recorded_answer() {
    let (base, _) = serve(Canned::json(fixture("overpass_accommodations.json"))).await;
    let found = search(&client_for(&base, Duration::from_secs(5)))
        .await
        .expect("search succeeds");

    // The way without a center cannot be placed and is dropped.
    assert_eq!(found.len(), 5);
    let order: Vec<u64> = found.iter().map(|a| a.osm_id).collect();
    // Complete (name, website, phone, address) first, nearer first among equals;
    // the hostel's javascript: "website" does not count.
    assert_eq!(
        order,
        [
            4_467_214_093,
            24_587_611,
            9_876_543,
            1_835_619_374,
            7_251_839_042
        ]
    );

    let hotel = &found[0];
    assert_eq!(hotel.kind, AccommodationType::Hotel);
    assert_eq!(
        hotel.website.as_deref(),
        Some("https://www.hotel-martinstor.example/")
    );
    assert_eq!(hotel.phone.as_deref(), Some("+49 761 123456"));
    assert_eq!(
        hotel.address.as_deref(),
        Some("Bertoldstraße 2, 79098 Freiburg im Breisgau")
    );
    assert_eq!(
        (hotel.price_min_eur, hotel.price_max_eur, hotel.exact_price),
        (90.0, 120.0, false)
    );
    assert!(
        (hotel.distance_to_end_m - 246.0).abs() < 2.0,
        "{}",
        hotel.distance_to_end_m
    );

    let camp = &found[1];
    assert_eq!(camp.osm_type, OsmType::Way);
    assert_eq!(
        (camp.lat, camp.lon),
        (47.988_310_7, 7.893_239_9),
        "a way is placed at its center"
    );
    assert_eq!(
        (camp.price_min_eur, camp.price_max_eur, camp.exact_price),
        (18.5, 18.5, true)
    );
    assert_eq!(camp.opening_hours.as_deref(), Some("Mar-Oct"));

    let hostel = &found[2];
    assert_eq!(hostel.osm_type, OsmType::Relation);
    assert_eq!(hostel.website, None);

    let pension = &found[3];
    assert_eq!(
        pension.name.as_deref(),
        Some("Pension am Schlossberg"),
        "control characters stripped"
    );

    let wild_camp = &found[4];
    assert_eq!(wild_camp.name, None);
    assert_eq!(
        (wild_camp.price_min_eur, wild_camp.exact_price),
        (0.0, true),
        "fee=no is free"
    );

    let json = serde_json::to_value(camp).expect("serialise");
    assert_eq!(json["kind"], "camp_site");
    assert_eq!(json["osmType"], "way");
    assert_eq!(json["priceMinEur"], 18.5);
    assert_eq!(json["exactPrice"], true);
}

#[tokio::test]
async fn posts_an_around_query_for_the_chosen_types() {
    let (base, recorder) = serve(Canned::json(fixture("overpass_accommodations.json"))).await;
    client_for(&base, Duration::from_secs(5))
        .accommodations_near(BedSearch {
            lat: END_LAT,
            lon: END_LON,
            radius_m: 1500,
            types: &[AccommodationType::Hotel, AccommodationType::CampSite],
        })
        .await
        .expect("search succeeds");

    let requests = recorder.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.uri.path(), "/api/interpreter");
    assert_eq!(
        request.header("content-type").as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    let form: Vec<(String, String)> = url::form_urlencoded::parse(request.body.as_bytes())
        .into_owned()
        .collect();
    assert_eq!(form.len(), 1);
    let (field, ql) = &form[0];
    assert_eq!(field, "data");
    assert!(ql.starts_with("[out:json][timeout:25];"), "{ql}");
    assert!(
        ql.contains(r#"nwr["tourism"~"^(camp_site|hotel)$"]"#),
        "{ql}"
    );
    assert!(ql.contains("(around:1500,47.9961,7.8494)"), "{ql}");
    assert!(ql.ends_with("out center tags;"), "{ql}");
}

#[tokio::test]
async fn only_the_requested_types_are_returned() {
    let (base, _) = serve(Canned::json(fixture("overpass_accommodations.json"))).await;
    let found = client_for(&base, Duration::from_secs(5))
        .accommodations_near(BedSearch {
            lat: END_LAT,
            lon: END_LON,
            radius_m: 5000,
            types: &[AccommodationType::CampSite],
        })
        .await
        .expect("search succeeds");
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|a| a.kind == AccommodationType::CampSite));
}

#[tokio::test]
async fn a_remark_timeout_is_a_retryable_failure_not_an_empty_result() {
    let (base, _) = serve(Canned::json(fixture("overpass_remark_timeout.json"))).await;
    let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
    assert_eq!(error.upstream, Upstream::Accommodations);
    assert!(
        error.failure.contains("Query timed out"),
        "{}",
        error.failure
    );
    assert!(error.retryable);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_query_at_a_time() {
    let (base, recorder) = serve(
        Canned::json(fixture("overpass_accommodations.json")).delayed(Duration::from_millis(300)),
    )
    .await;
    let client = client_for(&base, Duration::from_secs(5));
    // Clones share the gate; different areas keep the cache out of the way.
    let searches: Vec<_> = [(47.99, 7.84), (47.5, 7.6)]
        .into_iter()
        .map(|(lat, lon)| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .accommodations_near(BedSearch {
                        lat,
                        lon,
                        radius_m: 2000,
                        types: &[AccommodationType::Hotel],
                    })
                    .await
            })
        })
        .collect();
    for search in searches {
        search.await.expect("task").expect("search succeeds");
    }
    assert_eq!(recorder.count(), 2);
    assert_eq!(recorder.max_in_flight(), 1);
    let arrivals: Vec<_> = recorder.requests().iter().map(|r| r.arrived).collect();
    assert!(
        arrivals[1] - arrivals[0] >= Duration::from_millis(290),
        "the second waited for the first"
    );
}

#[tokio::test]
async fn a_cache_hit_makes_no_second_request_and_measures_from_the_new_point() {
    let (base, recorder) = serve(Canned::json(fixture("overpass_accommodations.json"))).await;
    let client = client_for(&base, Duration::from_secs(5));
    let types = [AccommodationType::Hotel, AccommodationType::CampSite];
    let first = client
        .accommodations_near(BedSearch {
            lat: END_LAT,
            lon: END_LON,
            radius_m: 5000,
            types: &types,
        })
        .await
        .expect("first");
    // 4 m further north: the same cached cell, but distances are recomputed.
    let reversed = [AccommodationType::CampSite, AccommodationType::Hotel];
    let second = client
        .accommodations_near(BedSearch {
            lat: END_LAT + 0.000_04,
            lon: END_LON,
            radius_m: 5000,
            types: &reversed,
        })
        .await
        .expect("second");
    assert_eq!(recorder.count(), 1);
    let wild_camp_distance = |found: &[etappe_upstream::Accommodation]| {
        found
            .iter()
            .find(|a| a.osm_id == 7_251_839_042)
            .map(|a| a.distance_to_end_m)
            .expect("wild camp")
    };
    assert_eq!(first.len(), second.len());
    assert!((wild_camp_distance(&first) - wild_camp_distance(&second)).abs() >= 2.0);
}

#[tokio::test]
async fn no_types_means_no_query() {
    let (base, recorder) = serve(Canned::json("{}")).await;
    let found = client_for(&base, Duration::from_secs(5))
        .accommodations_near(BedSearch {
            lat: END_LAT,
            lon: END_LON,
            radius_m: 5000,
            types: &[],
        })
        .await
        .expect("empty search");
    assert!(found.is_empty());
    assert_eq!(recorder.count(), 0);
}

#[tokio::test]
async fn impossible_coordinates_are_refused_locally() {
    let (base, recorder) = serve(Canned::json("{}")).await;
    let client = client_for(&base, Duration::from_secs(5));
    let error = expect_failure(
        client
            .accommodations_near(BedSearch {
                lat: f64::NAN,
                lon: 7.0,
                radius_m: 1000,
                types: &AccommodationType::ALL,
            })
            .await,
    );
    assert!(!error.retryable);
    assert_eq!(recorder.count(), 0);
}

#[tokio::test]
async fn a_slow_answer_is_a_retryable_timeout() {
    let (base, _) = serve(Canned::json("{}").delayed(Duration::from_secs(3))).await;
    let error = expect_failure(search(&client_for(&base, Duration::from_millis(300))).await);
    assert_eq!(error.failure, "timeout after 0.3s");
    assert!(error.retryable);
}

#[tokio::test]
async fn too_busy_answers_are_retryable() {
    let (base, _) = serve(Canned::status(429, "rate_limited").with_retry_after("30")).await;
    let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
    assert_eq!(error.failure, "rate limited (429), retry after 30s");
    assert!(error.retryable);

    let (base, _) = serve(Canned::status(
        504,
        "<html><body>Gateway Timeout</body></html>",
    ))
    .await;
    let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
    assert_eq!(error.failure, "server error 504");
    assert!(error.retryable);
}

#[tokio::test]
async fn server_errors_are_retryable() {
    for status in SERVER_ERRORS {
        let (base, _) = serve(Canned::status(status, "oops")).await;
        let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
        assert_eq!(error.failure, format!("server error {status}"));
        assert!(error.retryable, "{status}");
    }
}

#[tokio::test]
async fn a_bad_request_is_not_retryable() {
    let body =
        "<p><strong style=\"color:#FF0000\">Error</strong>: line 1: parse error: ';' expected</p>";
    let (base, _) = serve(Canned::status(400, body)).await;
    let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
    assert_eq!(error.failure, "refused the request (400)");
    assert!(!error.retryable);
}

#[tokio::test]
async fn a_malformed_body_is_an_error_not_a_panic() {
    let wrong_shapes = [
        r#"{"elements":[{"type":"node","id":"x"}]}"#,
        r#"{"version":0.6}"#,
    ];
    for body in MALFORMED_BODIES.into_iter().chain(wrong_shapes) {
        let (base, _) = serve(Canned::json(body)).await;
        let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
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
    let error = expect_failure(search(&client_for(&base, Duration::from_secs(5))).await);
    assert!(
        error.failure.starts_with("unreachable: "),
        "{}",
        error.failure
    );
    assert!(error.retryable);
}
