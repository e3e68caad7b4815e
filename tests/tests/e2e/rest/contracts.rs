//! Snapshots of the two contracts a reviewer must see change: the event JSON the store keeps
//! (a shape that moves needs an upcaster, so a diff here is a decision) and the problem+json
//! bodies clients act on. Ids, times and codes are replaced by placeholders so the snapshots
//! hold only what is stable; workers' events are grouped by type because jobs finish in any
//! order. Review a change with `cargo insta review`, or accept it with
//! `INSTA_UPDATE=always cargo test -p etappe-tests --test e2e rest::contracts::`.

use std::collections::BTreeMap;

use etappe_domain::ids::TripId;
use etappe_tests::{Backend, TestApp, fixtures};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// `value` with every UUID and timestamp replaced by a placeholder, and the given literal
/// strings by their names.
fn stable(value: &Value, names: &[(&str, &str)]) -> Value {
    match value {
        Value::String(s) => {
            if let Some((_, name)) = names.iter().find(|(literal, _)| literal == s) {
                Value::String((*name).to_owned())
            } else if uuid::Uuid::parse_str(s).is_ok() {
                Value::String("[uuid]".into())
            } else if chrono::DateTime::parse_from_rfc3339(s).is_ok() {
                Value::String("[time]".into())
            } else {
                Value::String(uuid_free(s))
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| stable(v, names)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), stable(v, names)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `s` with the UUIDs inside it (in a path or a message) replaced.
fn uuid_free(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if rest.len() >= 36
            && rest.is_char_boundary(36)
            && uuid::Uuid::parse_str(&rest[..36]).is_ok()
        {
            out.push_str("[uuid]");
            rest = &rest[36..];
        } else {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_events_of_a_journey_keep_their_stored_shape() {
    let Some(app) = TestApp::spawn(Backend::Sqlite).await else {
        return;
    };
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let source = fixtures.url("/route.gpx");
    let created = app
        .create_trip(
            &token,
            // Undated: the calendar's alerts would change the snapshot with the day it runs.
            &json!({"sourceUrl": source, "title": "Contract", "maxDistancePerDay": 60}),
        )
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = app
        .wait_until(&token, &id, |d| {
            d["partial"] == json!(false) && d["stages"].as_array().is_some_and(|s| !s.is_empty())
        })
        .await;
    let version = detail["version"].as_u64().expect("version");
    let patched = app
        .patch(
            &token,
            &id,
            Some(&format!("\"{version}\"")),
            &json!({"title": "Contract, renamed"}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    let path = format!("/trips/{id}/share");
    for method in [Method::POST, Method::DELETE] {
        let answer = app
            .call(method, "/trips/{id}/share", &path, Some(&token), &[], None)
            .await;
        assert!(answer.status.is_success(), "{}", answer.body);
    }

    let trip: TripId = id.parse().expect("trip id");
    let events = app
        .state
        .work()
        .store
        .read_stream(&trip.stream_id())
        .await
        .expect("the trip's events");
    let names = [(source.as_str(), "[sourceUrl]")];
    // A share code is random: named by what it is.
    let codes: Vec<String> = events
        .iter()
        .filter_map(|e| e.data["code"].as_str().map(str::to_owned))
        .collect();
    let mut names = names.to_vec();
    names.extend(codes.iter().map(|c| (c.as_str(), "[shareCode]")));
    let mut by_type: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for event in &events {
        by_type
            .entry(format!("{} v{}", event.event_type, event.schema_version))
            .or_default()
            .push(stable(&event.data, &names));
    }
    for same in by_type.values_mut() {
        same.sort_by_key(Value::to_string);
        same.dedup();
    }
    committed_snapshot(|| insta::assert_json_snapshot!("contracts__journey_events", by_type));
}

/// A request that is refused: its name, method, OpenAPI path, path, token, headers and body.
type Case<'a> = (
    &'a str,
    Method,
    &'a str,
    String,
    Option<&'a str>,
    Vec<(&'a str, &'a str)>,
    Option<Value>,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn problem_bodies_keep_their_shape() {
    let Some(app) = TestApp::spawn(Backend::Sqlite).await else {
        return;
    };
    let token = app.user().await;
    let unknown = format!("/trips/{}", uuid::Uuid::now_v7());
    let created = app
        .create_trip(&token, &json!({"sourceUrl": etappe_tests::UNFETCHED_GPX}))
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let trip = format!("/trips/{id}");

    let mut problems = BTreeMap::new();
    let cases: Vec<Case<'_>> = vec![
        (
            "unauthenticated",
            Method::GET,
            "/trips",
            "/trips".into(),
            None,
            vec![],
            None,
        ),
        (
            "not_found",
            Method::GET,
            "/trips/{id}",
            unknown,
            Some(&token),
            vec![],
            None,
        ),
        (
            "missing_source",
            Method::POST,
            "/trips",
            "/trips".into(),
            Some(&token),
            vec![],
            Some(json!({})),
        ),
        (
            "bad_settings",
            Method::POST,
            "/trips",
            "/trips".into(),
            Some(&token),
            vec![],
            Some(
                json!({"sourceUrl": "ftp://example.invalid/a.gpx", "maxDistancePerDay": 5, "colour": "red"}),
            ),
        ),
        (
            "stale_version",
            Method::PATCH,
            "/trips/{id}",
            trip.clone(),
            Some(&token),
            vec![("if-match", "\"99\"")],
            Some(json!({"title": "x"})),
        ),
        (
            "weak_if_match",
            Method::PATCH,
            "/trips/{id}",
            trip.clone(),
            Some(&token),
            vec![("if-match", "W/\"1\"")],
            Some(json!({"title": "x"})),
        ),
    ];
    for (name, method, template, path, bearer, headers, body) in cases {
        let answer = app
            .call(method, template, &path, bearer, &headers, body.as_ref())
            .await;
        problems.insert(
            name,
            json!({
                "status": answer.status.as_u16(),
                "contentType": answer.header("content-type"),
                "body": stable(&answer.body, &[]),
            }),
        );
    }
    // Not in the document by definition, so asked without its check.
    let refused = app
        .client
        .delete(format!("{}/trips", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("DELETE /trips");
    let status = refused.status().as_u16();
    let allow = refused
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body: Value = refused.json().await.expect("problem");
    problems.insert(
        "method_not_allowed",
        json!({"status": status, "allow": allow, "body": stable(&body, &[])}),
    );
    committed_snapshot(|| insta::assert_json_snapshot!("contracts__problem_bodies", problems));
}

/// Runs a snapshot assertion against the committed snapshots in `tests/tests/snapshots`, named
/// `contracts__<name>.snap` as when this file was a test binary of its own (insta would
/// otherwise look beside this module, under a name prefixed with its path).
fn committed_snapshot(assertion: impl FnOnce()) {
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
    }, {
        assertion();
    });
}
