//! The third-party upstreams through the whole application. With stand-ins speaking
//! Nominatim, Overpass, Open-Meteo and Valhalla on loopback, place search goes to the geocoder with an
//! identifying User-Agent, and accommodation scans and waypoint detours go through a worker
//! to Overpass and Valhalla; `/readyz` reports each one up. With the geocoder down, place
//! search answers a 503 problem naming it and the failure, while everything else keeps
//! working and `/readyz` stays ready, reporting it down.

use std::time::Duration;

use etappe_tests::{Backend, TestApp, fixtures, standins};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn get(
    app: &TestApp,
    template: &str,
    path: &str,
    token: Option<&str>,
) -> etappe_tests::Answer {
    app.call(Method::GET, template, path, token, &[], None)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_upstreams_serve_search_scans_and_detours_through_a_worker() {
    let upstreams = standins::start().await;
    let fixtures = fixtures::start().await;
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.work.upstreams.nominatim_url = Some(upstreams.url("nominatim"));
        config.work.upstreams.overpass_url = Some(upstreams.url("overpass"));
        config.work.upstreams.weather_url = Some(upstreams.url("open-meteo"));
        config.work.upstreams.router = "valhalla".into();
        config.work.upstreams.router_url = Some(upstreams.url("valhalla"));
    })
    .await
    .expect("sqlite");
    let token = app.user().await;

    // Place search asks Nominatim, naming the application.
    let found = get(
        &app,
        "/geocode/search",
        "/geocode/search?q=Freiburg&limit=10",
        Some(&token),
    )
    .await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    // The gazetteer's exact "Freiburg"s come first (Fribourg's German name is Freiburg too);
    // the geocoder's answer follows them.
    let items = found.body["items"].as_array().expect("items");
    assert!(
        items.iter().any(
            |i| i["name"] == json!("Freiburg im Breisgau") && i["foundIn"] == json!("geocoder")
        ),
        "{}",
        found.body
    );
    let searches = upstreams.requests_to("GET /nominatim/search");
    assert_eq!(searches.len(), 1, "{searches:?}");
    assert!(
        searches[0].contains("Etappe"),
        "identifying User-Agent: {searches:?}"
    );
    let again = get(
        &app,
        "/geocode/search",
        "/geocode/search?q=freiburg&limit=10",
        Some(&token),
    )
    .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(
        upstreams.requests_to("GET /nominatim/search").len(),
        1,
        "the same query is answered from the cache"
    );

    // A trip; then a scan through Overpass in a worker.
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 80}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let trip = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    let days = trip["stages"].as_array().map_or(0, Vec::len);
    let scan = app
        .call(
            Method::POST,
            "/trips/{id}/accommodations/scan",
            &format!("/trips/{id}/accommodations/scan"),
            Some(&token),
            &[],
            Some(&json!({"radiusKm": 3})),
        )
        .await;
    assert_eq!(scan.status, StatusCode::ACCEPTED, "{}", scan.body);
    let scanned = app
        .wait_until(&token, &id, |d| {
            d["computationStatus"]["accommodations"] == json!("done")
        })
        .await;
    let queries = upstreams.requests_to("POST /overpass/api/interpreter");
    assert!(!queries.is_empty(), "Overpass was asked");
    assert!(
        queries.iter().any(|q| q.contains("(around:3000,")),
        "the scan's own radius: {queries:?}"
    );
    let first_day = &scanned["stages"][0];
    let hotel = &first_day["accommodations"][0];
    assert_eq!(hotel["name"], json!("Hôtel du Relais"), "{first_day}");
    assert_eq!(hotel["type"], json!("hotel"));
    assert!(
        hotel["priceMinEur"].as_f64().is_some(),
        "a price estimate: {hotel}"
    );
    let distance = hotel["distanceToEndM"]
        .as_f64()
        .expect("distance to the day's end");
    assert!((150.0..260.0).contains(&distance), "{distance}");
    // Every day except the last (where the trip ends) gets its candidates.
    let with_candidates = scanned["stages"]
        .as_array()
        .expect("days")
        .iter()
        .filter(|s| {
            s["accommodations"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        })
        .count();
    assert!(
        with_candidates >= days - 1,
        "{with_candidates} of {days} days"
    );

    // A detour through a waypoint, routed by Valhalla in a worker: not estimated.
    let day1 = trip["stages"][0]["stageId"]
        .as_str()
        .expect("day")
        .to_owned();
    let end = &trip["stages"][0]["endPoint"];
    let (lat, lon) = (
        end["lat"].as_f64().expect("lat") - 0.05,
        end["lon"].as_f64().expect("lon") + 0.02,
    );
    let detour = app
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/trips/{id}/stages/{day1}/poi-waypoint"),
            Some(&token),
            &[],
            Some(&json!({"waypointLat": lat, "waypointLon": lon})),
        )
        .await;
    assert_eq!(detour.status, StatusCode::ACCEPTED, "{}", detour.body);
    let rerouted = app
        .wait_until(&token, &id, |d| !d["stages"][0]["detour"].is_null())
        .await;
    let routed = &rerouted["stages"][0]["detour"];
    assert_eq!(routed["router"], json!("valhalla"), "{routed}");
    assert_eq!(routed["estimated"], json!(false));
    assert!(
        routed["addedDistance"].as_f64().is_some_and(|km| km > 0.0),
        "{routed}"
    );
    assert_eq!(upstreams.requests_to("POST /valhalla/route").len(), 1);

    // Readiness reports each upstream up, none required.
    let ready = get(&app, "/readyz", "/readyz", None).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    for (name, provider) in [
        ("geocoder", "nominatim"),
        ("accommodations", "overpass"),
        ("osm", "overpass"),
        ("weather", "open-meteo"),
        ("router", "valhalla"),
    ] {
        assert_eq!(
            ready.body["upstreams"][name],
            json!({"provider": provider, "status": "up", "required": false}),
            "{}",
            ready.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downed_geocoder_is_named_and_everything_else_keeps_working() {
    let geocoder = standins::slow_geocoder(Duration::from_secs(5)).await;
    let fixtures = fixtures::start().await;
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.work.upstreams.nominatim_url = Some(geocoder.clone());
        config.work.upstreams.timeout_secs = 1;
    })
    .await
    .expect("sqlite");
    let token = app.user().await;

    let search = get(
        &app,
        "/geocode/search",
        "/geocode/search?q=Lyon",
        Some(&token),
    )
    .await;
    assert_eq!(
        search.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        search.body
    );
    // The seed's shape, flattened into the problem: the upstream, the failure, and whether
    // a retry may help.
    for (field, value) in [
        ("upstream", json!("geocoder")),
        ("failure", json!("timeout after 1s")),
        ("retryable", json!(true)),
        ("code", json!("upstream_unavailable")),
    ] {
        assert_eq!(search.body[field], value, "{}", search.body);
    }

    // Nothing else needs the geocoder: a trip is created and its days computed.
    let created = app
        .create_trip(&token, &json!({"sourceUrl": fixtures.url("/route.gpx")}))
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let trip = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    assert!(
        trip["stages"][0]["endLabel"].is_string(),
        "days are labelled offline: {trip}"
    );

    let ready = get(&app, "/readyz", "/readyz", None).await;
    assert_eq!(
        ready.status,
        StatusCode::OK,
        "an optional upstream never makes the API unready"
    );
    let geocoder = &ready.body["upstreams"]["geocoder"];
    assert_eq!(geocoder["provider"], json!("nominatim"));
    assert_eq!(geocoder["required"], json!(false));
    assert!(
        geocoder["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("down: ")),
        "{}",
        ready.body
    );
    assert_eq!(
        ready.body["upstreams"]["router"],
        json!({"provider": "offline", "status": "embedded", "required": false})
    );
}
