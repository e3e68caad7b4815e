//! What an edit keeps, end to end on a real Valhalla: a detour belongs to its point on the
//! route, so a bed that moves a cut past it carries it to the day that now rides it (and the
//! answer says so); an edit that would remove a detour the rider made asks first — REST with
//! `Prefer: handling=strict`, MCP with a confirmation token — and, once confirmed, names it.

use etappe_route::gpx::TrackPoint;
use etappe_tests::valhalla::Valhalla;
use etappe_tests::{Backend, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::real_routes::{
    app_with, day_points, distance_to_line, place, settled, stage_ids, valhalla,
    waypoint_near_a_road,
};

const BALZERS: (f64, f64) = (47.0666, 9.5035);
const VADUZ: (f64, f64) = (47.1410, 9.5209);
const RUGGELL: (f64, f64) = (47.2380, 9.5254);

/// A three-day trip from Balzers by Vaduz to Ruggell, its days analysed.
async fn three_days(app: &TestApp, token: &str) -> (String, Value) {
    let created = app
        .create_trip(
            token,
            &json!({"plan": {"from": place(BALZERS), "via": [place(VADUZ)], "to": place(RUGGELL)},
                "title": "Kept", "days": 3}),
        )
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = settled(app, token, &id).await;
    assert_eq!(stage_ids(&detail).len(), 3, "{detail}");
    (id, detail)
}

/// Detours day `n` (0-based) through a road a few hundred metres off it; answers the point
/// and the trip once the detour is in and analysed.
async fn detour(
    app: &TestApp,
    engine: &Valhalla,
    token: &str,
    id: &str,
    n: usize,
) -> ((f64, f64), Value) {
    let detail = app.detail(token, id).await.body;
    let stage = stage_ids(&detail)[n].clone();
    let points = day_points(app, token, id, &stage).await;
    let (lat, lon) = waypoint_near_a_road(engine, &points).await;
    let asked = app
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/poi-waypoint",
            &format!("/trips/{id}/stages/{stage}/poi-waypoint"),
            Some(token),
            &[],
            Some(&json!({"waypointLat": lat, "waypointLon": lon})),
        )
        .await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
    let after = app
        .wait_until(token, id, |d| {
            !d["stages"][n]["detour"].is_null() && d["partial"] == false
        })
        .await;
    ((lat, lon), after)
}

fn total(detail: &Value) -> f64 {
    detail["totalDistance"].as_f64().expect("km")
}

fn passes(points: &[TrackPoint], (lat, lon): (f64, f64)) -> f64 {
    points
        .iter()
        .map(|p| {
            distance_to_line(
                p,
                &[TrackPoint {
                    lat,
                    lon,
                    ele: None,
                }],
            )
        })
        .fold(f64::INFINITY, f64::min)
}

pub(super) async fn a_bed_past_a_detour_carries_it_to_the_day_that_rides_it(
    app: TestApp,
    engine: &Valhalla,
) {
    let token = app.user().await;
    let (id, _) = three_days(&app, &token).await;
    let (point, before) = detour(&app, engine, &token, &id, 1).await;
    let ids = stage_ids(&before);
    // A bed of the rider's own at 85 % of day 2, well past the detour (whose spur leaves and
    // rejoins within 1.5 % of the day around the point nearest it, at 30–70 % of the day).
    let day2 = day_points(&app, &token, &id, &ids[1]).await;
    let own2: Vec<TrackPoint> = day2.clone();
    let bed = own2[own2.len() * 85 / 100];
    let version = before["version"].as_u64().expect("version");
    let chosen = app
        .call(
            Method::POST,
            "/trips/{id}/stages/{stageId}/accommodations/manual",
            &format!("/trips/{id}/stages/{}/accommodations/manual", ids[0]),
            Some(&token),
            &[("if-match", &format!("\"{version}\""))],
            Some(&json!({"name": "Gasthof am Weg", "lat": bed.lat, "lon": bed.lon})),
        )
        .await;
    assert_eq!(chosen.status, StatusCode::OK, "{}", chosen.body);
    let said = &chosen.body["alsoChanged"];
    assert_eq!(said[0]["kind"], "detour_moved", "{said}");
    assert_eq!(said[0]["removedPersonsWork"], false);
    assert!(
        said[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("day 2 moves to day 1")),
        "{said}"
    );
    let days = &chosen.body["stages"];
    assert!(!days[0]["detour"].is_null(), "day 1 rides the detour now");
    assert!(days[1]["detour"].is_null());
    let kept_km = (total(&chosen.body) - total(&before)).abs();
    assert!(
        kept_km < 0.05,
        "the trip keeps the detour's distance: {} → {} km",
        total(&before),
        total(&chosen.body)
    );
    // Day 1's file rides through the point; its length is what the day says.
    let day1 = day_points(&app, &token, &id, &ids[0]).await;
    let off = passes(&day1, point);
    assert!(off < 30.0, "day 1 passes the detour's point ({off:.0} m)");
    let ridden_km: f64 = day1
        .windows(2)
        .map(|w| distance_to_line(&w[0], &[w[1]]))
        .sum::<f64>()
        / 1000.0;
    let claimed = days[0]["distance"].as_f64().expect("km");
    eprintln!(
        "bed past the detour: {} · trip {:.2} → {:.2} km · day 1 says {claimed:.2} km, its file rides {ridden_km:.2} km, passes the point at {off:.0} m",
        said[0]["message"],
        total(&before),
        total(&chosen.body)
    );
    assert!(
        (ridden_km - claimed).abs() < 0.05 * claimed,
        "day 1's file rides {ridden_km:.2} km, the day says {claimed:.2}"
    );
    // The history says it in the edit's own line.
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
    let line = history.body["items"]
        .as_array()
        .or(history.body.as_array())
        .and_then(|h| h.iter().rev().find(|e| e["type"] == "StagesEdited"))
        .map(|e| e["summary"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    assert!(line.contains("moves to day 1"), "{}", history.body);
}

pub(super) async fn removing_a_detour_the_rider_made_is_asked_first_and_named(
    app: TestApp,
    engine: &Valhalla,
) {
    let token = app.user().await;
    let (id, _) = three_days(&app, &token).await;
    detour(&app, engine, &token, &id, 0).await;
    let (_, before) = detour(&app, engine, &token, &id, 1).await;
    let ids = stage_ids(&before);
    let version = before["version"].as_u64().expect("version");

    // REST, asking first: nothing written, the detour named.
    let asked = app
        .call(
            Method::DELETE,
            "/trips/{id}/stages/{stageId}",
            &format!("/trips/{id}/stages/{}", ids[1]),
            Some(&token),
            &[
                ("if-match", &format!("\"{version}\"")),
                ("prefer", "handling=strict"),
            ],
            None,
        )
        .await;
    assert_eq!(
        asked.status,
        StatusCode::PRECONDITION_REQUIRED,
        "{}",
        asked.body
    );
    assert_eq!(asked.body["code"], "confirmation_required");
    let detail = asked.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("detour of day 2 is removed"), "{detail}");
    let unchanged = app.detail(&token, &id).await.body;
    assert_eq!(unchanged["version"], before["version"]);
    assert_eq!(unchanged["stages"], before["stages"], "nothing written");

    // MCP: the first call answers the impact and a token; the second does it and says it.
    let arguments =
        json!({"tripId": id, "action": "delete", "stageId": ids[1], "version": version});
    let first = app
        .mcp_raw(
            &token,
            "tools/call",
            json!({"name": "edit_stages", "arguments": arguments}),
        )
        .await;
    let challenge = &first["structuredContent"];
    assert_eq!(challenge["confirmationRequired"], true, "{first}");
    assert!(
        challenge["impact"]["change"]
            .as_str()
            .is_some_and(|c| c.contains("detour of day 2")),
        "{challenge}"
    );
    let mut confirmed = arguments.clone();
    confirmed["confirmationToken"] = challenge["confirmationToken"].clone();
    let done = app
        .mcp_raw(
            &token,
            "tools/call",
            json!({"name": "edit_stages", "arguments": confirmed}),
        )
        .await;
    let answer = &done["structuredContent"];
    assert_eq!(answer["version"], version + 1, "{done}");
    assert!(
        answer["alsoChanged"][0]
            .as_str()
            .is_some_and(|s| s.contains("detour of day 2 is removed")),
        "{answer}"
    );
    assert!(
        answer["nextAction"]
            .as_str()
            .is_some_and(|s| s.starts_with("Tell the user")),
        "{answer}"
    );
    let after = app.detail(&token, &id).await.body;
    assert_eq!(stage_ids(&after).len(), 2);
    assert!(
        !after["stages"][0]["detour"].is_null(),
        "day 1 keeps its own"
    );
    // An edit that loses nothing is not asked, even with the preference.
    let relabel = app
        .call(
            Method::PATCH,
            "/trips/{id}/stages/{stageId}",
            &format!("/trips/{id}/stages/{}", ids[0]),
            Some(&token),
            &[
                ("if-match", &format!("\"{}\"", version + 1)),
                ("prefer", "handling=strict"),
            ],
            Some(&json!({"label": "Along the Rhine"})),
        )
        .await;
    assert_eq!(relabel.status, StatusCode::OK, "{}", relabel.body);
    assert!(relabel.body.get("alsoChanged").is_none());
}

/// The structured answer of an MCP tool call.
async fn tool(app: &TestApp, token: &str, name: &str, arguments: Value) -> Value {
    let answer = app
        .mcp_raw(
            token,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await;
    answer["structuredContent"].clone()
}

pub(super) async fn a_new_route_that_fails_keeps_the_days_and_names_the_place(
    app: TestApp,
    _engine: &Valhalla,
) {
    let token = app.user().await;
    let (id, before) = three_days(&app, &token).await;
    let version = before["version"].as_u64().expect("version");
    // Through Zürich, which the engine's map does not reach. Nobody edited these days: the
    // change goes through without a question.
    let changed = tool(
        &app,
        &token,
        "update_trip_settings",
        json!({"id": id, "version": version, "via": [{"lat": 47.37, "lon": 8.54}]}),
    )
    .await;
    assert_eq!(changed["version"], version + 1, "{changed}");
    let held = changed["version"].as_u64().expect("version");
    let after = app.wait_until(&token, &id, |d| d["partial"] == false).await;
    assert_eq!(after["status"], "ready", "{after}");
    assert_eq!(
        stage_ids(&after),
        stage_ids(&before),
        "the days of version {version} are back"
    );
    assert_eq!(
        after["plan"], before["plan"],
        "with the plan they belong to"
    );
    let notice = after["notice"]
        .as_str()
        .expect("the failure said beside the days");
    assert!(
        notice.contains("47.3700, 8.5400") && notice.contains("are kept"),
        "{notice}"
    );
    let read = tool(&app, &token, "get_trip", json!({"id": id})).await;
    assert!(
        read["nextAction"]
            .as_str()
            .is_some_and(|n| n.starts_with("Tell the user:")),
        "{read}"
    );
    // The plan is corrected in place, with the version the agent held (only Etappe's work
    // came after it): the place it names is replaced, and the trip is routed again.
    let fixed = tool(
        &app,
        &token,
        "update_trip_settings",
        json!({"id": id, "version": held, "via": [{"lat": 47.1658, "lon": 9.5097}], "to": "47.2380,9.5254"}),
    )
    .await;
    assert_eq!(fixed["version"], held + 2, "{fixed}");
    let routed = app.wait_until(&token, &id, |d| d["partial"] == false).await;
    assert_eq!(routed["status"], "ready", "{routed}");
    assert!(
        routed.get("notice").is_none(),
        "a new change ends the notice"
    );
    assert_eq!(
        routed["plan"]["via"][0]["lat"], 47.1658,
        "through Schaan now: {routed}"
    );
}

pub(super) async fn a_failed_trip_is_removed_in_one_call(app: TestApp, _engine: &Valhalla) {
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"plan": {"from": place(VADUZ), "to": {"lat": 47.37, "lon": 8.54}}}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let failed = settled(&app, &token, &id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let deleted = tool(&app, &token, "delete_trip", json!({"id": id})).await;
    assert!(deleted.get("confirmationToken").is_none(), "{deleted}");
    assert_eq!(
        app.detail(&token, &id).await.status,
        StatusCode::NOT_FOUND,
        "gone in one call: nothing could be lost"
    );
}

macro_rules! on_both_backends {
    ($($name:ident => $scenario:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;

                async fn run(backend: Backend) {
                    let Some(engine) = valhalla().await else { return };
                    let Some(app) = app_with(backend, &engine, |_| {}).await else {
                        return;
                    };
                    $scenario(app, &engine).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    run(Backend::Sqlite).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    run(Backend::Postgres).await;
                }
            }
        )*
    };
}

on_both_backends!(
    detour_follows_its_point => a_bed_past_a_detour_carries_it_to_the_day_that_rides_it,
    detour_removal_is_asked => removing_a_detour_the_rider_made_is_asked_first_and_named,
    failed_route_keeps_days => a_new_route_that_fails_keeps_the_days_and_names_the_place,
    failed_trip_removed => a_failed_trip_is_removed_in_one_call,
);
