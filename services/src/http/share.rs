//! Share links: the owner opens, reads and revokes a trip's public link; anyone with the code
//! reads the trip, its days and its GPX/FIT files without a token. A revoked code answers 404
//! to everyone, exactly like one that never existed.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use etappe_events::trip::ShareLink;
use serde_json::json;

use super::App;
use super::extract::{Caller, PeerAddress, Segments, TripPath};
use super::trips::file_response;
use crate::app::links::base_url;
use crate::app::trips::ExportFormat;
use crate::app::views::PublicTrip;
use crate::app::{AppError, RequestContext};

fn link_body(
    state: &App,
    headers: &HeaderMap,
    link: &ShareLink,
) -> Result<serde_json::Value, AppError> {
    Ok(json!({
        "url": format!("{}/s/{}", base_url(state, headers)?, link.code),
        "shortCode": link.code,
        "createdAt": link.created_at,
    }))
}

/// `GET /trips/{id}/share`: the active link, or 404 when there is none.
pub(super) async fn get(
    State(state): State<App>,
    Caller(principal): Caller,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, AppError> {
    let link = state
        .trips
        .share_link(&principal, trip_id)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(Json(link_body(&state, &headers, &link)?).into_response())
}

/// `POST /trips/{id}/share`: 201 with a new link, 200 with the one already open.
pub(super) async fn create(
    State(state): State<App>,
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
    Ok((status, Json(link_body(&state, &headers, &link)?)).into_response())
}

/// `DELETE /trips/{id}/share`: 204; the code stops resolving for everyone.
pub(super) async fn revoke(
    State(state): State<App>,
    Caller(principal): Caller,
    context: RequestContext,
    TripPath(trip_id): TripPath,
) -> Result<StatusCode, AppError> {
    state.trips.unshare(&principal, trip_id, &context).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Counts an anonymous read of `code` from `visitor`: per address, so one client cannot
/// flood, and per code, so a link passed around cannot either.
async fn admit_visitor(state: &App, visitor: PeerAddress, code: &str) -> Result<(), AppError> {
    let settings = &state.budgets.settings;
    let address = crate::budgets::key_of(&["visitor", &visitor.0.to_string()]);
    state
        .budgets
        .admit(&address, &[settings.share_per_address()])
        .await
        .map_err(AppError::RateLimited)?;
    let code = crate::budgets::key_of(&["code", code]);
    state
        .budgets
        .admit(&code, &[settings.share_per_code()])
        .await
        .map_err(AppError::RateLimited)
}

/// `GET /s/{code}` (the trip), `/s/{code}.gpx`, `/s/{code}.fit`: anonymous.
pub(super) async fn public(
    State(state): State<App>,
    visitor: PeerAddress,
    headers: HeaderMap,
    Segments(raw): Segments<String>,
) -> Result<Response, AppError> {
    let (code, format) = match raw.rsplit_once('.') {
        Some((code, "gpx")) => (code, Some(ExportFormat::Gpx)),
        Some((code, "fit")) => (code, Some(ExportFormat::Fit)),
        _ => (raw.as_str(), None),
    };
    admit_visitor(&state, visitor, code).await?;
    let view = state.trips.shared_view(code).await?;
    match format {
        Some(format) => Ok(file_response(
            state.trips.cached_export(&view, None, format).await?,
            &headers,
        )),
        None => Ok(Json(PublicTrip::of(&view)).into_response()),
    }
}

/// `GET /s/{code}/stages/{stageId}`: one day of a shared trip.
pub(super) async fn public_stage(
    State(state): State<App>,
    visitor: PeerAddress,
    Segments((code, stage)): Segments<(String, String)>,
) -> Result<Response, AppError> {
    admit_visitor(&state, visitor, &code).await?;
    let view = state.trips.shared_view(&code).await?;
    let stage_id = uuid::Uuid::parse_str(&stage).map_err(|_| AppError::NotFound)?;
    let stage = PublicTrip::stage(&view, stage_id).ok_or(AppError::NotFound)?;
    Ok(Json(stage).into_response())
}

/// `GET /s/{code}/route`: the shared trip's lines, anonymous; 304 when unchanged.
pub(super) async fn public_route(
    State(state): State<App>,
    visitor: PeerAddress,
    Segments(code): Segments<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, AppError> {
    admit_visitor(&state, visitor, &code).await?;
    let view = state.trips.shared_view(&code).await?;
    let lines = state.trips.route_lines_of(&view).await?;
    Ok(super::stages::route_response(&lines, &headers))
}
