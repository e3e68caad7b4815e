//! The days' weather end to end, on both backends, through an Open-Meteo stand-in on
//! loopback speaking its recorded format: a dated trip within the forecast horizon gets its
//! weather in one request (stage detail and alerts included, with an east wind against the
//! synthetic route heading east); a trip beyond the horizon reads `beyond_horizon` and is
//! done without a request; a downed or refusing upstream fails the category naming
//! Open-Meteo while the route and terrain are still computed; no URL is "not configured";
//! a day recorded `beyond_horizon` whose date is now within it is forecast after a read.

use etappe_tests::standins::{self, WeatherMode};
use etappe_tests::{Backend, TestApp, fixtures};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn in_days(days: u64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Days::new(days)).to_string()
}

/// Both backends (PostgreSQL when configured; a failure under ETAPPE_REQUIRE_SERVICES=1).
async fn apps(weather_url: Option<String>) -> Vec<TestApp> {
    let mut apps = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let url = weather_url.clone();
        if let Some(app) = TestApp::spawn_with(backend, move |config| {
            config.work.upstreams.weather_url = url;
        })
        .await
        {
            apps.push(app);
        }
    }
    apps
}

/// Creates a 300 km trip (three days of 100 km) and waits until the weather is settled.
async fn trip(app: &TestApp, token: &str, start: Option<String>) -> (String, Value) {
    let fixtures = fixtures::start().await;
    let mut body = json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 140});
    if let Some(start) = start {
        body["startDate"] = json!(start);
    }
    let created = app.create_trip(token, &body).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = app
        .wait_until(token, &id, |d| {
            matches!(
                d["computationStatus"]["weather"].as_str(),
                Some("done" | "failed")
            ) && d["computationStatus"]["terrain_security"] == json!("done")
        })
        .await;
    (id, detail)
}

fn days(detail: &Value) -> Vec<Value> {
    detail["stages"].as_array().cloned().unwrap_or_default()
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
async fn a_dated_trip_within_the_horizon_gets_its_weather_in_one_request() {
    let upstreams = standins::start().await;
    for app in apps(Some(upstreams.url("open-meteo"))).await {
        let before = upstreams.requests_to("/open-meteo/v1/forecast").len();
        let token = app.user().await;
        let (id, detail) = trip(&app, &token, Some(in_days(2))).await;
        let status = &detail["computationStatus"];
        assert_eq!(status["weather"], json!("done"), "{detail}");
        assert_eq!(status["route"], json!("done"));
        assert!(detail["unavailable"].get("weather").is_none(), "{detail}");

        let asked = upstreams.requests_to("/open-meteo/v1/forecast");
        assert_eq!(
            asked.len() - before,
            1,
            "one request for the trip: {asked:?}"
        );
        let line = asked.last().expect("a request");
        let latitudes = line
            .split("latitude=")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default()
            .split(',')
            .count();
        // Three days × start, middle, end, a day's end being the next one's start.
        assert!((5..=9).contains(&latitudes), "{line}");
        assert!(
            line.contains(&format!("start_date={}", in_days(2))),
            "{line}"
        );
        assert!(line.contains(&format!("end_date={}", in_days(4))), "{line}");

        let stages = days(&detail);
        assert_eq!(stages.len(), 3);
        for day in &stages {
            let weather = &day["weather"];
            assert_eq!(weather["state"], json!("forecast"), "{day}");
            assert_eq!(weather["provider"], json!("open-meteo"));
            // Departure 08:00, then the day's kilometres at 15 km/h: start, middle and end
            // hours; the stand-in's temperature is 12 °C + 0.4 °C an hour.
            let hours: Vec<f64> = weather["hours"]
                .as_array()
                .map(|h| h.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            let km = day["distance"].as_f64().expect("distance");
            assert_eq!(hours.len(), 3, "{weather}");
            assert_eq!(hours[0], 8.0);
            assert_eq!(hours[1], (8.0 + km / 15.0 / 2.0).round(), "{weather}");
            assert_eq!(hours[2], (8.0 + km / 15.0).round(), "{weather}");
            let at = |h: f64| ((12.0 + 0.4 * h) * 10.0).round() / 10.0;
            assert_eq!(weather["temperatureMinC"], json!(at(hours[0])), "{weather}");
            assert_eq!(weather["temperatureMaxC"], json!(at(hours[2])), "{weather}");
            assert_eq!(weather["windSpeedKmh"], json!(30.0));
            assert_eq!(weather["relativeWind"], json!("headwind"), "{weather}");
            // Wind 30 km/h: −15; rain 20 %, humidity 60 %: nothing more.
            assert_eq!(weather["comfort"], json!(85));
            // Every day rides into a 30 km/h wind: 3 of 3 ≥ 60 %.
            assert!(codes(day).contains(&"wind_headwind".to_owned()), "{day}");
            let alert = day["alerts"]
                .as_array()
                .and_then(|a| a.iter().find(|a| a["code"] == json!("wind_headwind")))
                .expect("headwind alert");
            assert_eq!(alert["group"], json!("weather"));
            assert_eq!(alert["parameters"]["headwindDays"], json!(3));
            assert!(alert["lat"].is_number() && alert["lon"].is_number());
        }

        // The stage detail carries the day's weather.
        let stage_id = stages[1]["stageId"].as_str().expect("stage id");
        let path = format!("/trips/{id}/stages/{stage_id}/detail");
        let one = app
            .call(
                Method::GET,
                "/trips/{id}/stages/{stageId}/detail",
                &path,
                Some(&token),
                &[],
                None,
            )
            .await;
        assert_eq!(one.status, StatusCode::OK, "{}", one.body);
        assert_eq!(
            one.body["weather"]["state"],
            json!("forecast"),
            "{}",
            one.body
        );
        assert_eq!(one.body["weather"]["relativeWind"], json!("headwind"));

        // A pace edit re-runs the weather from the cache: no new request.
        let count = upstreams.requests_to("/open-meteo/v1/forecast").len();
        let version = detail["version"].as_u64().expect("version").to_string();
        let patched = app
            .call(
                Method::PATCH,
                "/trips/{id}",
                &format!("/trips/{id}"),
                Some(&token),
                &[("if-match", &format!("\"{version}\""))],
                Some(&json!({"averageSpeed": 20})),
            )
            .await;
        assert!(patched.status.is_success(), "{}", patched.body);
        let km = stages[0]["distance"].as_f64().expect("distance");
        let end_hour = (8.0 + km / 20.0).round();
        let again = app
            .wait_until(&token, &id, |d| {
                d["stages"][0]["weather"]["hours"][2].as_f64() == Some(end_hour)
                    && d["computationStatus"]["weather"] == json!("done")
            })
            .await;
        assert_eq!(again["stages"][0]["weather"]["state"], json!("forecast"));
        assert_eq!(
            upstreams.requests_to("/open-meteo/v1/forecast").len(),
            count,
            "the days were cached"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn days_beyond_the_horizon_read_beyond_horizon_and_the_category_is_done() {
    let upstreams = standins::start().await;
    for app in apps(Some(upstreams.url("open-meteo"))).await {
        let before = upstreams.requests_to("/open-meteo/v1/forecast").len();
        let token = app.user().await;
        // Days at today + 14, 15 (within) and 16 (beyond).
        let (_, detail) = trip(&app, &token, Some(in_days(14))).await;
        assert_eq!(
            detail["computationStatus"]["weather"],
            json!("done"),
            "{detail}"
        );
        let states: Vec<Value> = days(&detail)
            .iter()
            .map(|d| d["weather"]["state"].clone())
            .collect();
        assert_eq!(
            states,
            [
                json!("forecast"),
                json!("forecast"),
                json!("beyond_horizon")
            ],
            "today + 15 is in, today + 16 beyond"
        );
        let asked = upstreams.requests_to("/open-meteo/v1/forecast");
        assert_eq!(asked.len() - before, 1);
        assert!(
            asked
                .last()
                .is_some_and(|l| l.contains(&format!("end_date={}", in_days(15)))),
            "the late day is not asked for: {asked:?}"
        );

        // Wholly beyond: done, no request at all.
        let before = upstreams.requests_to("/open-meteo/v1/forecast").len();
        let (_, far) = trip(&app, &token, Some(in_days(40))).await;
        assert_eq!(far["computationStatus"]["weather"], json!("done"), "{far}");
        assert!(
            days(&far)
                .iter()
                .all(|d| d["weather"]["state"] == json!("beyond_horizon")),
            "{far}"
        );
        assert_eq!(
            upstreams.requests_to("/open-meteo/v1/forecast").len(),
            before
        );

        // Undated: done, every day `undated`, nothing asked.
        let (_, undated) = trip(&app, &token, None).await;
        assert_eq!(undated["computationStatus"]["weather"], json!("done"));
        assert!(
            days(&undated)
                .iter()
                .all(|d| d["weather"]["state"] == json!("undated")),
            "{undated}"
        );
        assert_eq!(
            upstreams.requests_to("/open-meteo/v1/forecast").len(),
            before
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downed_or_refusing_upstream_fails_the_weather_naming_open_meteo_and_nothing_else() {
    // Nothing listens there: down.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        format!("http://{addr}")
    };
    for app in apps(Some(dead)).await {
        let token = app.user().await;
        let (_, detail) = trip(&app, &token, Some(in_days(3))).await;
        let status = &detail["computationStatus"];
        assert_eq!(status["weather"], json!("failed"), "{detail}");
        assert_eq!(status["route"], json!("done"));
        assert_eq!(status["terrain_security"], json!("done"));
        assert_eq!(status["context"], json!("done"));
        let reason = detail["unavailable"]["weather"]
            .as_str()
            .unwrap_or_default();
        assert!(reason.contains("Open-Meteo"), "{reason}");
        assert!(reason.contains("unreachable"), "{reason}");
        let stages = days(&detail);
        assert!(
            stages
                .iter()
                .all(|d| d["weather"]["state"] == json!("unavailable")),
            "{detail}"
        );
        assert!(
            stages
                .iter()
                .any(|d| codes(d).contains(&"elevation_gain".to_owned())),
            "terrain alerts are still computed"
        );
    }

    // Rate limited, then refusing: the structured error says so.
    let upstreams = standins::start().await;
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.work.upstreams.weather_url = Some(upstreams.url("open-meteo"));
    })
    .await
    .expect("sqlite");
    let token = app.user().await;
    for (mode, expected) in [
        (WeatherMode::RateLimited, "rate limited (429)"),
        (
            WeatherMode::Refuse,
            "refused the request (400): Parameter 'start_date' is out of allowed range",
        ),
    ] {
        *upstreams.weather.lock().expect("mode") = mode;
        let (_, detail) = trip(&app, &token, Some(in_days(5))).await;
        assert_eq!(detail["computationStatus"]["weather"], json!("failed"));
        let reason = detail["unavailable"]["weather"]
            .as_str()
            .unwrap_or_default();
        assert!(reason.contains("Open-Meteo"), "{reason}");
        assert!(reason.contains(expected), "{reason}");
        assert_eq!(
            detail["computationStatus"]["terrain_security"],
            json!("done")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_url_the_weather_is_failed_as_not_configured() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let token = app.user().await;
    let (_, detail) = trip(&app, &token, Some(in_days(3))).await;
    assert_eq!(detail["computationStatus"]["weather"], json!("failed"));
    assert_eq!(
        detail["computationStatus"]["terrain_security"],
        json!("done")
    );
    let reason = detail["unavailable"]["weather"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("not configured"), "{reason}");
    assert!(reason.contains("ETAPPE_WEATHER_URL"), "{reason}");
    let states: Vec<Value> = days(&detail)
        .iter()
        .map(|d| d["weather"]["state"].clone())
        .collect();
    assert!(states.iter().all(|s| s == "unavailable"), "{states:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_come_within_the_horizon_is_forecast_on_the_next_read() {
    use etappe_domain::trip::stage::{DayWeather, StageAlerts, WeatherState};
    use etappe_domain::trip::{Category, TripCommand};
    use etappe_events::{CommandMetadata, DecidedOn, EventIds, EventMetadata};

    let upstreams = standins::start().await;
    for app in apps(Some(upstreams.url("open-meteo"))).await {
        let token = app.user().await;
        let (id, detail) = trip(&app, &token, Some(in_days(2))).await;
        assert_eq!(detail["computationStatus"]["weather"], json!("done"));
        // As if the weather had been computed days ago, when the last day was beyond the
        // horizon: its state is `beyond_horizon` while its date is now within it.
        let trip_id: etappe_domain::ids::TripId = id.parse().expect("trip id");
        let store = app.state.work().store.clone();
        let meta = CommandMetadata {
            metadata: EventMetadata {
                actor: Some("test".into()),
                ..Default::default()
            },
            ids: EventIds::Fresh,
        };
        store
            .execute(trip_id, DecidedOn::Current, &meta, |trip| {
                let trip = trip.expect("the trip");
                let last = trip.stages.len() - 1;
                TripCommand::RecordAnalysis {
                    generation: trip.generation,
                    stages: trip
                        .stages
                        .iter()
                        .enumerate()
                        .map(|(i, s)| StageAlerts {
                            stage_id: s.id,
                            alerts: s.alerts.clone(),
                            weather: if i == last {
                                s.weather.as_ref().map(|w| {
                                    DayWeather::state_only(WeatherState::BeyondHorizon, w.date)
                                })
                            } else {
                                s.weather.clone()
                            },
                            found: None,
                            road: None,
                        })
                        .collect(),
                    done: vec![Category::Weather],
                    unavailable: vec![],
                }
            })
            .await
            .expect("recorded");
        // The read that notices it still shows the recorded state, and asks for the weather.
        let read = app.detail(&token, &id).await;
        assert_eq!(
            read.body["stages"][2]["weather"]["state"],
            json!("beyond_horizon")
        );
        let refreshed = app
            .wait_until(&token, &id, |d| {
                d["stages"][2]["weather"]["state"] == json!("forecast")
                    && d["computationStatus"]["weather"] == json!("done")
            })
            .await;
        assert!(
            codes(&refreshed["stages"][2]).contains(&"wind_headwind".to_owned()),
            "{refreshed}"
        );
    }
}
