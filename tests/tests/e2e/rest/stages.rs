//! The day edits over REST, on both backends: each edit with its guards (If-Match missing or
//! stale, a locked trip, an unknown day, someone else's trip, an out-of-range move), stable
//! ids, the invalidated analysis run again; waypoint detours that do not move the version;
//! scans without a provider; the route's lines with their 304; duplicating a trip once per
//! `Idempotency-Key`.

use etappe_tests::{TestApp, fixtures};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn analysed(detail: &Value) -> bool {
    detail["partial"] == json!(false)
        && detail["computationStatus"]["terrain_security"] == json!("done")
}

fn ids(detail: &Value) -> Vec<String> {
    detail["stages"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|d| d["stageId"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

struct Trip<'a> {
    app: &'a TestApp,
    token: String,
    id: String,
}

impl Trip<'_> {
    async fn call(
        &self,
        method: Method,
        template: &str,
        tail: &str,
        if_match: Option<&str>,
        body: Option<&Value>,
    ) -> etappe_tests::Answer {
        let headers: Vec<(&str, &str)> = if_match.map(|v| ("if-match", v)).into_iter().collect();
        self.app
            .call(
                method,
                template,
                &format!("/trips/{}{tail}", self.id),
                Some(&self.token),
                &headers,
                body,
            )
            .await
    }
}

async fn the_days_are_edited_with_stable_ids_and_guards(app: TestApp) {
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 60}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let trip = Trip {
        app: &app,
        token: token.clone(),
        id: id.clone(),
    };
    let before = app.wait_until(&token, &id, analysed).await;
    let version = before["version"].as_u64().expect("version");
    let first = ids(&before);
    assert!(first.len() >= 3, "{before}");
    let day1 = &first[0];
    let tag = format!("\"{version}\"");
    let update = format!("/stages/{day1}");
    let template = "/trips/{id}/stages/{stageId}";

    // If-Match missing, then stale.
    let body = json!({"distance": 20.5, "label": "Short start"});
    let missing = trip
        .call(Method::PATCH, template, &update, None, Some(&body))
        .await;
    assert_eq!(missing.status, StatusCode::PRECONDITION_REQUIRED);
    // (Version 1, the creation's, would still do: only Etappe's route job came after it.)
    let stale = trip
        .call(Method::PATCH, template, &update, Some("\"0\""), Some(&body))
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(stale.body["currentVersion"], json!(version));

    // Update: the first day ends 20.5 km in; ids stay; the version moves; the analysis is
    // asked again and comes back.
    let updated = trip
        .call(Method::PATCH, template, &update, Some(&tag), Some(&body))
        .await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
    assert_eq!(updated.body["version"], json!(version + 1));
    assert_eq!(
        updated.header("etag"),
        Some(format!("\"{}\"", version + 1).as_str())
    );
    let distance = updated.body["stages"][0]["distance"].as_f64().expect("km");
    assert!((20.4..21.0).contains(&distance), "{distance}");
    assert_eq!(updated.body["stages"][0]["label"], json!("Short start"));
    assert_eq!(ids(&updated.body), first, "every id survives");
    let after = app.wait_until(&token, &id, analysed).await;
    assert_eq!(after["version"], json!(version + 1));

    // Add: day 1 is split; the new day follows it.
    let v = after["version"].as_u64().expect("v");
    let added = trip
        .call(
            Method::POST,
            "/trips/{id}/stages",
            "/stages",
            Some(&format!("\"{v}\"")),
            Some(&json!({"stageId": day1, "distance": 10})),
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.body);
    let now = ids(&added.body);
    assert_eq!(now.len(), first.len() + 1);
    assert_eq!(&now[0], day1);
    assert!(!first.contains(&now[1]), "the new day has a new id");
    assert_eq!(&now[2..], &first[1..]);

    // Move out of range names the range; a real move reorders.
    let v = added.body["version"].as_u64().expect("v");
    let out = trip
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}/move",
            &format!("/stages/{day1}/move"),
            Some(&format!("\"{v}\"")),
            Some(&json!({"toIndex": 99})),
        )
        .await;
    assert_eq!(out.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(out.body["errors"][0]["field"], json!("toIndex"));

    // An empty If-Match names no version: the precondition is missing (428), not malformed.
    for empty in ["", " , "] {
        let unnamed = trip
            .call(
                Method::POST,
                "/trips/{id}/stages/{stageId}/rest-day",
                &format!("/stages/{day1}/rest-day"),
                Some(empty),
                None,
            )
            .await;
        assert_eq!(
            unnamed.status,
            StatusCode::PRECONDITION_REQUIRED,
            "{empty:?}: {}",
            unnamed.body
        );
    }

    // Rest day after day 1, then delete it again.
    let rest = trip
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/rest-day",
            &format!("/stages/{day1}/rest-day"),
            Some(&format!("\"{v}\"")),
            None,
        )
        .await;
    assert_eq!(rest.status, StatusCode::OK, "{}", rest.body);
    assert_eq!(rest.body["stages"][1]["isRestDay"], json!(true));
    assert_eq!(rest.body["stages"][1]["distance"], json!(0.0));
    let rest_id = rest.body["stages"][1]["stageId"]
        .as_str()
        .expect("id")
        .to_owned();
    let v = rest.body["version"].as_u64().expect("v");
    let deleted = trip
        .call(
            Method::DELETE,
            template,
            &format!("/stages/{rest_id}"),
            Some(&format!("\"{v}\"")),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(ids(&deleted.body), now);

    // Delete a riding day: merged into the previous one, the total distance kept.
    let v = deleted.body["version"].as_u64().expect("v");
    let total = deleted.body["totalDistance"].as_f64().expect("total");
    let merged = trip
        .call(
            Method::DELETE,
            template,
            &format!("/stages/{}", now[1]),
            Some(&format!("\"{v}\"")),
            None,
        )
        .await;
    assert_eq!(merged.status, StatusCode::OK, "{}", merged.body);
    assert_eq!(ids(&merged.body).len(), first.len());
    let merged_total = merged.body["totalDistance"].as_f64().expect("total");
    assert!(
        (merged_total - total).abs() < 0.05,
        "{total} {merged_total}"
    );

    // An unknown day, a day of someone else's trip.
    let v = merged.body["version"].as_u64().expect("v");
    let unknown = trip
        .call(
            Method::PATCH,
            template,
            "/stages/0190a0a0-0000-7000-8000-000000000000",
            Some(&format!("\"{v}\"")),
            Some(&json!({"label": "x"})),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.body["code"], json!("stage_not_found"));
    let stranger = app.user().await;
    let foreign = app
        .call(
            Method::PATCH,
            template,
            &format!("/trips/{id}/stages/{day1}"),
            Some(&stranger),
            &[("if-match", &format!("\"{v}\""))],
            Some(&json!({"label": "mine now"})),
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    assert_eq!(foreign.body["code"], json!("not_found"));

    // A detour through a waypoint: 202, version unchanged; the day grows by a spur.
    let day1_before = merged.body["stages"][0].clone();
    let waypoint = json!({
        "waypointLat": day1_before["endPoint"]["lat"].as_f64().expect("lat") + 0.01,
        "waypointLon": day1_before["endPoint"]["lon"].as_f64().expect("lon") + 0.01,
    });
    let detour = trip
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/stages/{day1}/poi-waypoint"),
            None,
            Some(&waypoint),
        )
        .await;
    assert_eq!(detour.status, StatusCode::ACCEPTED, "{}", detour.body);
    assert_eq!(detour.body["version"], json!(v));
    let rerouted = app
        .wait_until(&token, &id, |d| !d["stages"][0]["detour"].is_null())
        .await;
    assert_eq!(
        rerouted["version"],
        json!(v),
        "a detour does not move the version"
    );
    assert_eq!(rerouted["stages"][0]["detour"]["estimated"], json!(true));
    let added_km = rerouted["stages"][0]["detour"]["addedDistance"]
        .as_f64()
        .expect("km");
    assert!(added_km > 0.5, "{added_km}");

    // The route's lines, then 304 with the ETag.
    let lines = trip
        .call(Method::GET, "/trips/{id}/route", "/route", None, None)
        .await;
    assert_eq!(lines.status, StatusCode::OK);
    let etag = lines.header("etag").expect("etag").to_owned();
    assert_eq!(
        lines.body["days"].as_array().map(Vec::len),
        Some(first.len())
    );
    let again = app
        .call(
            Method::GET,
            "/trips/{id}/route",
            &format!("/trips/{id}/route"),
            Some(&token),
            &[("if-none-match", &etag)],
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);

    // A scan without a provider says so, and invents nothing.
    let scan = trip
        .call(
            Method::POST,
            "/trips/{id}/accommodations/scan",
            "/accommodations/scan",
            None,
            Some(&json!({"radiusKm": 3})),
        )
        .await;
    assert_eq!(scan.status, StatusCode::ACCEPTED, "{}", scan.body);
    let scanned = app
        .wait_until(&token, &id, |d| {
            d["computationStatus"]["accommodations"] == json!("failed")
        })
        .await;
    assert!(
        scanned["unavailable"]["accommodations"]
            .as_str()
            .is_some_and(|r| r.contains("Overpass")),
        "{scanned}"
    );
    let bad_radius = trip
        .call(
            Method::POST,
            "/trips/{id}/accommodations/scan",
            "/accommodations/scan",
            None,
            Some(&json!({"radiusKm": 40})),
        )
        .await;
    assert_eq!(bad_radius.status, StatusCode::UNPROCESSABLE_ENTITY);

    // A place to sleep entered by hand moves the day's end to the nearest route point.
    let v = scanned["version"].as_u64().expect("v");
    let second = &scanned["stages"][1];
    let manual = trip
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/accommodations/manual",
            &format!("/stages/{}/accommodations/manual", second["stageId"].as_str().expect("id")),
            Some(&format!("\"{v}\"")),
            Some(&json!({"name": "Chez Anne", "lat": second["endPoint"]["lat"], "lon": second["endPoint"]["lon"], "priceTotal": 60})),
        )
        .await;
    assert_eq!(manual.status, StatusCode::OK, "{}", manual.body);
    assert_eq!(
        manual.body["stages"][1]["selectedAccommodation"]["name"],
        json!("Chez Anne")
    );
    let gpx = trip
        .call(Method::GET, "/trips/{id}.gpx", ".gpx", None, None)
        .await;
    assert!(String::from_utf8_lossy(&gpx.raw).contains("Chez Anne"));

    // The day in full.
    let stage = trip
        .call(
            Method::GET,
            "/trips/{id}/stages/{stageId}/detail",
            &format!("/stages/{day1}/detail"),
            None,
            None,
        )
        .await;
    assert_eq!(stage.status, StatusCode::OK);
    assert_eq!(stage.body["stageId"], json!(day1));
}

async fn a_locked_trip_refuses_day_edits_and_detours(app: TestApp) {
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let today = chrono::Utc::now().date_naive().to_string();
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "startDate": today}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    let day1 = ids(&detail)[0].clone();
    let v = detail["version"].as_u64().expect("v");
    let edit = app
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}",
            &format!("/trips/{id}/stages/{day1}"),
            Some(&token),
            &[("if-match", &format!("\"{v}\""))],
            Some(&json!({"label": "too late"})),
        )
        .await;
    assert_eq!(edit.status, StatusCode::LOCKED);
    let detour = app
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/trips/{id}/stages/{day1}/poi-waypoint"),
            Some(&token),
            &[],
            Some(&json!({"waypointLat": 45.0, "waypointLon": 6.0})),
        )
        .await;
    assert_eq!(detour.status, StatusCode::LOCKED);
}

async fn a_trip_is_duplicated_once_per_key_with_its_days_and_without_its_link(app: TestApp) {
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "title": "Vercors", "maxDistancePerDay": 60}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let trip = Trip {
        app: &app,
        token: token.clone(),
        id: id.clone(),
    };
    let before = app.wait_until(&token, &id, analysed).await;
    let version = before["version"].as_u64().expect("version");
    let day1 = ids(&before)[0].clone();
    let labelled = trip
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}",
            &format!("/stages/{day1}"),
            Some(&format!("\"{version}\"")),
            Some(&json!({"label": "Into the hills"})),
        )
        .await;
    assert_eq!(labelled.status, StatusCode::OK, "{}", labelled.body);
    let original = app.wait_until(&token, &id, analysed).await;
    let shared = trip
        .call(Method::POST, "/trips/{id}/share", "/share", None, None)
        .await;
    assert_eq!(shared.status, StatusCode::CREATED);

    let duplicate = |token: String, trip_id: String, key: Option<String>| {
        let app = &app;
        async move {
            let headers: Vec<(&str, &str)> = key
                .as_deref()
                .map(|k| ("idempotency-key", k))
                .into_iter()
                .collect();
            app.call(
                Method::POST,
                "/trips/{id}/duplicate",
                &format!("/trips/{trip_id}/duplicate"),
                Some(&token),
                &headers,
                None,
            )
            .await
        }
    };
    let no_key = duplicate(token.clone(), id.clone(), None).await;
    assert_eq!(no_key.status, StatusCode::BAD_REQUEST);
    assert!(
        no_key.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("Idempotency-Key")),
        "{}",
        no_key.body
    );

    let key = uuid::Uuid::now_v7().to_string();
    let first = duplicate(token.clone(), id.clone(), Some(key.clone())).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let copy_id = first.body["id"].as_str().expect("copy id").to_owned();
    assert_ne!(copy_id, id);
    assert_eq!(
        first.header("location"),
        Some(format!("/trips/{copy_id}").as_str())
    );
    let again = duplicate(token.clone(), id.clone(), Some(key.clone())).await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(
        again.body["id"],
        json!(copy_id),
        "a retry answers the same copy"
    );
    assert_eq!(again.header("idempotent-replayed"), Some("true"));

    // The same key for another trip is refused; a stranger cannot copy this trip.
    let other = app
        .create_trip(&token, &json!({"sourceUrl": fixtures.url("/route.gpx")}))
        .await;
    let other_id = other.body["id"].as_str().expect("id").to_owned();
    let reused = duplicate(token.clone(), other_id, Some(key.clone())).await;
    assert_eq!(reused.status, StatusCode::CONFLICT);
    let stranger = app.user().await;
    let foreign = duplicate(stranger, id.clone(), Some(uuid::Uuid::now_v7().to_string())).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);

    // The copy: the same days under new ids, the rider's label, version 1, no public link.
    let copy = app.detail(&token, &copy_id).await.body;
    assert_eq!(copy["partial"], json!(false), "{copy}");
    assert_eq!(copy["version"], json!(1));
    assert_eq!(copy["title"], json!("Vercors (copy)"));
    let (copied, kept) = (ids(&copy), ids(&original));
    assert_eq!(copied.len(), kept.len());
    assert!(copied.iter().all(|c| !kept.contains(c)), "new day ids");
    assert_eq!(copy["stages"][0]["label"], json!("Into the hills"));
    let days = |d: &Value| -> Vec<Value> {
        d["stages"]
            .as_array()
            .expect("days")
            .iter()
            .map(|s| json!([s["distance"], s["startLabel"], s["endLabel"]]))
            .collect()
    };
    assert_eq!(days(&copy), days(&original));
    let copy_trip = Trip {
        app: &app,
        token: token.clone(),
        id: copy_id.clone(),
    };
    let link = copy_trip
        .call(Method::GET, "/trips/{id}/share", "/share", None, None)
        .await;
    assert_eq!(link.status, StatusCode::NOT_FOUND, "the link is not copied");

    // Editing the copy leaves the original alone; the copy outlives the original.
    let copy_day1 = copied[0].clone();
    let edited = copy_trip
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}",
            &format!("/stages/{copy_day1}"),
            Some("\"1\""),
            Some(&json!({"label": "Variant"})),
        )
        .await;
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    let unchanged = app.detail(&token, &id).await.body;
    assert_eq!(unchanged["stages"][0]["label"], json!("Into the hills"));
    let deleted = trip
        .call(Method::DELETE, "/trips/{id}", "", None, None)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let gpx = app
        .call(
            Method::GET,
            "/trips/{id}.gpx",
            &format!("/trips/{copy_id}.gpx"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(gpx.status, StatusCode::OK);
    let history = copy_trip
        .call(Method::GET, "/trips/{id}/history", "/history", None, None)
        .await;
    assert_eq!(
        history.body["items"][0]["type"],
        json!("TripDuplicated"),
        "{}",
        history.body
    );
}

/// Issue 23: the rules a rider met on the page, kept by the trip itself: riding days keep the
/// route's order, a rest day is spent where the day before it ends, merging says which way,
/// and a past version comes back with its own map, as one command.
async fn day_order_merges_and_restoring_a_past_version(app: TestApp) {
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": fixtures.url("/route.gpx"), "maxDistancePerDay": 60}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let trip = Trip {
        app: &app,
        token: token.clone(),
        id: id.clone(),
    };
    let before = app.wait_until(&token, &id, analysed).await;
    let v0 = before["version"].as_u64().expect("version");
    let days = ids(&before);
    assert!(days.len() >= 4, "{before}");
    let tag = |v: u64| format!("\"{v}\"");

    // A riding day moved past another is refused at the door, naming the rule.
    let moved = trip
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}/move",
            &format!("/stages/{}/move", days[0]),
            Some(&tag(v0)),
            Some(&json!({"toIndex": 2})),
        )
        .await;
    assert_eq!(
        moved.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        moved.body
    );
    assert!(
        moved.body.to_string().contains("only a rest day moves"),
        "{}",
        moved.body
    );

    // A rest day after day 1, moved to the end: it is spent where the last day ends.
    let rest = trip
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/rest-day",
            &format!("/stages/{}/rest-day", days[0]),
            Some(&tag(v0)),
            None,
        )
        .await;
    assert_eq!(rest.status, StatusCode::OK, "{}", rest.body);
    let rest_id = rest.body["stages"][1]["stageId"]
        .as_str()
        .expect("rest")
        .to_owned();
    let last = rest.body["stages"].as_array().expect("days").len() - 1;
    let to_end = trip
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}/move",
            &format!("/stages/{rest_id}/move"),
            Some(&tag(v0 + 1)),
            Some(&json!({"toIndex": last})),
        )
        .await;
    assert_eq!(to_end.status, StatusCode::OK, "{}", to_end.body);
    let stages = to_end.body["stages"].as_array().expect("days").clone();
    let (rest_day, ride) = (&stages[last], &stages[last - 1]);
    assert_eq!(rest_day["stageId"], json!(rest_id));
    assert_eq!(
        rest_day["startPoint"], ride["endPoint"],
        "spent where the day before ends"
    );
    assert_eq!(rest_day["startLabel"], ride["endLabel"]);

    // Merge day 2 into the next one: day 3 now starts where day 2 started.
    let v = to_end.body["version"].as_u64().expect("v");
    let merged = trip
        .call(
            Method::DELETE,
            "/trips/{id}/stages/{stageId}",
            &format!("/stages/{}?mergeInto=next", days[1]),
            Some(&tag(v)),
            None,
        )
        .await;
    assert_eq!(merged.status, StatusCode::OK, "{}", merged.body);
    let after: Vec<String> = ids(&merged.body);
    assert!(!after.contains(&days[1]));
    for axis in ["lat", "lon"] {
        assert_eq!(
            merged.body["stages"][1]["startPoint"][axis], before["stages"][1]["startPoint"][axis],
            "the next day took the merged day's stretch"
        );
    }
    assert_eq!(merged.body["stages"][1]["stageId"], json!(days[2]));
    let wrong = trip
        .call(
            Method::DELETE,
            "/trips/{id}/stages/{stageId}",
            &format!("/stages/{}?mergeInto=sideways", days[2]),
            Some(&tag(v + 1)),
            None,
        )
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.body);

    // The first version comes back, with its own map, in one step.
    let v = v + 1;
    let old_route = trip
        .call(
            Method::GET,
            "/trips/{id}/route",
            &format!("/route?version={v0}"),
            None,
            None,
        )
        .await;
    assert_eq!(old_route.status, StatusCode::OK);
    assert_eq!(
        old_route.body["days"].as_array().map(Vec::len),
        Some(days.len()),
        "the past version's own lines"
    );
    let restored = trip
        .call(
            Method::POST,
            "/trips/{id}/restore",
            "/restore",
            Some(&tag(v)),
            Some(&json!({"version": v0})),
        )
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.body);
    assert_eq!(
        restored.body["version"],
        json!(v + 1),
        "restoring moves the version"
    );
    assert_eq!(ids(&restored.body), days, "the past days are back");
    let history = trip
        .call(Method::GET, "/trips/{id}/history", "/history", None, None)
        .await;
    assert!(
        history
            .body
            .to_string()
            .contains(&format!("Version {v0} restored")),
        "{}",
        history.body
    );
    app.wait_until(&token, &id, analysed).await;
}

/// A route of two recorded pieces 3 km apart (a GPX with two `<trkseg>`s and the stretch
/// between them missing): a break, not riding.
fn two_pieces_gpx() -> String {
    let gpx = fixtures::route_gpx(60.0, 50.0);
    let mut out = Vec::new();
    let mut point = 0;
    for line in gpx.lines() {
        if line.trim_start().starts_with("<trkpt") {
            point += 1;
            if (600..660).contains(&point) {
                continue;
            }
            if point == 660 {
                out.push(" </trkseg><trkseg>");
            }
        }
        out.push(line);
    }
    out.join("\n")
}

/// `GET /route` cuts a day at the route's breaks into `pieces` (a map must not draw the jump
/// as road), keeps `points` whole for older readers, and the day's profile ends at the day's
/// ridden length, the jump counting no km.
async fn the_route_lines_are_cut_at_the_routes_breaks(app: TestApp) {
    let token = app.user().await;
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(two_pieces_gpx().into_bytes()).file_name("two.gpx"),
        )
        .text("settings", json!({"maxDistancePerDay": 80}).to_string());
    let response = app
        .client
        .post(format!("{}/trips/gpx-upload", app.base))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .await
        .expect("upload");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let id = response.json::<Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let detail = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    let lines = app
        .call(
            Method::GET,
            "/trips/{id}/route",
            &format!("/trips/{id}/route"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert_eq!(lines.status, StatusCode::OK, "{}", lines.body);
    let days = lines.body["days"].as_array().expect("days");
    let counts: Vec<usize> = days
        .iter()
        .map(|d| d["pieces"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(
        counts.iter().filter(|&&n| n == 2).count(),
        1,
        "one day spans the break: {counts:?}"
    );
    assert!(counts.iter().all(|&n| n == 1 || n == 2), "{counts:?}");
    let (d, day) = days
        .iter()
        .enumerate()
        .find(|(_, d)| d["pieces"].as_array().map_or(0, Vec::len) == 2)
        .expect("the day with the break");
    let pieces = day["pieces"].as_array().expect("pieces");
    let end = pieces[0].as_array().and_then(|p| p.last()).expect("an end");
    let start = pieces[1]
        .as_array()
        .and_then(|p| p.first())
        .expect("a start");
    let km = |a: &Value, b: &Value| {
        let (la, lo) = (a[0].as_f64().unwrap_or(0.0), a[1].as_f64().unwrap_or(0.0));
        let (lb, ob) = (b[0].as_f64().unwrap_or(0.0), b[1].as_f64().unwrap_or(0.0));
        let dy = (lb - la) * 111.2;
        let dx = (ob - lo) * 111.2 * la.to_radians().cos();
        (dx * dx + dy * dy).sqrt()
    };
    assert!(
        km(end, start) > 2.0,
        "the pieces part at the jump: {end} {start}"
    );
    let points = day["points"].as_array().map_or(0, Vec::len);
    let in_pieces: usize = pieces
        .iter()
        .map(|p| p.as_array().map_or(0, Vec::len))
        .sum();
    assert!(points >= 2 && in_pieces >= 4, "{points} {in_pieces}");
    let ridden = detail["stages"][d]["distance"].as_f64().expect("km");
    let profile_end = day["profile"]
        .as_array()
        .and_then(|p| p.last())
        .and_then(|s| s[0].as_f64())
        .expect("a profile");
    assert!(
        (profile_end - ridden).abs() < 0.5,
        "the profile runs to the day's own length: {profile_end} vs {ridden}"
    );
}

etappe_tests::on_both_backends!(
    the_route_lines_are_cut_at_the_routes_breaks,
    day_order_merges_and_restoring_a_past_version,
    the_days_are_edited_with_stable_ids_and_guards,
    a_locked_trip_refuses_day_edits_and_detours,
    a_trip_is_duplicated_once_per_key_with_its_days_and_without_its_link,
);
