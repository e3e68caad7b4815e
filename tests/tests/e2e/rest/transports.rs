//! REST and MCP are sibling transports over one application: a change made through either
//! carries the request's id (`X-Request-Id`, set by the layers every request passes) into the
//! events it appends, and both read the same credential the same way.

use etappe_domain::ids::TripId;
use etappe_tests::{Backend, TestApp, UNFETCHED_GPX};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The correlation ids of the trip's events.
async fn correlation_ids(app: &TestApp, id: &str) -> Vec<Option<uuid::Uuid>> {
    let trip: TripId = id.parse().expect("trip id");
    app.state
        .work()
        .store
        .read_stream(&trip.stream_id())
        .await
        .expect("events")
        .iter()
        .map(|e| e.metadata.correlation_id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_either_transport_carries_the_request_id_into_its_events() {
    let Some(app) = TestApp::spawn(Backend::Sqlite).await else {
        return;
    };
    let token = app.user().await;

    let rest_id = uuid::Uuid::now_v7();
    let created = app
        .client
        .post(format!("{}/trips", app.base))
        .bearer_auth(&token)
        .header("x-request-id", rest_id.to_string())
        .json(&json!({"sourceUrl": UNFETCHED_GPX}))
        .send()
        .await
        .expect("POST /trips");
    assert_eq!(created.status(), StatusCode::ACCEPTED);
    assert_eq!(
        created
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        Some(rest_id.to_string().as_str())
    );
    let body: Value = created.json().await.expect("json");
    let id = body["id"].as_str().expect("id").to_owned();
    let ids = correlation_ids(&app, &id).await;
    assert!(!ids.is_empty());
    assert!(ids.iter().all(|c| *c == Some(rest_id)), "{ids:?}");

    let mcp_id = uuid::Uuid::now_v7();
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_trip", "arguments": {"sourceUrl": "http://127.0.0.1:9/b.gpx"}},
    });
    let answer = app
        .client
        .post(format!("{}/mcp", app.base))
        // The scheme in capitals: every transport reads it without regard to case.
        .header("authorization", format!("BEARER {token}"))
        .header("x-request-id", mcp_id.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(call.to_string())
        .send()
        .await
        .expect("tools/call");
    assert_eq!(answer.status(), StatusCode::OK);
    let body: Value = answer.json().await.expect("json");
    let created = &body["result"]["structuredContent"];
    let id = created["id"].as_str().unwrap_or_else(|| panic!("{body}"));
    let ids = correlation_ids(&app, id).await;
    assert!(!ids.is_empty());
    assert!(ids.iter().all(|c| *c == Some(mcp_id)), "{ids:?}");
}
