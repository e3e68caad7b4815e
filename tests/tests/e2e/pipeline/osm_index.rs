//! OpenStreetMap from the local index end to end, on both backends: the committed extract
//! (`tests/fixtures/osm/route.osm.pbf`, made by `make_fixtures.py` around the 60 km
//! `route.gpx`) is imported with `etappe osm import` into the application's own database,
//! then a trip over it reads water gaps, surface and traffic, the ford, the ferry, the museum,
//! what the day passes and the beds from the index, with no third party configured; a day
//! beyond the extract is named; a broken file leaves the index answering.

use etappe_tests::{Backend, TestApp, fixtures};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/osm")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

async fn apps() -> Vec<TestApp> {
    let mut apps = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        if let Some(app) = TestApp::spawn(backend).await {
            apps.push(app);
        }
    }
    apps
}

fn import(app: &TestApp, file: &str) -> std::process::Output {
    app.operator_command(&["osm", "import", &fixture(file)])
}

async fn trip(app: &TestApp, token: &str, body: Value) -> Value {
    let created = app.create_trip(token, &body).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    app.wait_until(token, &id, |d| {
        ["points_of_interest", "accommodations", "terrain_security"]
            .iter()
            .all(|c| matches!(d["computationStatus"][c].as_str(), Some("done" | "failed")))
    })
    .await
}

fn codes(day: &Value) -> Vec<String> {
    day["alerts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["code"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_extract_analyses_a_trip_with_no_third_party() {
    let fixtures = fixtures::start().await;
    for app in apps().await {
        let imported = import(&app, "route.osm.pbf");
        assert!(
            imported.status.success(),
            "{}",
            String::from_utf8_lossy(&imported.stderr)
        );
        let token = app.user().await;
        let start = (chrono::Utc::now().date_naive() + chrono::Days::new(30)).to_string();
        let detail = trip(
            &app,
            &token,
            json!({"sourceUrl": fixtures.url("/osm-route.gpx"), "maxDistancePerDay": 100,
                   "startDate": start}),
        )
        .await;
        let status = &detail["computationStatus"];
        assert_eq!(status["points_of_interest"], json!("done"), "{detail}");
        assert_eq!(status["accommodations"], json!("done"), "{detail}");
        let id = detail["id"].as_str().expect("id").to_owned();
        let days = detail["stages"].as_array().expect("days");
        assert_eq!(days.len(), 1, "{detail}");
        let day = &days[0];
        let codes = codes(day);
        for expected in [
            "water_point_gap",
            "surface_rough",
            "traffic_main_road",
            "traffic_secondary_road_fast",
            "ford_crossing_dry",
            "ferry_crossing",
            "cultural_poi_suggestion",
        ] {
            assert!(
                codes.contains(&expected.to_owned()),
                "{expected}: {codes:?}"
            );
        }
        // A station 800 m from the start, a pharmacy on the way.
        for absent in ["railway_station_none_nearby", "health_service_none_nearby"] {
            assert!(!codes.contains(&absent.to_owned()), "{absent}: {codes:?}");
        }
        // Water at km 2, 8, 45 and 58 along the day, in order, by name where it has one.
        let water: Vec<f64> = day["found"]
            .as_array()
            .expect("found")
            .iter()
            .filter(|f| f["category"] == json!("water"))
            .filter_map(|f| f["km"].as_f64())
            .collect();
        assert_eq!(water.len(), 4, "{}", day["found"]);
        for (got, want) in water.iter().zip([2.0, 8.0, 45.0, 58.0]) {
            assert!((got - want).abs() <= 0.2, "{water:?}");
        }
        let shop = day["found"]
            .as_array()
            .expect("found")
            .iter()
            .find(|f| f["category"] == json!("bike_shop"))
            .expect("a bike shop");
        assert_eq!(shop["name"], json!("Cycles Martin"));
        // The files carry what was found, so the device shows it on the road.
        let gpx = app
            .call(
                Method::GET,
                "/trips/{id}.gpx",
                &format!("/trips/{id}.gpx"),
                Some(&token),
                &[],
                None,
            )
            .await;
        let text = String::from_utf8_lossy(&gpx.raw).into_owned();
        assert_eq!(
            text.matches("<sym>Drinking Water</sym>").count(),
            4,
            "one a water point"
        );
        assert!(text.contains("Cycles Martin") && text.contains("<sym>Bike Trail</sym>"));
        // The night's candidates from the index, priced by type.
        let beds: Vec<&str> = day["accommodations"]
            .as_array()
            .expect("beds")
            .iter()
            .filter_map(|a| a["name"].as_str())
            .collect();
        assert!(beds.contains(&"Hôtel des Alpes"), "{beds:?}");
        assert!(beds.contains(&"Camping du Lac"), "{beds:?}");

        // The index answers what `etappe osm status` says.
        let status = app.operator_command(&["osm", "status"]);
        let text = String::from_utf8_lossy(&status.stdout);
        assert!(text.starts_with("route:"), "{text}");

        // A broken file is refused, and the index still answers the next trip.
        let broken = import(&app, "truncated.osm.pbf");
        assert!(!broken.status.success());
        let said = String::from_utf8_lossy(&broken.stderr);
        assert!(said.contains("truncated.osm.pbf"), "{said}");
        let again = trip(
            &app,
            &token,
            json!({"sourceUrl": fixtures.url("/osm-route.gpx"), "maxDistancePerDay": 100}),
        )
        .await;
        assert_eq!(
            again["computationStatus"]["points_of_interest"],
            json!("done"),
            "{again}"
        );
        app.assert_stayed_inside();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn days_outside_the_extract_are_named_and_the_others_analysed() {
    let fixtures = fixtures::start().await;
    for app in apps().await {
        let imported = import(&app, "route.osm.pbf");
        assert!(imported.status.success());
        let token = app.user().await;
        // The synthetic 300 km route starts at 45° N 6° E, east of the extract (4.85–5.25° E).
        let detail = trip(
            &app,
            &token,
            json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 140}),
        )
        .await;
        assert_eq!(
            detail["computationStatus"]["points_of_interest"],
            json!("failed"),
            "{detail}"
        );
        let reason = detail["unavailable"]["points_of_interest"]
            .as_str()
            .unwrap_or_default();
        assert!(
            reason.contains("outside the local index") && reason.contains("etappe osm import"),
            "{reason}"
        );
        for day in detail["stages"].as_array().expect("days") {
            assert!(day["found"].is_null(), "{day}");
        }
    }
}
