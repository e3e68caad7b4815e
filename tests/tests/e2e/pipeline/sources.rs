//! Route services without the outside world: Komoot, Strava and RideWithGPS links are
//! recognised by their real host names, and their pages are parsed in each service's format
//! as answered by a local stand-in (`etappe_tests::route_services`). And the guard itself: a
//! link naming an outside host is never resolved by the system, and the attempt is seen.

use std::time::{Duration, Instant};

use etappe_infra::fetch::SourceOrigins;
use etappe_tests::route_services::{self, ROUTE_KM};
use etappe_tests::{Backend, TestApp};
use serde_json::{Value, json};

/// The detail once the route is computed or failed.
async fn wait_for_route(app: &TestApp, token: &str, id: &str) -> Value {
    app.wait_until(token, id, |d| {
        let route = &d["computationStatus"]["route"];
        route == &json!("done") || route == &json!("failed")
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn route_service_links_are_read_in_each_services_format_from_a_local_stand_in() {
    let services = route_services::start().await;
    let origin = services.origin();
    let app = TestApp::spawn_with(Backend::Sqlite, |c| {
        c.work.fetch_hooks.source_origins = SourceOrigins::all_at(&origin);
    })
    .await
    .expect("app");
    let token = app.user().await;
    let cases = [
        (
            "https://www.komoot.com/de-de/tour/123",
            "komoot_tour",
            "/de-de/tour/123",
            1.0,
        ),
        (
            "https://www.strava.com/routes/42",
            "strava_route",
            "/routes/42/export_gpx",
            1.0,
        ),
        (
            "https://ridewithgps.com/routes/77",
            "ride_with_gps",
            "/routes/77.json",
            1.0,
        ),
        // Two tours (the highlight in between is a place, not a tour), one day each.
        (
            "https://www.komoot.com/collection/987",
            "komoot_collection",
            "/collection/987",
            2.0,
        ),
    ];
    for (link, source_type, path, tours) in cases {
        let created = app
            .create_trip(
                &token,
                &json!({"sourceUrl": link, "maxDistancePerDay": 150}),
            )
            .await;
        assert_eq!(created.status, 202, "{link}: {}", created.body);
        let id = created.body["id"].as_str().expect("id").to_owned();
        let detail = wait_for_route(&app, &token, &id).await;
        assert_eq!(detail["sourceType"], json!(source_type), "{link}");
        assert_eq!(
            detail["computationStatus"]["route"],
            json!("done"),
            "{link}: {detail}"
        );
        let total: f64 = detail["stages"]
            .as_array()
            .expect("stages")
            .iter()
            .map(|s| s["distance"].as_f64().unwrap_or(0.0))
            .sum();
        assert!(
            (total - ROUTE_KM * tours).abs() < 2.0,
            "{link}: {total} km, expected {} km",
            ROUTE_KM * tours
        );
        assert!(
            services.paths().iter().any(|p| p == path),
            "{link}: {:?}",
            services.paths()
        );
    }
    let paths = services.paths();
    assert!(paths.contains(&"/tour/11".to_owned()) && paths.contains(&"/tour/12".to_owned()));
    assert!(
        !paths.contains(&"/tour/900".to_owned()),
        "a highlight is not fetched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_to_an_outside_host_is_never_resolved_by_the_system_and_is_seen() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": "https://routes.outside.test/a.gpx"}),
        )
        .await;
    assert_eq!(created.status, 202);
    let deadline = Instant::now() + Duration::from_secs(20);
    let attempts = loop {
        let attempts = app.resolver.outside_attempts();
        if !attempts.is_empty() {
            break attempts;
        }
        assert!(Instant::now() < deadline, "the worker never tried the link");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        attempts
            .iter()
            .all(|a| a.starts_with("routes.outside.test:")),
        "{attempts:?}"
    );
    // Provoked on purpose (the worker keeps retrying): the end-of-test check is waived.
    app.allow_outside_attempts();
}
