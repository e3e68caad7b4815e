//! Probes: `/livez` answers while the process runs; `/readyz` only when the database, the
//! queue and a worker do. `/readyz` also reports each third-party upstream's health, without
//! ever failing on one: every upstream is optional (an embedded default stands in, or the
//! feature answers `unavailable`), so taking the API out of rotation for it would only turn
//! a degraded feature into an outage.

use axum::Json;

use super::openapi::answers::HealthSchema;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::App;
use etappe_workers::readiness::{self, Check};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The probes, each declared by its handler's operation.
pub(super) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(live))
        .routes(routes!(ready))
}

/// `GET /livez`.
#[utoipa::path(get, path = "/livez", operation_id = "live", tag = "meta",
    summary = "Liveness", security(()),
    responses((status = 200, description = "The process runs", body = HealthSchema)))]
pub(super) async fn live() -> Json<Value> {
    Json(json!({"status": "live"}))
}

/// `GET /readyz`: 200 when the database answers, the queue answers and at least one worker
/// is alive; else 503 with what is wrong. `upstreams` says how each upstream is.
#[utoipa::path(get, path = "/readyz", operation_id = "ready", tag = "meta",
    summary = "Readiness: the database, the queue and a worker", security(()),
    responses((status = 200, description = "Ready", body = HealthSchema),
        (status = 503, description = "Not ready, with what is wrong", body = HealthSchema)))]
pub(super) async fn ready(State(state): State<App>) -> (StatusCode, Json<Value>) {
    let database = Check::server("database", state.trips().ping(), |()| "up".to_owned()).await;
    // The work side is asked only of a live database: its worker count is read there.
    let work = if database.passed {
        state.work().readiness().await
    } else {
        Vec::new()
    };
    let checks: Vec<Check> = std::iter::once(database).chain(work).collect();
    let (ready, document) = readiness::document(&checks, &state.work().upstreams.health().await);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(document))
}
