//! Probes: `/livez` answers while the process runs; `/readyz` only when the database does.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::AppState;

/// `GET /livez`.
pub(super) async fn live() -> Json<Value> {
    Json(json!({"status": "live"}))
}

/// `GET /readyz`: 200 when the database answers within two seconds, else 503.
pub(super) async fn ready(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let database = tokio::time::timeout(Duration::from_secs(2), state.trips.ping()).await;
    match database {
        Ok(Ok(())) => (
            StatusCode::OK,
            Json(json!({"status": "ready", "checks": {"database": "up"}})),
        ),
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unready", "checks": {"database": format!("down: {e}")}})),
        ),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unready", "checks": {"database": "down: no answer within 2s"}})),
        ),
    }
}
