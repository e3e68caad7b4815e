//! Share links: the owner opens, reads and revokes a trip's public link; anyone with the code
//! reads the trip, its days and its GPX/FIT files without a token. A revoked code answers 404
//! to everyone, exactly like one that never existed.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use etappe_domain::trip::ShareLink;
use serde_json::json;

use super::App;
use super::extract::Caller;
use super::extract::{PeerAddress, Segments, TripPath};
use super::openapi::answers::*;
use super::openapi::params::*;
use super::trips::file_response;
use crate::problem::Problem;
use etappe_app::AppError;
use etappe_app::confirmation::ConfirmedByRequest;
use etappe_app::exports::ExportFormat;
use etappe_app::links::{admit_visitor, base_url};
use etappe_app::views::PublicTrip;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

fn link_body(
    state: &App,
    headers: &HeaderMap,
    link: &ShareLink,
) -> Result<serde_json::Value, AppError> {
    Ok(json!({
        "url": format!("{}/s/{}", base_url(state, crate::auth::host(headers))?, link.code),
        "shortCode": link.code,
        "createdAt": link.created_at,
    }))
}

/// Share links and the public reads, each declared by its handler's operation.
pub(super) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(get, create, revoke))
        .routes(routes!(public))
        .routes(routes!(public_stage))
        .routes(routes!(public_route))
}

/// `GET /trips/{id}/share`: the active link, or 404 when there is none.
#[utoipa::path(get, path = "/trips/{id}/share", operation_id = "getShareLink", tag = "share",
    summary = "The trip's public link", description = "Scope trips:read. 404 when none is open.",
    params(TripPathParam),
    responses((status = 200, description = "The open link", body = ShareLinkSchema),
        BadRequest, Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn get(
    State(state): State<App>,
    caller: Caller,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, Problem> {
    let link = state
        .trips()
        .share_link(&caller.principal, trip_id)
        .await?
        .ok_or(AppError::NotShared)?;
    Ok(Json(link_body(&state, &headers, &link)?).into_response())
}

/// `POST /trips/{id}/share`: 201 with a new link, 200 with the one already open.
#[utoipa::path(post, path = "/trips/{id}/share", operation_id = "shareTrip", tag = "share",
    summary = "Open a public link",
    description = "Scope trips:write. 201 with a new link, 200 with the one already open.",
    params(TripPathParam),
    responses((status = 201, description = "A new link", body = ShareLinkSchema),
        (status = 200, description = "The link already open", body = ShareLinkSchema),
        BadRequest, Unauthorized, Forbidden, NotFound, BodyTimeout, Conflict, RateLimited))]
pub(super) async fn create(
    State(state): State<App>,
    caller: Caller,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, Problem> {
    let (link, created) = state.trips().share(&caller, trip_id).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(link_body(&state, &headers, &link)?)).into_response())
}

/// `DELETE /trips/{id}/share`: 204; the code stops resolving for everyone.
#[utoipa::path(delete, path = "/trips/{id}/share", operation_id = "unshareTrip", tag = "share",
    summary = "Revoke the public link",
    description = "Scope trips:write. The code stops resolving for everyone.",
    params(TripPathParam),
    responses((status = 204, description = "Revoked"),
        Unauthorized, Forbidden, NotFound, Conflict, RateLimited))]
pub(super) async fn revoke(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
) -> Result<StatusCode, Problem> {
    state
        .trips()
        .unshare(&caller, trip_id, &ConfirmedByRequest)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /s/{code}` (the trip), `/s/{code}.gpx`, `/s/{code}.fit`: anonymous.
#[utoipa::path(get, path = "/s/{code}", operation_id = "readSharedTrip", tag = "share",
    summary = "A shared trip", description = "Anonymous. Without the owner's private details.",
    security(()), params(CodePathParam),
    responses((status = 200, description = "The trip", body = crate::openapi::views::PublicTripSchema),
        NotFound, RateLimited))]
pub(super) async fn public(
    State(state): State<App>,
    visitor: PeerAddress,
    headers: HeaderMap,
    Segments(raw): Segments<String>,
) -> Result<Response, Problem> {
    let (code, format) = match raw.rsplit_once('.') {
        Some((code, "gpx")) => (code, Some(ExportFormat::Gpx)),
        Some((code, "fit")) => (code, Some(ExportFormat::Fit)),
        _ => (raw.as_str(), None),
    };
    admit_visitor(&state, visitor.0, code).await?;
    let view = state.trips().shared_view(code).await?;
    match format {
        Some(format) => Ok(file_response(
            state.exports().cached_export(&view, None, format).await?,
            &headers,
        )),
        None => Ok(Json(PublicTrip::of(&view)).into_response()),
    }
}

/// `GET /s/{code}/stages/{stageId}` (the day), `/s/{code}/stages/{stageId}.gpx`, `.fit`
/// (the day's file, as the owner's `…/export.gpx|.fit`): anonymous.
#[utoipa::path(get, path = "/s/{code}/stages/{stageId}", operation_id = "readSharedStage",
    tag = "share", summary = "One day of a shared trip", description = "Anonymous.",
    security(()), params(CodeStagePathParams),
    responses((status = 200, description = "The day", body = crate::openapi::views::StageSummarySchema),
        NotFound, RateLimited))]
pub(super) async fn public_stage(
    State(state): State<App>,
    visitor: PeerAddress,
    headers: HeaderMap,
    Segments((code, stage)): Segments<(String, String)>,
) -> Result<Response, Problem> {
    let (stage, format) = match stage.rsplit_once('.') {
        Some((stage, "gpx")) => (stage, Some(ExportFormat::Gpx)),
        Some((stage, "fit")) => (stage, Some(ExportFormat::Fit)),
        _ => (stage.as_str(), None),
    };
    admit_visitor(&state, visitor.0, &code).await?;
    let view = state.trips().shared_view(&code).await?;
    let stage_id = uuid::Uuid::parse_str(stage).map_err(|_| AppError::NotFound)?;
    // A day of another trip, or none, is missing here like an unknown code.
    let day = PublicTrip::stage(&view, stage_id).ok_or(AppError::NotFound)?;
    match format {
        Some(format) => Ok(file_response(
            state
                .exports()
                .cached_export(&view, Some(stage_id), format)
                .await?,
            &headers,
        )),
        None => Ok(Json(day).into_response()),
    }
}

/// `GET /s/{code}/route`: the shared trip's lines, anonymous; 304 when unchanged.
#[utoipa::path(get, path = "/s/{code}/route", operation_id = "getSharedRoute", tag = "share",
    summary = "A shared trip's lines", description = "Anonymous. 304 when unchanged.",
    security(()), params(CodePathParam, IfNoneMatchHeader),
    responses((status = 200, description = "The lines", body = crate::openapi::views::RouteLinesSchema,
            headers(("ETag" = String))),
        (status = 304, description = "Unchanged"),
        NotFound, Invalid, RateLimited))]
pub(super) async fn public_route(
    State(state): State<App>,
    visitor: PeerAddress,
    Segments(code): Segments<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, Problem> {
    admit_visitor(&state, visitor.0, &code).await?;
    let view = state.trips().shared_view(&code).await?;
    let lines = state.trips().route_lines_of(&view).await?;
    Ok(super::stages::route_response(&lines, &headers))
}

/// A shared trip's file: anonymous.
macro_rules! shared_file {
    ($name:ident, $path:literal, $id:literal, $media:literal, $summary:literal) => {
        shared_file!($name, $path, $id, $media, $summary, CodePathParam);
    };
    ($name:ident, $path:literal, $id:literal, $media:literal, $summary:literal, $params:ident) => {
        #[utoipa::path(get, path = $path, operation_id = $id, tag = "share", summary = $summary,
            description = "Anonymous. `ETag` names the file.",
            security(()), params($params, IfNoneMatchHeader),
            responses(
                (status = 200, description = "The file (an attachment)", content_type = $media,
                    body = FileSchema, headers(("ETag" = String))),
                (status = 304, description = "Unchanged since the ETag sent"),
                NotFound, Invalid, RateLimited))]
        #[allow(dead_code)]
        pub(super) fn $name() {}
    };
}

// Served by `public` (a suffix on the code); declared apart for the document.
shared_file!(
    public_gpx,
    "/s/{code}.gpx",
    "readSharedGpx",
    "application/gpx+xml",
    "A shared trip as GPX 1.1"
);
shared_file!(
    public_fit,
    "/s/{code}.fit",
    "readSharedFit",
    "application/vnd.ant.fit",
    "A shared trip as a FIT course"
);

// Served by `public_stage` (a suffix on the day's id); declared apart for the document.
shared_file!(
    public_stage_gpx,
    "/s/{code}/stages/{stageId}.gpx",
    "readSharedStageGpx",
    "application/gpx+xml",
    "One day of a shared trip as GPX 1.1",
    CodeStagePathParams
);
shared_file!(
    public_stage_fit,
    "/s/{code}/stages/{stageId}.fit",
    "readSharedStageFit",
    "application/vnd.ant.fit",
    "One day of a shared trip as a FIT course",
    CodeStagePathParams
);
