//! The computation pipeline end to end on the embedded defaults (in-process queue and
//! workers, in-memory progress): a trip created from a GPX served on loopback answers at once
//! with `partial: true`, then its days and alerts appear, progress is seen live over SSE, and
//! bad routes end as a failure the trip shows with a clear reason.

use std::time::{Duration, Instant};

use etappe_tests::{Backend, TestApp, fixtures};
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn wait_for_days(app: &TestApp, token: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let detail = app.detail(token, id).await;
        let failed = detail.body["computationStatus"]["route"] == json!("failed");
        if detail.body["partial"] == json!(false) || failed {
            return detail.body;
        }
        assert!(
            Instant::now() < deadline,
            "the days did not appear in 30 s: {}",
            detail.body
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trip_from_a_gpx_link_gets_its_days_and_alerts_and_progress_is_live() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let start = (chrono::Utc::now().date_naive() + chrono::Days::new(30)).to_string();
    let created = app
        .create_trip(&token, &json!({"sourceUrl": fixtures.url("/route.gpx"), "startDate": start, "maxDistancePerDay": 140}))
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED);
    assert_eq!(
        created.body["partial"],
        json!(true),
        "creation answers at once, before the days exist"
    );
    let id = created.body["id"].as_str().expect("id").to_owned();

    // Follow it live.
    let events = app
        .client
        .get(format!("{}/trips/{id}/events", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("sse");
    assert_eq!(events.status(), StatusCode::OK);
    // A token in the URL would be logged on its way: refused, saying what to do.
    let in_url = app
        .client
        .get(format!(
            "{}/trips/{id}/events?access_token={token}",
            app.base
        ))
        .send()
        .await
        .expect("sse");
    assert_eq!(in_url.status(), StatusCode::BAD_REQUEST);
    assert!(
        in_url
            .text()
            .await
            .unwrap_or_default()
            .contains("Authorization: Bearer"),
        "the refusal says what to send instead"
    );
    assert!(
        events.headers()["content-type"]
            .to_str()
            .unwrap_or("")
            .starts_with("text/event-stream")
    );
    let mut stream = events.bytes_stream();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(seen.contains("\"state\":\"succeeded\"") && seen.contains("\"partial\":false")) {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(remaining, stream.next())
            .await
            .expect("SSE went quiet")
            .expect("SSE ended");
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("chunk")));
    }
    assert!(seen.contains("event: trip"), "{seen}");
    assert!(seen.contains("event: progress"), "{seen}");

    let detail = wait_for_days(&app, &token, &id).await;
    assert_eq!(detail["partial"], json!(false));
    assert_eq!(detail["status"], json!("ready"));
    assert_eq!(
        detail["version"],
        json!(2),
        "the days appearing is a structural change"
    );
    assert_eq!(
        detail["title"],
        json!("Synthetic Alps"),
        "the route's own name fills an empty title"
    );
    let stages = detail["stages"].as_array().expect("stages");
    let distances: Vec<f64> = stages
        .iter()
        .map(|s| s["distance"].as_f64().unwrap_or(0.0))
        .collect();
    assert_eq!(
        stages.len(),
        3,
        "300 km climbing 6,000 m (420 km of effort) at up to 140 a day: {distances:?}"
    );
    let total: f64 = stages
        .iter()
        .map(|s| s["distance"].as_f64().unwrap_or(0.0))
        .sum();
    assert!((total - 300.0).abs() < 1.0, "{total}");
    assert!(
        stages
            .iter()
            .all(|s| s["startLabel"].is_string() && s["endLabel"].is_string()),
        "labelled: {stages:?}"
    );
    let codes: Vec<&str> = stages
        .iter()
        .flat_map(|s| s["alerts"].as_array().into_iter().flatten())
        .filter_map(|a| a["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"elevation_gain"),
        "5 climbs of 400 m a day exceed 1,200 m: {codes:?}"
    );
    let status = &detail["computationStatus"];
    assert_eq!(status["route"], json!("done"));
    assert_eq!(status["terrain_security"], json!("done"));
    assert_eq!(status["context"], json!("done"));
    assert_eq!(
        status["weather"],
        json!("failed"),
        "no weather provider: reported, never invented"
    );
    assert!(
        detail["unavailable"]["weather"]
            .as_str()
            .unwrap_or("")
            .contains("no weather provider")
    );

    // Re-analysing answers at once and lands again.
    let analyze = app
        .call(
            Method::POST,
            "/trips/{id}/analyze",
            &format!("/trips/{id}/analyze"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(analyze.status, StatusCode::ACCEPTED);
    let again = app
        .wait_until(&token, &id, |d| {
            d["computationStatus"]["terrain_security"] == json!("done")
        })
        .await;
    assert_eq!(
        again["version"],
        json!(2),
        "an analysis does not move the version"
    );

    // A pacing change re-cuts the days: new ids, new version.
    let ids: Vec<Value> = stages.iter().map(|s| s["stageId"].clone()).collect();
    let repaced = app
        .patch(
            &token,
            &id,
            Some("\"2\""),
            &json!({"maxDistancePerDay": 60}),
        )
        .await;
    assert_eq!(repaced.status, StatusCode::OK);
    assert_eq!(
        repaced.body["partial"],
        json!(true),
        "the old days are gone until the new ones exist"
    );
    let recut = wait_for_days(&app, &token, &id).await;
    let new_stages = recut["stages"].as_array().expect("stages");
    // 420 km of effort at 60 a day.
    assert_eq!(new_stages.len(), 7);
    assert!(
        new_stages.iter().all(|s| !ids.contains(&s["stageId"])),
        "a re-pacing mints new stage ids"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_routes_end_as_a_failure_with_a_clear_reason() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let cases = [
        (fixtures.url("/not-gpx.txt"), "does not lead to a GPX file"),
        (fixtures.url("/empty.gpx"), "empty"),
        (fixtures.url("/truncated.gpx"), "truncated or malformed"),
        (fixtures.url("/huge.gpx"), "larger than 30 MB"),
        (fixtures.url("/missing.gpx"), "not found"),
        (fixtures.url("/redirect-private"), "private address"),
        ("https://10.0.0.1/route.gpx".to_owned(), "private address"),
        ("https://127.0.0.2/route.gpx".to_owned(), "private address"),
    ];
    let mut ids = Vec::new();
    for (url, _) in &cases {
        let created = app.create_trip(&token, &json!({"sourceUrl": url})).await;
        assert_eq!(
            created.status,
            StatusCode::ACCEPTED,
            "{url}: {}",
            created.body
        );
        ids.push(created.body["id"].as_str().expect("id").to_owned());
    }
    for ((url, reason), id) in cases.iter().zip(&ids) {
        let detail = wait_for_days(&app, &token, id).await;
        assert_eq!(
            detail["computationStatus"]["route"],
            json!("failed"),
            "{url}: {detail}"
        );
        // A failed route is an answer: partial ends, the status says failed.
        assert_eq!(detail["partial"], json!(false));
        assert_eq!(detail["status"], json!("failed"));
        let shown = detail["unavailable"]["route"].as_str().unwrap_or("");
        assert!(
            shown.contains(reason),
            "{url}: expected {reason:?} in {shown:?}"
        );
        // Asking for the analysis of a failed route asks for the route again.
        let analyze = app
            .call(
                Method::POST,
                "/trips/{id}/analyze",
                &format!("/trips/{id}/analyze"),
                Some(&token),
                &[],
                None,
            )
            .await;
        assert_eq!(analyze.status, StatusCode::ACCEPTED, "{}", analyze.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploaded_gpx_takes_the_same_path() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(fixtures::route_gpx(150.0, 50.0).into_bytes())
                .file_name("ride.gpx"),
        )
        .text(
            "settings",
            // 150 km climbing 3,200 m (7.5 hills of 400 m): 214 km of effort, two days at up to 110.
            json!({"title": "Uploaded", "maxDistancePerDay": 110}).to_string(),
        );
    let response = app
        .client
        .post(format!("{}/trips/gpx-upload", app.base))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .await
        .expect("upload");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let body: Value = response.json().await.expect("json");
    let id = body["id"].as_str().expect("id").to_owned();
    let detail = wait_for_days(&app, &token, &id).await;
    assert_eq!(detail["sourceType"], json!("gpx_upload"));
    assert_eq!(detail["title"], json!("Uploaded"));
    assert_eq!(detail["stages"].as_array().map(Vec::len), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_counts_the_workers_and_metrics_count_the_jobs() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let id = app
        .create_trip(&token, &json!({"sourceUrl": fixtures.url("/route.gpx")}))
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    wait_for_days(&app, &token, &id).await;
    let ready = app
        .call(Method::GET, "/readyz", "/readyz", None, &[], None)
        .await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert!(
        ready.body["checks"]["workers"]
            .as_str()
            .unwrap_or("")
            .contains("alive"),
        "{}",
        ready.body
    );
    // The days appear before the job is acknowledged and counted: poll the counter.
    let deadline = Instant::now() + Duration::from_secs(20);
    let metrics = loop {
        let metrics = app
            .client
            .get(format!("{}/metrics", app.base))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        if metrics.contains("etappe_jobs_total{kind=\"compute_route\",outcome=\"completed\"} 1") {
            break metrics;
        }
        assert!(
            Instant::now() < deadline,
            "the completed job was never counted: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        metrics.contains("etappe_jobs_dispatched_total"),
        "{metrics}"
    );
    assert!(metrics.contains("etappe_queue_depth"), "{metrics}");
    // The one replica leads the dispatch, and says so; its sweeper found nothing to resume.
    assert!(metrics.contains("etappe_dispatcher_leader 1"), "{metrics}");
    assert!(metrics.contains("etappe_work_resumed_total 0"), "{metrics}");
    // RED per route template (never per path), the build, the jobs running now.
    assert!(
        metrics.contains(
            "etappe_http_requests_total{method=\"GET\",route=\"/trips/{id}/detail\",status=\"2xx\"}"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("etappe_http_request_duration_seconds_bucket{"),
        "{metrics}"
    );
    assert!(
        metrics.contains("etappe_build_info{version=\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("etappe_jobs_in_flight{kind=\"compute_route\"} 0"),
        "{metrics}"
    );
    // The store's appends are timed, the live streams counted (none open now).
    assert!(
        !metrics.contains("etappe_store_append_duration_seconds_count 0\n"),
        "{metrics}"
    );
    assert!(metrics.contains("etappe_live_streams 0"), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trip_and_its_days_export_as_gpx_and_fit() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let id = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 140}),
        )
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let early = app
        .call(
            Method::GET,
            "/trips/{id}.gpx",
            &format!("/trips/{id}.gpx"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert!(
        early.status == StatusCode::UNPROCESSABLE_ENTITY || early.status == StatusCode::OK,
        "before the days exist the export is refused: {}",
        early.status
    );
    let detail = wait_for_days(&app, &token, &id).await;
    let stages = detail["stages"].as_array().expect("stages").clone();

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
    assert_eq!(gpx.status, StatusCode::OK);
    let parsed = etappe_route::parse_gpx(&gpx.raw).expect("our GPX reads back");
    assert_eq!(parsed.tracks.len(), stages.len(), "a track per day");
    let points: usize = parsed.tracks.iter().map(Vec::len).sum();
    assert!(points > 6000, "full resolution: {points}");

    let fit = app
        .call(
            Method::GET,
            "/trips/{id}.fit",
            &format!("/trips/{id}.fit"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(fit.status, StatusCode::OK);
    assert_eq!(&fit.raw[8..12], b".FIT");
    let decoded = fitparser::from_bytes(&fit.raw).expect("a FIT decoder reads it");
    let records = decoded
        .iter()
        .filter(|m| m.kind() == fitparser::profile::MesgNum::Record)
        .count();
    assert_eq!(
        records,
        points - (stages.len() - 1),
        "one record per point, shared day boundaries once"
    );

    let stage_id = stages[1]["stageId"].as_str().expect("stage id");
    let one = app
        .call(
            Method::GET,
            "/trips/{id}/stages/{stageId}/export.gpx",
            &format!("/trips/{id}/stages/{stage_id}/export.gpx"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(
        etappe_route::parse_gpx(&one.raw)
            .expect("day GPX")
            .tracks
            .len(),
        1
    );
    let day_fit = app
        .call(
            Method::GET,
            "/trips/{id}/stages/{stageId}/export.fit",
            &format!("/trips/{id}/stages/{stage_id}/export.fit"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(day_fit.status, StatusCode::OK);

    let stranger = app.user().await;
    let foreign = app
        .call(
            Method::GET,
            "/trips/{id}.gpx",
            &format!("/trips/{id}.gpx"),
            Some(&stranger),
            &[],
            None,
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let unknown_day = uuid::Uuid::now_v7();
    let missing = app
        .call(
            Method::GET,
            "/trips/{id}/stages/{stageId}/export.gpx",
            &format!("/trips/{id}/stages/{unknown_day}/export.gpx"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_link_is_public_until_revoked_and_not_guessable() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let id = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 140}),
        )
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let detail = wait_for_days(&app, &token, &id).await;
    let share_path = format!("/trips/{id}/share");
    let none = app
        .call(
            Method::GET,
            "/trips/{id}/share",
            &share_path,
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(none.status, StatusCode::NOT_FOUND, "no link yet");

    let opened = app
        .call(
            Method::POST,
            "/trips/{id}/share",
            &share_path,
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let code = opened.body["shortCode"].as_str().expect("code").to_owned();
    assert_eq!(code.len(), 11, "64 random bits");
    assert!(
        opened.body["url"]
            .as_str()
            .unwrap_or("")
            .ends_with(&format!("/s/{code}"))
    );
    let again = app
        .call(
            Method::POST,
            "/trips/{id}/share",
            &share_path,
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(
        again.body["shortCode"],
        json!(code),
        "one active link: a repeat answers it"
    );

    // Anonymous reads.
    let public = app
        .call(
            Method::GET,
            "/s/{code}",
            &format!("/s/{code}"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(public.status, StatusCode::OK);
    assert_eq!(public.body["stageCount"], detail["stageCount"]);
    assert!(
        public.body.get("sourceUrl").is_none(),
        "the owner's source link stays private"
    );
    let gpx = app
        .call(
            Method::GET,
            "/s/{code}.gpx",
            &format!("/s/{code}.gpx"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(gpx.status, StatusCode::OK);
    assert!(etappe_route::parse_gpx(&gpx.raw).is_ok());
    let fit = app
        .call(
            Method::GET,
            "/s/{code}.fit",
            &format!("/s/{code}.fit"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(fit.status, StatusCode::OK);
    let stage_id = detail["stages"][0]["stageId"].as_str().expect("stage");
    let day = app
        .call(
            Method::GET,
            "/s/{code}/stages/{stageId}",
            &format!("/s/{code}/stages/{stage_id}"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(day.status, StatusCode::OK);
    assert_eq!(day.body["dayNumber"], json!(1));

    // Someone else cannot open, read or revoke it.
    let stranger = app.user().await;
    for method in [Method::GET, Method::POST, Method::DELETE] {
        let foreign = app
            .call(
                method.clone(),
                "/trips/{id}/share",
                &share_path,
                Some(&stranger),
                &[],
                None,
            )
            .await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{method}");
    }

    // Not guessable: other codes, malformed ones, and then the revoked one are all 404.
    for probe in ["AAAAAAAAAAA", "short", "../../etc/p", &code[..10]] {
        let guessed = app
            .call(
                Method::GET,
                "/s/{code}",
                &format!("/s/{probe}"),
                None,
                &[],
                None,
            )
            .await;
        assert_eq!(guessed.status, StatusCode::NOT_FOUND, "{probe}");
    }
    let revoked = app
        .call(
            Method::DELETE,
            "/trips/{id}/share",
            &share_path,
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    for path in [
        format!("/s/{code}"),
        format!("/s/{code}.gpx"),
        format!("/s/{code}/stages/{stage_id}"),
    ] {
        let template = if path.ends_with(".gpx") {
            "/s/{code}.gpx"
        } else if path.contains("/stages/") {
            "/s/{code}/stages/{stageId}"
        } else {
            "/s/{code}"
        };
        let gone = app
            .call(Method::GET, template, &path, None, &[], None)
            .await;
        assert_eq!(
            gone.status,
            StatusCode::NOT_FOUND,
            "{path}: a revoked code answers 404 to everyone"
        );
    }
    let owner_view = app
        .call(
            Method::GET,
            "/s/{code}",
            &format!("/s/{code}"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(
        owner_view.status,
        StatusCode::NOT_FOUND,
        "even to its owner"
    );
    let reopened = app
        .call(
            Method::POST,
            "/trips/{id}/share",
            &share_path,
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(reopened.status, StatusCode::CREATED);
    assert_ne!(
        reopened.body["shortCode"],
        json!(code),
        "a new link gets a new code"
    );
}
