//! Share links: the owner opens, reads and revokes a trip's public link; anyone with the code
//! reads the trip, its days and its GPX/FIT files without a token. A revoked code answers 404
//! to everyone, exactly like one that never existed.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_events::trip::ShareLink;
use serde_json::json;

use super::AppState;
use super::extract::{Caller, TripPath};
use super::trips::file_response;
use crate::app::trips::ExportFormat;
use crate::app::views::PublicTrip;
use crate::app::{AppError, RequestContext};

/// The base of public links: `ETAPPE_PUBLIC_URL`, else the Host the request came to.
pub(crate) fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    match &state.public_url {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}")
        }
    }
}

fn link_body(state: &AppState, headers: &HeaderMap, link: &ShareLink) -> serde_json::Value {
    json!({
        "url": format!("{}/s/{}", base_url(state, headers), link.code),
        "shortCode": link.code,
        "createdAt": link.created_at,
    })
}

/// `GET /trips/{id}/share`: the active link, or 404 when there is none.
pub(super) async fn get(
    State(state): State<AppState>,
    Caller(principal): Caller,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, AppError> {
    let link = state
        .trips
        .share_link(&principal, trip_id)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(Json(link_body(&state, &headers, &link)).into_response())
}

/// `POST /trips/{id}/share`: 201 with a new link, 200 with the one already open.
pub(super) async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    context: RequestContext,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, AppError> {
    let (link, created) = state.trips.share(&principal, trip_id, &context).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(link_body(&state, &headers, &link))).into_response())
}

/// `DELETE /trips/{id}/share`: 204; the code stops resolving for everyone.
pub(super) async fn revoke(
    State(state): State<AppState>,
    Caller(principal): Caller,
    context: RequestContext,
    TripPath(trip_id): TripPath,
) -> Result<StatusCode, AppError> {
    state.trips.unshare(&principal, trip_id, &context).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /s/{code}` (the trip), `/s/{code}.gpx`, `/s/{code}.fit`: anonymous.
pub(super) async fn public(
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Response, AppError> {
    let (code, format) = match raw.rsplit_once('.') {
        Some((code, "gpx")) => (code, Some(ExportFormat::Gpx)),
        Some((code, "fit")) => (code, Some(ExportFormat::Fit)),
        _ => (raw.as_str(), None),
    };
    let view = state.trips.shared_view(code).await?;
    match format {
        Some(format) => Ok(file_response(
            state.trips.export_view(&view, None, format).await?,
        )),
        None => Ok(Json(PublicTrip::of(&view)).into_response()),
    }
}

/// `GET /s/{code}/stages/{stageId}`: one day of a shared trip.
pub(super) async fn public_stage(
    State(state): State<AppState>,
    Path((code, stage)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let view = state.trips.shared_view(&code).await?;
    let stage_id = uuid::Uuid::parse_str(&stage).map_err(|_| AppError::NotFound)?;
    let stage = PublicTrip::stage(&view, stage_id).ok_or(AppError::NotFound)?;
    Ok(Json(stage).into_response())
}

/// `GET /s/{code}/route`: the shared trip's lines, anonymous; 304 when unchanged.
pub(super) async fn public_route(
    State(state): State<AppState>,
    Path(code): Path<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, AppError> {
    let view = state.trips.shared_view(&code).await?;
    let lines = state.trips.route_lines_of(&view).await?;
    Ok(super::stages::route_response(&lines, &headers))
}
