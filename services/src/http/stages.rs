//! REST handlers for the days: the five edits, choosing where to sleep, scans, waypoint
//! detours, one day's detail and the route's geometry. Each translates HTTP into one call of
//! the day services and back; no rule lives here.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_app::exports::ExportFormat;
use etappe_domain::trip::edits::StageAction;
use uuid::Uuid;

use super::App;
use super::extract::Caller;
use super::extract::{DayEdit, DayPath, EditConditions, OptionalJsonObject, TripPath};
use super::openapi::answers::*;
use super::openapi::inputs::*;
use super::openapi::params::*;
use super::trips::{detail_response, versioned_json};
use crate::problem::Problem;
use etappe_app::AppError;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A trip's days' routes, each declared by its handler's operation.
pub(super) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(add))
        .routes(routes!(update, delete))
        .routes(routes!(detail))
        .routes(routes!(export_stage_gpx))
        .routes(routes!(export_stage_fit))
        .routes(routes!(move_stage))
        .routes(routes!(choose_accommodation))
        .routes(routes!(rest_day))
        .routes(routes!(add_waypoint, remove_detour))
        .routes(routes!(manual_accommodation))
        .routes(routes!(scan))
        .routes(routes!(route))
}

/// `POST /trips/{id}/stages` `{stageId, distance?|endPoint?, label?}`: splits the day
/// `stageId` in two; the new day follows it.
#[utoipa::path(post, path = "/trips/{id}/stages", operation_id = "addStage", tag = "days",
    summary = "Split a day in two",
    description = "Scope trips:write, If-Match. The day `stageId` ends at `distance` km or at the route point nearest `endPoint` (one of them, not both); the new day follows it.",
    params(TripPathParam, IfMatchHeader),
    request_body(content = AddStage, content_type = "application/json"),
    responses(TripEdited, BodyEditRefusals))]
pub(super) async fn add(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    conditions: EditConditions,
    OptionalJsonObject(mut body): OptionalJsonObject,
) -> Result<Response, Problem> {
    let stage_id = match body.remove("stageId") {
        Some(serde_json::Value::String(s)) => {
            Uuid::parse_str(&s).map_err(|_| AppError::StageNotFound)?
        }
        _ => {
            return Err(etappe_domain::trip::InputError::Invalid(vec![
                etappe_domain::trip::FieldError::new(
                    "stageId",
                    "stageId is required: the id of the day to split (the new day follows it)",
                ),
            ])
            .into());
        }
    };
    let day = DayPath(trip_id, stage_id);
    let edit = DayEdit {
        caller,
        day,
        conditions,
        body,
    };
    edit_day(&state, edit, DayChange::Days(StageAction::Add)).await
}

/// `PATCH /trips/{id}/stages/{stageId}`: move the day's end, relabel it.
#[utoipa::path(patch, path = "/trips/{id}/stages/{stageId}", operation_id = "updateStage", tag = "days",
    summary = "Move a day's end, relabel it", description = "Scope trips:write, If-Match.",
    params(StagePathParams, IfMatchHeader),
    request_body(content = UpdateStage, content_type = "application/json"),
    responses(TripEdited, BodyEditRefusals))]
pub(super) async fn update(State(state): State<App>, edit: DayEdit) -> Result<Response, Problem> {
    edit_day(&state, edit, DayChange::Days(StageAction::Update)).await
}

/// `DELETE /trips/{id}/stages/{stageId}[?mergeInto=previous|next]`: the day's route joins
/// the neighbour named (the previous riding day by default; a rest day is simply removed).
#[utoipa::path(
    delete,
    path = "/trips/{id}/stages/{stageId}",
    operation_id = "deleteStage",
    tag = "days",
    summary = "Delete a day (merge it into a neighbour)",
    description = "Scope trips:write, If-Match. A riding day's route joins the previous riding day (`mergeInto=previous`, the default; the first day joins the next) or the next one (`mergeInto=next`); a rest day is removed.",
    params(StagePathParams, IfMatchHeader, MergeIntoQuery),
    responses(
        TripEdited,
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        Stale,
        Invalid,
        Locked,
        PreconditionRequired,
        RateLimited
    )
)]
pub(super) async fn delete(
    State(state): State<App>,
    caller: Caller,
    day: DayPath,
    conditions: EditConditions,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Result<Response, Problem> {
    let action = match query.get("mergeInto").map(String::as_str) {
        None | Some("previous") => StageAction::Delete,
        Some("next") => StageAction::MergeNext,
        Some(other) => {
            return Err(
                AppError::InvalidQuery(vec![etappe_domain::trip::FieldError::new(
                    "mergeInto",
                    format!(
                        "mergeInto must be previous or next; got {}",
                        etappe_domain::text::quote(other)
                    ),
                )])
                .into(),
            );
        }
    };
    let edit = DayEdit {
        caller,
        day,
        conditions,
        body: serde_json::Map::new(),
    };
    edit_day(&state, edit, DayChange::Days(action)).await
}

/// `GET /trips/{id}/stages/{stageId}/detail`.
#[utoipa::path(get, path = "/trips/{id}/stages/{stageId}/detail", operation_id = "getStage", tag = "days",
    summary = "One day", description = "Scope trips:read. `ETag` is the trip's version.",
    params(StagePathParams),
    responses((status = 200, description = "The day", body = crate::openapi::views::StageSummarySchema,
            headers(("ETag" = String, description = "The trip's version"))),
        Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn detail(
    State(state): State<App>,
    caller: Caller,
    DayPath(trip_id, stage_id): DayPath,
) -> Result<Response, Problem> {
    let (version, day) = state
        .trips()
        .stage_detail(&caller.principal, trip_id, stage_id)
        .await?;
    Ok(versioned_json(version, &day)?)
}

/// One day's file in `format`.
async fn export_day(
    state: &App,
    caller: &Caller,
    headers: &HeaderMap,
    DayPath(trip_id, stage_id): DayPath,
    format: ExportFormat,
) -> Result<Response, Problem> {
    Ok(super::trips::file_response(
        state
            .exports()
            .export(&caller.principal, trip_id, Some(stage_id), format)
            .await?,
        headers,
    ))
}

/// What an edit of one day asks.
enum DayChange {
    /// One of the five edits of the days.
    Days(StageAction),
    /// Sleep at one of the day's candidates (none clears the choice).
    Candidate,
    /// Sleep at a place of the rider's own.
    OwnPlace,
}

/// Applies `change` and answers the trip after it, with its new ETag.
async fn edit_day(state: &App, edit: DayEdit, change: DayChange) -> Result<Response, Problem> {
    let DayEdit {
        caller,
        day: DayPath(trip_id, stage_id),
        conditions: EditConditions { base, ask },
        body,
    } = edit;
    let trips = state.trips();
    let detail = match change {
        DayChange::Days(action) => {
            trips
                .edit_stage(&caller, trip_id, (action, stage_id), &body, base, &ask)
                .await?
        }
        DayChange::Candidate => {
            trips
                .choose_accommodation(&caller, trip_id, stage_id, &body, base, &ask)
                .await?
        }
        DayChange::OwnPlace => {
            trips
                .manual_accommodation(&caller, trip_id, stage_id, &body, base, &ask)
                .await?
        }
    };
    Ok(detail_response(&detail)?)
}

/// `POST /trips/{id}/stages/{stageId}/accommodations/manual`: a place entered by hand.
#[utoipa::path(post, path = "/trips/{id}/stages/{stageId}/accommodations/manual",
    operation_id = "manualAccommodation", tag = "accommodations",
    summary = "Enter a place to sleep by hand",
    description = "Scope trips:write, If-Match. It becomes the day's chosen place.",
    params(StagePathParams, IfMatchHeader),
    request_body(content = ManualAccommodation, content_type = "application/json"),
    responses(TripEdited, BodyEditRefusals))]
pub(super) async fn manual_accommodation(
    State(state): State<App>,
    edit: DayEdit,
) -> Result<Response, Problem> {
    edit_day(&state, edit, DayChange::OwnPlace).await
}

/// `POST /trips/{id}/accommodations/scan` `{radiusKm?, stageId?}`: 202, the workers scan.
#[utoipa::path(post, path = "/trips/{id}/accommodations/scan", operation_id = "scanAccommodations",
    tag = "accommodations", summary = "Look for places to sleep",
    description = "Scope trips:write. 202: the workers scan around each day's end (or one day's).",
    params(TripPathParam),
    request_body(content = Option<ScanAccommodations>, content_type = "application/json"),
    responses((status = 202, description = "Accepted", body = crate::openapi::views::TripSummarySchema),
        BadRequest, Unauthorized, Forbidden, NotFound, BodyTimeout, Conflict, TooLarge, NotJson,
        Invalid, Locked, RateLimited))]
pub(super) async fn scan(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    OptionalJsonObject(body): OptionalJsonObject,
) -> Result<Response, Problem> {
    let summary = state
        .trips()
        .scan_accommodations(&caller, trip_id, &body)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(summary)).into_response())
}

/// `GET /trips/{id}/route`: the days' lines; 304 when `If-None-Match` names the current tag.
#[utoipa::path(get, path = "/trips/{id}/route", operation_id = "getRoute", tag = "days",
    summary = "The days' lines, for a map",
    description = "Scope trips:read. 304 when If-None-Match names the current ETag. `version` reads the lines as they were at a past version.",
    params(TripPathParam, IfNoneMatchHeader, VersionQuery),
    responses((status = 200, description = "The lines", body = crate::openapi::views::RouteLinesSchema,
            headers(("ETag" = String))),
        (status = 304, description = "Unchanged"),
        BadRequest, Unauthorized, Forbidden, NotFound, Invalid, RateLimited))]
pub(super) async fn route(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Result<Response, Problem> {
    let lines = match query.get("version") {
        None => {
            state
                .trips()
                .route_lines(&caller.principal, trip_id)
                .await?
        }
        Some(raw) => {
            let version = raw.parse::<u64>().ok().filter(|v| *v >= 1).ok_or_else(|| {
                AppError::InvalidQuery(vec![etappe_domain::trip::FieldError::new(
                    "version",
                    format!(
                        "version must be a whole number from 1; got {}",
                        etappe_domain::text::quote(raw)
                    ),
                )])
            })?;
            state
                .trips()
                .route_lines_at(&caller.principal, trip_id, version)
                .await?
        }
    };
    Ok(route_response(&lines, &headers))
}

/// The lines with their validator; 304 when the caller has them already.
pub(super) fn route_response(
    lines: &etappe_app::trips::days::RouteLines,
    headers: &HeaderMap,
) -> Response {
    let tag = format!("\"r{}\"", &lines.tag[..16.min(lines.tag.len())]);
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            // If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x".
            v.split(',')
                .map(|t| t.trim())
                .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == tag)
        });
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Json(lines).into_response()
    };
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, value);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

super::trips::file_operation!(
    "/trips/{id}/stages/{stageId}/export.gpx",
    "exportStageGpx",
    "application/gpx+xml",
    "One day as GPX 1.1",
    StagePathParams,
    /// `GET /trips/{id}/stages/{stageId}/export.gpx`.
    pub(super) async fn export_stage_gpx(
        State(state): State<App>,
        caller: Caller,
        headers: HeaderMap,
        day: DayPath,
    ) -> Result<Response, Problem> {
        export_day(&state, &caller, &headers, day, ExportFormat::Gpx).await
    }
);
super::trips::file_operation!(
    "/trips/{id}/stages/{stageId}/export.fit",
    "exportStageFit",
    "application/vnd.ant.fit",
    "One day as a FIT course",
    StagePathParams,
    /// `GET /trips/{id}/stages/{stageId}/export.fit`.
    pub(super) async fn export_stage_fit(
        State(state): State<App>,
        caller: Caller,
        headers: HeaderMap,
        day: DayPath,
    ) -> Result<Response, Problem> {
        export_day(&state, &caller, &headers, day, ExportFormat::Fit).await
    }
);

#[utoipa::path(patch, path = "/trips/{id}/stages/{stageId}/move", operation_id = "moveStage",
    tag = "days", summary = "Move a day to another position",
    description = "Scope trips:write, If-Match.",
    params(StagePathParams, IfMatchHeader),
    request_body(content = MoveStage, content_type = "application/json"),
    responses(TripEdited, BodyEditRefusals))]
pub(super) async fn move_stage(
    State(state): State<App>,
    edit: DayEdit,
) -> Result<Response, Problem> {
    edit_day(&state, edit, DayChange::Days(StageAction::Move)).await
}

#[utoipa::path(patch, path = "/trips/{id}/stages/{stageId}/accommodation",
    operation_id = "chooseAccommodation", tag = "accommodations",
    summary = "Choose where to sleep after a day",
    description = "Scope trips:write, If-Match. `lat`/`lon` of one of the day's candidates; none clears the choice.",
    params(StagePathParams, IfMatchHeader),
    request_body(content = ChooseAccommodation, content_type = "application/json"),
    responses(TripEdited, BodyEditRefusals))]
pub(super) async fn choose_accommodation(
    State(state): State<App>,
    edit: DayEdit,
) -> Result<Response, Problem> {
    edit_day(&state, edit, DayChange::Candidate).await
}

#[utoipa::path(
    post,
    path = "/trips/{id}/stages/{stageId}/rest-day",
    operation_id = "insertRestDay",
    tag = "days",
    summary = "Insert a rest day after a day",
    description = "Scope trips:write, If-Match. No body.",
    params(StagePathParams, IfMatchHeader),
    responses(TripEdited, BodyEditRefusals)
)]
pub(super) async fn rest_day(State(state): State<App>, edit: DayEdit) -> Result<Response, Problem> {
    edit_day(&state, edit, DayChange::Days(StageAction::RestDay)).await
}

#[utoipa::path(post, path = "/trips/{id}/stages/{stageId}/poi-waypoint", operation_id = "addWaypoint",
    tag = "days", summary = "Re-route a day through a waypoint",
    description = "Scope trips:write. 202: the workers compute the detour; the version does not move, so no If-Match.",
    params(StagePathParams),
    request_body(content = AddWaypoint, content_type = "application/json"),
    responses((status = 202, description = "Accepted", body = crate::openapi::views::WaypointAcceptedSchema),
        BadRequest, Unauthorized, Forbidden, NotFound, BodyTimeout, Conflict, TooLarge, NotJson,
        Invalid, Locked, RateLimited))]
pub(super) async fn add_waypoint(
    State(state): State<App>,
    caller: Caller,
    day: DayPath,
    OptionalJsonObject(body): OptionalJsonObject,
) -> Result<Response, Problem> {
    let DayPath(trip_id, stage_id) = day;
    let accepted = state
        .trips()
        .add_waypoint(&caller, trip_id, stage_id, &body)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(accepted)).into_response())
}

#[utoipa::path(delete, path = "/trips/{id}/stages/{stageId}/poi-waypoint", operation_id = "removeDetour",
    tag = "days", summary = "Remove a day's detour",
    description = "Scope trips:write. The day rides its own roads again (a detour still being computed is dropped too); like adding one, the version does not move, so no If-Match. 409 when the day has no detour.",
    params(StagePathParams),
    responses((status = 200, description = "The trip after the removal", body = crate::openapi::views::TripDetailSchema, headers(("ETag" = String, description = "The version (unchanged)"))),
        Unauthorized, Forbidden, NotFound, Conflict, Invalid, Locked, RateLimited))]
pub(super) async fn remove_detour(
    State(state): State<App>,
    caller: Caller,
    day: DayPath,
) -> Result<Response, Problem> {
    let DayPath(trip_id, stage_id) = day;
    let detail = state
        .trips()
        .remove_detour(&caller, trip_id, stage_id)
        .await?;
    Ok(detail_response(&detail)?)
}
