//! OpenStreetMap along the route end to end, on both backends, through an Overpass stand-in
//! on loopback speaking Overpass's JSON (see `standins::overpass` for the world it makes up
//! around any route: one water tap, a bakery, a primary road, a gravel track, a museum and a
//! ford in every 150 km piece; a station, a pharmacy and a hotel around every asked place):
//! the analysis finds each of them as alerts and found-along-the-day entries, candidates for
//! every night, in a handful of requests; a downed Overpass fails the category naming it
//! while the rest is computed; no source at all says how to get one.

use etappe_tests::{Backend, TestApp, fixtures, standins};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn apps(overpass_url: Option<String>) -> Vec<TestApp> {
    let mut apps = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let url = overpass_url.clone();
        if let Some(app) = TestApp::spawn_with(backend, move |config| {
            config.work.upstreams.overpass_url = url;
        })
        .await
        {
            apps.push(app);
        }
    }
    apps
}

/// A 300 km trip of three 100 km days, dated next week, once its OpenStreetMap categories
/// have settled.
async fn trip(app: &TestApp, token: &str) -> (String, Value) {
    let fixtures = fixtures::start().await;
    let start = (chrono::Utc::now().date_naive() + chrono::Days::new(7)).to_string();
    let created = app
        .create_trip(
            token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 140,
                    "startDate": start}),
        )
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let settled = |d: &Value| {
        ["points_of_interest", "accommodations", "terrain_security"]
            .iter()
            .all(|c| matches!(d["computationStatus"][c].as_str(), Some("done" | "failed")))
    };
    let detail = app.wait_until(token, &id, settled).await;
    (id, detail)
}

fn alerts<'a>(day: &'a Value, code: &str) -> Vec<&'a Value> {
    day["alerts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["code"] == json!(code))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overpass_gives_every_day_its_alerts_found_list_and_beds() {
    let upstreams = standins::start().await;
    for app in apps(Some(upstreams.url("overpass"))).await {
        let before = upstreams
            .requests_to("POST /overpass/api/interpreter")
            .len();
        let token = app.user().await;
        let (id, detail) = trip(&app, &token).await;
        let status = &detail["computationStatus"];
        assert_eq!(status["points_of_interest"], json!("done"), "{detail}");
        assert_eq!(status["accommodations"], json!("done"), "{detail}");
        assert!(detail["unavailable"].get("points_of_interest").is_none());

        let days = detail["stages"].as_array().expect("days");
        assert_eq!(days.len(), 3);
        let first = &days[0];
        // The primary road (1 km, no cycle lane) and the gravel track (1 km) on day 1.
        let main = alerts(first, "traffic_main_road");
        assert_eq!(main.len(), 1, "{first}");
        assert_eq!(main[0]["group"], json!("road"));
        assert!(main[0]["lat"].is_number(), "{}", main[0]);
        assert_eq!(alerts(first, "surface_rough").len(), 1, "{first}");
        // One tap at km 0.5 of a 100 km day: a water gap, with its figures.
        let gap = alerts(first, "water_point_gap");
        assert!(!gap.is_empty(), "{first}");
        assert_eq!(gap[0]["group"], json!("water_point"));
        // The museum 100 m off the route, as a point to add as a waypoint.
        let museum = alerts(first, "cultural_poi_suggestion");
        assert_eq!(museum.len(), 1, "{first}");
        let action = &museum[0]["parameters"]["actionPoint"];
        assert_eq!(action["name"], json!("Musée"), "{}", museum[0]);
        assert!(action["lat"].is_number() && action["lon"].is_number());
        // The ford on the route, dry in the forecast's absence.
        assert_eq!(alerts(first, "ford_crossing_dry").len(), 1, "{first}");
        // Stations within 1 km of every start and end, a pharmacy 2 km from every middle,
        // bakeries open all day: none of those alerts.
        for day in days {
            for quiet in [
                "railway_station_none_nearby",
                "health_service_none_nearby",
                "resupply_closed_at_passage",
            ] {
                assert!(alerts(day, quiet).is_empty(), "{quiet}: {day}");
            }
        }
        // The pieces start at km 0 and 150, so the bakeries are at km 10 and 160: day 3
        // (km 200–300) has nothing to eat on the way.
        assert!(alerts(&days[0], "resupply_none_on_stage").is_empty());
        assert!(alerts(&days[1], "resupply_none_on_stage").is_empty());
        assert_eq!(
            alerts(&days[2], "resupply_none_on_stage").len(),
            1,
            "{}",
            days[2]
        );

        // What the day passes, in order, with its km.
        let found = first["found"].as_array().expect("found along day 1");
        let kinds: Vec<(&str, f64)> = found
            .iter()
            .map(|f| {
                (
                    f["kind"].as_str().unwrap_or(""),
                    f["km"].as_f64().unwrap_or(-1.0),
                )
            })
            .collect();
        let water = kinds
            .iter()
            .find(|(k, _)| *k == "drinking_water")
            .expect("water");
        assert!((water.1 - 0.5).abs() <= 0.2, "{kinds:?}");
        let bakery = kinds.iter().find(|(k, _)| *k == "bakery").expect("bakery");
        assert!((bakery.1 - 10.0).abs() <= 0.2, "{kinds:?}");
        assert!(
            kinds.iter().any(|(k, _)| *k == "railway_station"),
            "{kinds:?}"
        );
        assert!(
            kinds.windows(2).all(|w| w[0].1 <= w[1].1),
            "in order: {kinds:?}"
        );

        // Every night but the last has its candidates, priced.
        for day in &days[..2] {
            let hotel = &day["accommodations"][0];
            assert_eq!(hotel["name"], json!("Hôtel du Relais"), "{day}");
            assert!(hotel["priceMinEur"].as_f64().is_some());
        }

        // The stage detail carries the same list.
        let stage_id = first["stageId"].as_str().expect("stage id");
        let one = app
            .call(
                Method::GET,
                "/trips/{id}/stages/{stageId}/detail",
                &format!("/trips/{id}/stages/{stage_id}/detail"),
                Some(&token),
                &[],
                None,
            )
            .await;
        assert_eq!(one.status, StatusCode::OK, "{}", one.body);
        assert_eq!(one.body["found"], first["found"]);

        // A handful of requests: 2 corridor pieces + 3 place batches for 300 km, and one
        // scan per night.
        let asked = upstreams
            .requests_to("POST /overpass/api/interpreter")
            .len()
            - before;
        println!("Overpass requests for a 300 km, 3-day trip: {asked}");
        assert!(asked <= 2 + 3 + 3, "{asked} requests");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downed_overpass_fails_the_category_by_name_and_the_rest_is_computed() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/overpass", closed.local_addr().expect("addr"));
    drop(closed);
    for app in apps(Some(url.clone())).await {
        let token = app.user().await;
        let (_, detail) = trip(&app, &token).await;
        let status = &detail["computationStatus"];
        assert_eq!(status["points_of_interest"], json!("failed"), "{detail}");
        assert_eq!(status["terrain_security"], json!("done"), "{detail}");
        let reason = detail["unavailable"]["points_of_interest"]
            .as_str()
            .unwrap_or_default();
        assert!(reason.contains("overpass"), "{reason}");
        for day in detail["stages"].as_array().expect("days") {
            assert!(
                day["found"].is_null(),
                "not read is not 'nothing found': {day}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_source_the_category_says_how_to_get_one() {
    for app in apps(None).await {
        let token = app.user().await;
        let (_, detail) = trip(&app, &token).await;
        assert_eq!(
            detail["computationStatus"]["points_of_interest"],
            json!("failed")
        );
        let reason = detail["unavailable"]["points_of_interest"]
            .as_str()
            .unwrap_or_default();
        assert!(
            reason.contains("etappe osm import") && reason.contains("ETAPPE_OVERPASS_URL"),
            "{reason}"
        );
        assert_eq!(
            detail["computationStatus"]["terrain_security"],
            json!("done")
        );
    }
}
