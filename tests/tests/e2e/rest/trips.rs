//! REST end to end: the real application on port 0, called over HTTP, on SQLite always and on
//! PostgreSQL when `DATABASE_URL` names one. Every answer is also checked against the
//! OpenAPI document (see `etappe_tests::openapi`).

use chrono::{Days, Utc};
use etappe_app::identity::Scope;
use etappe_tests::{Backend, TestApp, UNFETCHED_GPX};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn in_days(n: u64) -> String {
    (Utc::now().date_naive() + Days::new(n)).to_string()
}

fn days_ago(n: u64) -> String {
    (Utc::now().date_naive() - Days::new(n)).to_string()
}

fn gpx() -> Value {
    json!({"sourceUrl": "http://127.0.0.1:9/routes/alps.gpx"})
}

async fn new_trip(app: &TestApp, token: &str, extra: Value) -> String {
    let mut body = gpx();
    body.as_object_mut()
        .expect("object")
        .extend(extra.as_object().expect("object").clone());
    let answer = app.create_trip(token, &body).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.body);
    answer.body["id"].as_str().expect("id").to_owned()
}

fn field_errors(answer: &etappe_tests::Answer) -> Vec<(String, String)> {
    answer.body["errors"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["field"].as_str().unwrap_or("").to_owned(),
                        e["message"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn creating_a_trip_answers_at_once_with_its_location_and_partial(app: TestApp) {
    let token = app.user().await;
    let answer = app.create_trip(&token, &json!({"sourceUrl": "https://www.komoot.com/de-de/tour/123", "title": "Alps", "maxDistancePerDay": 100})).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    let id = answer.body["id"].as_str().expect("id");
    assert_eq!(answer.header("location"), Some(&*format!("/trips/{id}")));
    assert_eq!(answer.body["partial"], json!(true));
    assert_eq!(answer.body["version"], json!(1));
    assert_eq!(answer.body["computationStatus"]["route"], json!("pending"));

    let summary = app
        .call(
            Method::GET,
            "/trips/{id}",
            &format!("/trips/{id}"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(summary.status, StatusCode::OK);
    assert_eq!(summary.body["isLocked"], json!(false));

    let detail = app.detail(&token, id).await;
    assert_eq!(detail.body["title"], json!("Alps"));
    assert_eq!(detail.body["sourceType"], json!("komoot_tour"));
    assert_eq!(detail.body["maxDistancePerDay"], json!(100.0));
    assert_eq!(
        detail.body["fatigueFactor"],
        json!(0.9),
        "defaults fill what was not given"
    );
    assert_eq!(detail.body["stages"], json!([]));
    assert_eq!(detail.body["status"], json!("draft"));
}

async fn an_idempotency_key_replays_the_same_trip_and_refuses_another_body(app: TestApp) {
    let token = app.user().await;
    let key = uuid::Uuid::now_v7().to_string();
    let body = json!({"sourceUrl": UNFETCHED_GPX, "title": "Loire", "averageSpeed": 18});
    let call = |body: Value, key: String| {
        let app = &app;
        let token = token.clone();
        async move {
            app.call(
                Method::POST,
                "/trips",
                "/trips",
                Some(&token),
                &[("idempotency-key", &key)],
                Some(&body),
            )
            .await
        }
    };
    let first = call(body.clone(), key.clone()).await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    // Same key, same body with keys in another order: the same trip.
    let reordered = json!({"averageSpeed": 18, "title": "Loire", "sourceUrl": UNFETCHED_GPX});
    let second = call(reordered, key.clone()).await;
    assert_eq!(second.status, StatusCode::ACCEPTED);
    assert_eq!(second.body["id"], first.body["id"]);
    assert_eq!(second.header("idempotent-replayed"), Some("true"));
    let list = app
        .call(Method::GET, "/trips", "/trips", Some(&token), &[], None)
        .await;
    assert_eq!(
        list.body["totalItems"],
        json!(1),
        "a replay creates nothing"
    );

    let other = call(
        json!({"sourceUrl": UNFETCHED_GPX, "title": "Rhine"}),
        key.clone(),
    )
    .await;
    assert_eq!(other.status, StatusCode::CONFLICT);
    assert_eq!(other.body["code"], json!("conflict"));

    // Another user's identical key is theirs alone.
    let stranger = app.user().await;
    let theirs = app
        .call(
            Method::POST,
            "/trips",
            "/trips",
            Some(&stranger),
            &[("idempotency-key", &key)],
            Some(&body),
        )
        .await;
    assert_eq!(theirs.status, StatusCode::ACCEPTED);
    assert_ne!(theirs.body["id"], first.body["id"]);

    let bad = call(body, "short".into()).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.body["code"], json!("bad_header"));
}

async fn the_list_paginates_filters_and_refuses_bad_parameters(app: TestApp) {
    let token = app.user().await;
    for i in 0..3 {
        new_trip(&app, &token, json!({"title": format!("Tour {i}"), "startDate": in_days(10 + i), "endDate": in_days(15 + i)})).await;
    }
    new_trip(&app, &token, json!({"title": "Weekend"})).await;
    let get = |query: &str| {
        let path = format!("/trips{query}");
        let app = &app;
        let token = token.clone();
        async move {
            app.call(Method::GET, "/trips", &path, Some(&token), &[], None)
                .await
        }
    };
    let page = get("?itemsPerPage=3").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.body["totalItems"], json!(4));
    assert_eq!(page.body["items"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        page.body["items"][0]["title"],
        json!("Weekend"),
        "newest first"
    );
    assert_eq!(
        get("?itemsPerPage=3&page=2").await.body["items"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(get("?title=tour").await.body["totalItems"], json!(3));
    assert_eq!(
        get(&format!("?startDate={}", in_days(11))).await.body["totalItems"],
        json!(2)
    );
    assert_eq!(
        get(&format!("?endDate={}", in_days(16))).await.body["totalItems"],
        json!(2)
    );

    let too_many = get("?itemsPerPage=31").await;
    assert_eq!(too_many.status, StatusCode::BAD_REQUEST);
    assert_eq!(field_errors(&too_many)[0].0, "itemsPerPage");
    assert!(field_errors(&too_many)[0].1.contains("from 1 to 30"));
    let unknown = get("?colour=red").await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(
        field_errors(&unknown)[0]
            .1
            .contains("accepted: page, itemsPerPage, title, startDate, endDate")
    );
    let bad_date = get("?startDate=yesterday").await;
    assert_eq!(bad_date.status, StatusCode::BAD_REQUEST);
    assert_eq!(field_errors(&bad_date)[0].0, "startDate");
}

async fn the_detail_carries_a_strong_etag_and_is_never_stored(app: TestApp) {
    let token = app.user().await;
    let id = new_trip(&app, &token, json!({})).await;
    let detail = app.detail(&token, &id).await;
    assert_eq!(detail.header("etag"), Some("\"1\""));
    assert_eq!(detail.header("cache-control"), Some("no-store"));
}

async fn a_settings_change_needs_if_match_and_refuses_a_stale_version(app: TestApp) {
    let token = app.user().await;
    let id = new_trip(&app, &token, json!({})).await;

    let missing = app
        .patch(&token, &id, None, &json!({"ebikeMode": true}))
        .await;
    assert_eq!(missing.status, StatusCode::PRECONDITION_REQUIRED);
    assert_eq!(missing.body["code"], json!("precondition_required"));

    let malformed = app
        .patch(
            &token,
            &id,
            Some("version one"),
            &json!({"ebikeMode": true}),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);

    // A title change recomputes nothing, and still moves the version: every caller edit does.
    let renamed = app
        .patch(&token, &id, Some("\"1\""), &json!({"title": "Renamed"}))
        .await;
    assert_eq!(renamed.status, StatusCode::OK);
    assert_eq!(renamed.header("etag"), Some("\"2\""));
    assert_eq!(renamed.body["title"], json!("Renamed"));

    // A pacing change moves it too, and the old version is now stale.
    let repaced = app
        .patch(
            &token,
            &id,
            Some("\"2\""),
            &json!({"maxDistancePerDay": 120}),
        )
        .await;
    assert_eq!(repaced.status, StatusCode::OK);
    assert_eq!(repaced.header("etag"), Some("\"3\""));
    assert_eq!(repaced.body["maxDistancePerDay"], json!(120.0));

    let stale = app
        .patch(&token, &id, Some("\"1\""), &json!({"ebikeMode": true}))
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(stale.body["currentVersion"], json!(3));
    assert!(
        stale.body["detail"]
            .as_str()
            .unwrap_or("")
            .contains("you edited version 1, the current one is 3")
    );

    let any = app
        .patch(&token, &id, Some("*"), &json!({"ebikeMode": true}))
        .await;
    assert_eq!(
        any.status,
        StatusCode::OK,
        "If-Match: * means whatever is current"
    );
    assert_eq!(any.header("etag"), Some("\"4\""));

    // Clearing a date with null.
    let dated = app
        .patch(&token, &id, Some("\"4\""), &json!({"endDate": in_days(40)}))
        .await;
    assert_eq!(dated.status, StatusCode::OK);
    let cleared = app
        .patch(&token, &id, Some("\"5\""), &json!({"endDate": null}))
        .await;
    assert_eq!(cleared.status, StatusCode::OK);
    assert_eq!(cleared.body["endDate"], Value::Null);
}

async fn a_locked_trip_refuses_edits_judged_before_the_edit_but_can_be_deleted(app: TestApp) {
    let token = app.user().await;
    let id = new_trip(&app, &token, json!({"startDate": days_ago(1)})).await;
    let detail = app.detail(&token, &id).await;
    assert_eq!(detail.body["isLocked"], json!(true));

    let unlock = app
        .patch(
            &token,
            &id,
            Some("\"1\""),
            &json!({"startDate": in_days(30)}),
        )
        .await;
    assert_eq!(
        unlock.status,
        StatusCode::LOCKED,
        "moving the start into the future cannot unlock it"
    );
    assert_eq!(unlock.body["code"], json!("locked"));
    let no_version = app
        .patch(&token, &id, None, &json!({"ebikeMode": true}))
        .await;
    assert_eq!(
        no_version.status,
        StatusCode::LOCKED,
        "the lock is judged before the version"
    );

    let today = new_trip(&app, &token, json!({"startDate": in_days(0)})).await;
    assert_eq!(
        app.patch(&token, &today, Some("\"1\""), &json!({"ebikeMode": true}))
            .await
            .status,
        StatusCode::LOCKED
    );
    let tomorrow = new_trip(&app, &token, json!({"startDate": in_days(1)})).await;
    assert_eq!(
        app.patch(
            &token,
            &tomorrow,
            Some("\"1\""),
            &json!({"ebikeMode": true})
        )
        .await
        .status,
        StatusCode::OK
    );

    let deleted = app
        .call(
            Method::DELETE,
            "/trips/{id}",
            &format!("/trips/{id}"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(app.detail(&token, &id).await.status, StatusCode::NOT_FOUND);
    let again = app
        .call(
            Method::DELETE,
            "/trips/{id}",
            &format!("/trips/{id}"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    let list = app
        .call(Method::GET, "/trips", "/trips", Some(&token), &[], None)
        .await;
    assert_eq!(
        list.body["totalItems"],
        json!(2),
        "a deleted trip leaves the list"
    );
}

async fn someone_elses_trip_answers_exactly_like_a_missing_one(app: TestApp) {
    let owner = app.user().await;
    let stranger = app.user().await;
    let id = new_trip(&app, &owner, json!({})).await;
    let missing = uuid::Uuid::now_v7().to_string();
    for (method, template, suffix, if_match) in [
        (Method::GET, "/trips/{id}", "", None),
        (Method::GET, "/trips/{id}/detail", "/detail", None),
        (Method::PATCH, "/trips/{id}", "", Some("\"1\"")),
        (Method::PATCH, "/trips/{id}", "", None),
        (Method::DELETE, "/trips/{id}", "", None),
    ] {
        let mut answers = Vec::new();
        for target in [&id, &missing] {
            let headers: Vec<(&str, &str)> =
                if_match.map(|v| ("if-match", v)).into_iter().collect();
            let body = (method == Method::PATCH).then(|| json!({"ebikeMode": true}));
            let answer = app
                .call(
                    method.clone(),
                    template,
                    &format!("/trips/{target}{suffix}"),
                    Some(&stranger),
                    &headers,
                    body.as_ref(),
                )
                .await;
            answers.push((answer.status, answer.body));
        }
        assert_eq!(answers[0].0, StatusCode::NOT_FOUND, "{method} {template}");
        assert_eq!(
            answers[0], answers[1],
            "{method} {template}: foreign and missing must be indistinguishable"
        );
    }
    // And the owner's trip is untouched.
    let detail = app.detail(&owner, &id).await;
    assert_eq!(detail.body["ebikeMode"], json!(false));
    let malformed = app
        .call(
            Method::GET,
            "/trips/{id}",
            "/trips/not-a-uuid",
            Some(&owner),
            &[],
            None,
        )
        .await;
    assert_eq!(malformed.status, StatusCode::NOT_FOUND);
}

async fn missing_scopes_and_tokens_are_refused_explicitly(app: TestApp) {
    let reader = app.user_with(&[Scope::TripsRead]).await;
    let writer = app.user_with(&[Scope::TripsWrite]).await;
    let create = app.create_trip(&reader, &gpx()).await;
    assert_eq!(create.status, StatusCode::FORBIDDEN);
    assert_eq!(create.body["code"], json!("insufficient_scope"));
    assert_eq!(create.body["scope"], json!("trips:write"));
    assert!(
        create
            .header("www-authenticate")
            .unwrap_or("")
            .contains("insufficient_scope")
    );
    let list = app
        .call(Method::GET, "/trips", "/trips", Some(&writer), &[], None)
        .await;
    assert_eq!(list.status, StatusCode::FORBIDDEN);
    assert_eq!(list.body["scope"], json!("trips:read"));

    let anonymous = app
        .call(Method::GET, "/trips", "/trips", None, &[], None)
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    assert!(anonymous.header("www-authenticate").is_some());
    let forged = format!("etp_{}", "0".repeat(64));
    assert_eq!(
        app.call(Method::GET, "/trips", "/trips", Some(&forged), &[], None)
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
}

async fn bad_input_is_refused_by_name_with_what_is_accepted(app: TestApp) {
    let token = app.user().await;
    let unknown = app
        .create_trip(
            &token,
            &json!({"sourceUrl": "https://e.org/a.gpx", "colour": "red", "version": 3}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(unknown.body["code"], json!("unknown_field"));
    let names: Vec<String> = field_errors(&unknown).into_iter().map(|e| e.0).collect();
    assert_eq!(names, vec!["colour", "version"]);
    assert!(
        field_errors(&unknown)[0]
            .1
            .contains("accepted: sourceUrl, plan, title")
    );

    let invalid = app
        .create_trip(
            &token,
            &json!({
                "sourceUrl": "https://e.org/a.gpx",
                "startDate": "2026-02-30",
                "fatigueFactor": 2,
                "departureHour": 24,
                "averageSpeed": "fast",
                "enabledAccommodationTypes": ["motel"],
            }),
        )
        .await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    let errors = field_errors(&invalid);
    let named: Vec<&str> = errors.iter().map(|e| e.0.as_str()).collect();
    for field in [
        "startDate",
        "fatigueFactor",
        "departureHour",
        "averageSpeed",
        "enabledAccommodationTypes",
    ] {
        assert!(named.contains(&field), "{field} must be named: {errors:?}");
    }
    assert!(
        errors
            .iter()
            .any(|e| e.1 == "fatigueFactor must be a number from 0.5 to 1; got 2"),
        "{errors:?}"
    );

    let reversed = app.create_trip(&token, &json!({"sourceUrl": "https://e.org/a.gpx", "startDate": in_days(10), "endDate": in_days(5)})).await;
    assert_eq!(reversed.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(field_errors(&reversed)[0].0, "endDate");

    let no_source = app.create_trip(&token, &json!({"title": "x"})).await;
    assert_eq!(field_errors(&no_source)[0].0, "sourceUrl");
    let plain_http = app
        .create_trip(&token, &json!({"sourceUrl": "http://192.0.2.1/a.gpx"}))
        .await;
    assert_eq!(plain_http.status, StatusCode::UNPROCESSABLE_ENTITY);
    let fixture = app
        .create_trip(&token, &json!({"sourceUrl": "http://127.0.0.1:9/a.gpx"}))
        .await;
    assert_eq!(
        fixture.status,
        StatusCode::ACCEPTED,
        "hosts the operator allows may use http"
    );

    // Caller text quoted in an error is cut to 40 characters.
    let long = "x".repeat(500);
    let echoed = app.create_trip(&token, &json!({"sourceUrl": long})).await;
    let message = &field_errors(&echoed)[0].1;
    assert!(
        message.contains(&format!("\"{}…\"", "x".repeat(40))),
        "{message}"
    );
    assert!(!message.contains(&"x".repeat(41)), "{message}");
    let long_name = format!("{}{}", "y".repeat(60), "z");
    let named = app
        .create_trip(
            &token,
            &json!({"sourceUrl": "https://e.org/a.gpx", long_name.clone(): 1}),
        )
        .await;
    assert!(
        !named.body.to_string().contains(&long_name),
        "an unknown name is cut too"
    );

    let id = new_trip(&app, &token, json!({})).await;
    let patch_unknown = app
        .patch(
            &token,
            &id,
            Some("\"1\""),
            &json!({"sourceUrl": "https://e.org/b.gpx"}),
        )
        .await;
    assert_eq!(patch_unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        field_errors(&patch_unknown)[0].0,
        "sourceUrl",
        "the source is fixed at creation"
    );
    let patch_range = app
        .patch(
            &token,
            &id,
            Some("\"1\""),
            &json!({"maxDistancePerDay": 301, "elevationPenalty": 0}),
        )
        .await;
    assert_eq!(patch_range.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(field_errors(&patch_range).len(), 2);

    // Not JSON at all, and not declared as JSON.
    let raw = app
        .client
        .post(format!("{}/trips", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("send");
    assert_eq!(raw.status(), StatusCode::BAD_REQUEST);
    assert_eq!(raw.headers()["content-type"], "application/problem+json");
    let text = app
        .client
        .post(format!("{}/trips", app.base))
        .bearer_auth(&token)
        .body("sourceUrl=x")
        .send()
        .await
        .expect("send");
    assert_eq!(text.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

async fn probes_answer_and_unknown_routes_are_problems(app: TestApp) {
    assert_eq!(
        app.call(Method::GET, "/livez", "/livez", None, &[], None)
            .await
            .status,
        StatusCode::OK
    );
    let ready = app
        .call(Method::GET, "/readyz", "/readyz", None, &[], None)
        .await;
    assert_eq!(ready.status, StatusCode::OK);
    assert_eq!(ready.body["checks"]["database"], json!("up"));
    assert_eq!(
        ready.body["upstreams"]["geocoder"],
        json!({"provider": "gazetteer", "status": "embedded", "required": false}),
        "with nothing configured, the embedded defaults stand in"
    );
    let nothing = app
        .client
        .get(format!("{}/nothing-here", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(nothing.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        nothing.headers()["content-type"],
        "application/problem+json"
    );
    let put = app
        .client
        .put(format!("{}/trips", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(put.status(), StatusCode::METHOD_NOT_ALLOWED);
    let served = app
        .call(
            Method::GET,
            "/openapi.json",
            "/openapi.json",
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(&served.body, etappe_tests::openapi::document());
}

async fn the_first_embedded_start_creates_a_local_user_with_a_working_token(app: TestApp) {
    if app.backend != Backend::Sqlite {
        assert!(
            app.local_token.is_none(),
            "only the embedded default creates a local user"
        );
        return;
    }
    let token = app
        .local_token
        .clone()
        .expect("a first start prints a token");
    let created = app.create_trip(&token, &gpx()).await;
    assert_eq!(created.status, StatusCode::ACCEPTED);
}

async fn the_history_is_readable_and_any_past_version_can_be_read(app: TestApp) {
    let token = app.user().await;
    let id = new_trip(&app, &token, json!({"title": "First"})).await;
    assert_eq!(
        app.patch(&token, &id, Some("\"1\""), &json!({"title": "Second"}))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        app.patch(
            &token,
            &id,
            Some("\"2\""),
            &json!({"maxDistancePerDay": 90})
        )
        .await
        .status,
        StatusCode::OK
    );
    let history = app
        .call(
            Method::GET,
            "/trips/{id}/history",
            &format!("/trips/{id}/history"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(history.status, StatusCode::OK);
    let items = history.body["items"].as_array().expect("items");
    let types: Vec<&str> = items.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(&types[..2], &["TripCreated", "RouteRequested"]);
    assert!(types.contains(&"TripSettingsUpdated"));
    assert!(
        items[0]["actor"]
            .as_str()
            .unwrap_or("")
            .starts_with("user:")
    );
    assert!(
        items.iter().any(|i| i["summary"]
            .as_str()
            .unwrap_or("")
            .contains("maxDistancePerDay (version 3)")),
        "{items:?}"
    );

    let v1 = app
        .call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail?version=1"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(v1.status, StatusCode::OK);
    assert_eq!(
        v1.body["title"],
        json!("First"),
        "version 1 is the trip as created (a title change moves the version)"
    );
    assert_eq!(v1.body["maxDistancePerDay"], json!(80.0));
    let v2 = app
        .call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail?version=2"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(v2.body["title"], json!("Second"));
    assert_eq!(v2.body["maxDistancePerDay"], json!(80.0));
    let v3 = app
        .call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail?version=3"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(v3.body["maxDistancePerDay"], json!(90.0));
    let v9 = app
        .call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail?version=9"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(v9.status, StatusCode::NOT_FOUND);
    assert_eq!(v9.body["code"], json!("no_such_version"));
    let bad = app
        .call(
            Method::GET,
            "/trips/{id}/detail",
            &format!("/trips/{id}/detail?version=zero"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let stranger = app.user().await;
    let foreign = app
        .call(
            Method::GET,
            "/trips/{id}/history",
            &format!("/trips/{id}/history"),
            Some(&stranger),
            &[],
            None,
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
}

async fn a_revoked_token_stops_working_at_once(app: TestApp) {
    let token = app.user().await;
    let list = |token: String| {
        let app = &app;
        async move {
            app.call(Method::GET, "/trips", "/trips", Some(&token), &[], None)
                .await
                .status
        }
    };
    assert_eq!(
        list(token.clone()).await,
        StatusCode::OK,
        "cached as live now"
    );
    let revoked = app
        .state
        .identity()
        .revoke_token(&token)
        .await
        .expect("revoke");
    assert!(revoked);
    assert_eq!(list(token.clone()).await, StatusCode::UNAUTHORIZED);
    let mcp = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
    let again = app
        .state
        .identity()
        .revoke_token(&token)
        .await
        .expect("revoke");
    assert!(!again, "already revoked");
    let other = app.user().await;
    assert_eq!(list(other).await, StatusCode::OK, "other tokens live on");
}

/// The owner's detail names the open public link (`share`, null when none is open), so a
/// page needs no `GET /trips/{id}/share` that answers 404; a visitor's view never names it;
/// each day of a shared trip downloads from the link as GPX and FIT, the same files as the
/// owner's, and stops with the link.
async fn the_detail_names_its_share_link_and_a_shared_trip_serves_each_days_files(app: TestApp) {
    let fixtures = etappe_tests::fixtures::start().await;
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 80}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    assert_eq!(detail["share"], Value::Null, "no link is open yet");
    let stages: Vec<String> = detail["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .filter_map(|s| s["stageId"].as_str().map(str::to_owned))
        .collect();
    assert!(stages.len() >= 3, "{detail}");
    let opened = app
        .call(
            Method::POST,
            "/trips/{id}/share",
            &format!("/trips/{id}/share"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let code = opened.body["shortCode"].as_str().expect("code").to_owned();
    let detail = app.detail(&token, &id).await.body;
    assert_eq!(detail["share"]["code"], json!(code));
    assert_eq!(detail["share"]["url"], json!(format!("/s/{code}")));
    assert!(
        opened.body["url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("/s/{code}"))),
        "the detail's path is the link's"
    );
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
    assert!(public.body.get("share").is_none(), "{}", public.body);

    for stage in &stages {
        let gpx = app
            .call(
                Method::GET,
                "/s/{code}/stages/{stageId}.gpx",
                &format!("/s/{code}/stages/{stage}.gpx"),
                None,
                &[],
                None,
            )
            .await;
        assert_eq!(gpx.status, StatusCode::OK, "{stage}.gpx");
        assert!(
            gpx.header("content-type")
                .is_some_and(|t| t.starts_with("application/gpx+xml")),
            "{:?}",
            gpx.header("content-type")
        );
        let text = String::from_utf8_lossy(&gpx.raw).to_string();
        assert!(text.contains("<gpx") && text.contains("<trkpt"), "{text}");
        let own = app
            .call(
                Method::GET,
                "/trips/{id}/stages/{stageId}/export.gpx",
                &format!("/trips/{id}/stages/{stage}/export.gpx"),
                Some(&token),
                &[],
                None,
            )
            .await;
        assert_eq!(own.raw, gpx.raw, "the visitor's day file is the owner's");
        let fit = app
            .call(
                Method::GET,
                "/s/{code}/stages/{stageId}.fit",
                &format!("/s/{code}/stages/{stage}.fit"),
                None,
                &[],
                None,
            )
            .await;
        assert_eq!(fit.status, StatusCode::OK, "{stage}.fit");
        assert_eq!(fit.raw.get(8..12), Some(&b".FIT"[..]), "a FIT file");
    }
    let whole = app
        .call(
            Method::GET,
            "/s/{code}.gpx",
            &format!("/s/{code}.gpx"),
            None,
            &[],
            None,
        )
        .await;
    assert_ne!(
        whole.raw,
        app.call(
            Method::GET,
            "/s/{code}/stages/{stageId}.gpx",
            &format!("/s/{code}/stages/{}.gpx", stages[0]),
            None,
            &[],
            None,
        )
        .await
        .raw,
        "a day's file is the day, not the trip"
    );
    let unknown = uuid::Uuid::now_v7();
    let missing = app
        .call(
            Method::GET,
            "/s/{code}/stages/{stageId}.fit",
            &format!("/s/{code}/stages/{unknown}.fit"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    let revoked = app
        .call(
            Method::DELETE,
            "/trips/{id}/share",
            &format!("/trips/{id}/share"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    assert_eq!(app.detail(&token, &id).await.body["share"], Value::Null);
    let gone = app
        .call(
            Method::GET,
            "/s/{code}/stages/{stageId}.gpx",
            &format!("/s/{code}/stages/{}.gpx", stages[0]),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(
        gone.status,
        StatusCode::NOT_FOUND,
        "the days stop with the link"
    );
}

etappe_tests::on_both_backends!(
    the_detail_names_its_share_link_and_a_shared_trip_serves_each_days_files,
    creating_a_trip_answers_at_once_with_its_location_and_partial,
    an_idempotency_key_replays_the_same_trip_and_refuses_another_body,
    the_list_paginates_filters_and_refuses_bad_parameters,
    the_detail_carries_a_strong_etag_and_is_never_stored,
    a_settings_change_needs_if_match_and_refuses_a_stale_version,
    a_locked_trip_refuses_edits_judged_before_the_edit_but_can_be_deleted,
    someone_elses_trip_answers_exactly_like_a_missing_one,
    missing_scopes_and_tokens_are_refused_explicitly,
    bad_input_is_refused_by_name_with_what_is_accepted,
    probes_answer_and_unknown_routes_are_problems,
    the_first_embedded_start_creates_a_local_user_with_a_working_token,
    the_history_is_readable_and_any_past_version_can_be_read,
    a_revoked_token_stops_working_at_once,
);

/// The operations the API has published since before the document was generated: the
/// generated document must keep every one, and add none unnoticed.
const PUBLISHED: &[(&str, &str)] = &[
    ("GET", "/trips"),
    ("POST", "/trips"),
    ("GET", "/trips/{id}"),
    ("PATCH", "/trips/{id}"),
    ("DELETE", "/trips/{id}"),
    ("GET", "/trips/{id}/detail"),
    ("POST", "/trips/{id}/analyze"),
    ("GET", "/trips/{id}/events"),
    ("POST", "/trips/gpx-upload"),
    ("GET", "/metrics"),
    ("GET", "/geocode/search"),
    ("GET", "/trips/{id}.gpx"),
    ("GET", "/trips/{id}.fit"),
    ("GET", "/trips/{id}/stages/{stageId}/export.gpx"),
    ("GET", "/trips/{id}/stages/{stageId}/export.fit"),
    ("GET", "/trips/{id}/history"),
    ("POST", "/trips/{id}/duplicate"),
    ("POST", "/trips/{id}/restore"),
    ("POST", "/trips/{id}/stages"),
    ("PATCH", "/trips/{id}/stages/{stageId}"),
    ("DELETE", "/trips/{id}/stages/{stageId}"),
    ("GET", "/trips/{id}/stages/{stageId}/detail"),
    ("PATCH", "/trips/{id}/stages/{stageId}/move"),
    ("POST", "/trips/{id}/stages/{stageId}/rest-day"),
    ("PATCH", "/trips/{id}/stages/{stageId}/accommodation"),
    ("POST", "/trips/{id}/stages/{stageId}/accommodations/manual"),
    ("POST", "/trips/{id}/stages/{stageId}/poi-waypoint"),
    // Issue 21: a detour removed.
    ("DELETE", "/trips/{id}/stages/{stageId}/poi-waypoint"),
    ("POST", "/trips/{id}/accommodations/scan"),
    ("GET", "/trips/{id}/route"),
    ("GET", "/s/{code}/route"),
    ("GET", "/trips/{id}/share"),
    ("POST", "/trips/{id}/share"),
    ("DELETE", "/trips/{id}/share"),
    ("GET", "/s/{code}"),
    ("GET", "/s/{code}.gpx"),
    ("GET", "/s/{code}.fit"),
    ("GET", "/s/{code}/stages/{stageId}"),
    // The page's per-day files on a share link.
    ("GET", "/s/{code}/stages/{stageId}.gpx"),
    ("GET", "/s/{code}/stages/{stageId}.fit"),
    ("GET", "/livez"),
    ("GET", "/readyz"),
    ("GET", "/openapi.json"),
    // The account (issue 12): a person's sessions, tokens, export and deletion.
    ("GET", "/users/me"),
    ("DELETE", "/users/me"),
    ("GET", "/users/me/sessions"),
    ("DELETE", "/users/me/sessions/{id}"),
    ("GET", "/users/me/tokens"),
    ("POST", "/users/me/tokens"),
    ("DELETE", "/users/me/tokens/{id}"),
    ("GET", "/users/me/export"),
    ("GET", "/users/me/audit"),
    // The agents a person authorized over OAuth (issue 12).
    ("GET", "/users/me/agents"),
    ("DELETE", "/users/me/agents/{id}"),
];

#[test]
fn the_generated_document_keeps_every_published_operation() {
    let doc = etappe_tests::openapi::document();
    assert_eq!(doc["openapi"], json!("3.1.0"));
    let mut documented = etappe_services::http::operations();
    let mut published: Vec<(String, String)> = PUBLISHED
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    documented.sort();
    published.sort();
    assert_eq!(
        documented, published,
        "the document lists exactly the operations published"
    );
    let mut ids: Vec<&str> = doc["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|item| item.as_object().expect("path item").values())
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids are unique");
    assert_eq!(count, PUBLISHED.len(), "every operation has an id");
}

#[test]
fn the_validator_rejects_what_the_document_does_not_allow() {
    // The checks above are only as good as the validator: it must catch drift.
    let schema = json!({"$ref": "#/components/schemas/TripSummary"});
    let good = json!({"id": uuid::Uuid::nil().to_string(), "version": 1, "partial": true, "isLocked": false,
        "computationStatus": {"route": "pending"}, "unavailable": {}});
    assert!(etappe_tests::openapi::validate(&schema, &good).is_empty());
    let mut extra = good.clone();
    extra["surprise"] = json!(1);
    assert!(!etappe_tests::openapi::validate(&schema, &extra).is_empty());
    let mut wrong = good.clone();
    wrong["computationStatus"]["route"] = json!("sleeping");
    assert!(!etappe_tests::openapi::validate(&schema, &wrong).is_empty());
    let mut missing = good;
    missing.as_object_mut().expect("object").remove("version");
    assert!(!etappe_tests::openapi::validate(&schema, &missing).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn places_are_searched_in_the_embedded_gazetteer() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let search = |q: &str| {
        let path = format!("/geocode/search?{q}");
        let app = &app;
        let token = token.clone();
        async move {
            app.call(
                Method::GET,
                "/geocode/search",
                &path,
                Some(&token),
                &[],
                None,
            )
            .await
        }
    };
    let grenoble = search("q=Grenoblle&limit=3").await;
    assert_eq!(grenoble.status, StatusCode::OK);
    assert_eq!(
        grenoble.body["items"][0]["name"],
        json!("Grenoble"),
        "a typo still finds it: {}",
        grenoble.body
    );
    assert_eq!(grenoble.body["items"][0]["countryCode"], json!("FR"));
    let munich = search("q=M%C3%BCnchen").await;
    assert_eq!(
        munich.body["items"][0]["countryCode"],
        json!("DE"),
        "{}",
        munich.body
    );
    assert_eq!(
        search("q=Paris&limit=11").await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(search("q=&limit=3").await.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        search("q=Paris&near=1").await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_route_is_really_served() {
    // The document is generated from the handlers' annotations, apart from the router; this
    // calls each operation for real (anonymously) and fails if the router does not know it
    // (its fallback answers "no such resource") or refuses the method.
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let id = uuid::Uuid::now_v7().to_string();
    for (method, template) in etappe_services::http::operations() {
        let path = template
            .replace("{id}", &id)
            .replace("{stageId}", &id)
            .replace("{code}", "AAAAAAAAAAA");
        let method: Method = method.parse().expect("method");
        let response = app
            .client
            .request(method.clone(), format!("{}{path}", app.base))
            .send()
            .await
            .expect("send");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(
            !(status == StatusCode::NOT_FOUND && body.contains("no such resource")),
            "{method} {template} is documented but not routed"
        );
        assert_ne!(
            status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {template} is documented but not routed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_days_routes_refuse_the_methods_they_do_not_take() {
    // Each of a day's sub-resources is a route of its own: a method the document does not
    // list for it is a 405 naming the ones it takes, never a 404 that hides the resource.
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let id = uuid::Uuid::now_v7().to_string();
    let operations = etappe_services::http::operations();
    let leaves = [
        "detail",
        "export.gpx",
        "export.fit",
        "move",
        "accommodation",
        "rest-day",
        "poi-waypoint",
    ];
    for leaf in leaves {
        let template = format!("/trips/{{id}}/stages/{{stageId}}/{leaf}");
        let documented: Vec<String> = operations
            .iter()
            .filter(|(_, t)| *t == template)
            .map(|(m, _)| m.to_uppercase())
            .collect();
        assert!(!documented.is_empty(), "{template} is documented");
        for method in [Method::GET, Method::PATCH, Method::POST, Method::DELETE] {
            if documented.contains(&method.to_string()) {
                continue;
            }
            let response = app
                .client
                .request(
                    method.clone(),
                    format!("{}/trips/{id}/stages/{id}/{leaf}", app.base),
                )
                .send()
                .await
                .expect("send");
            assert_eq!(
                response.status(),
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {template}"
            );
            let allow = response
                .headers()
                .get("allow")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            for taken in &documented {
                assert!(
                    allow.contains(taken.as_str()),
                    "{method} {template}: Allow {allow}"
                );
            }
        }
    }
}
