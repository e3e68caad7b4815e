//! REST handlers for trips. Each one translates HTTP into a call of the trip service and the
//! answer back into HTTP (status, `Location`, `ETag`, `Cache-Control`); no rule lives here.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_domain::text::quote;
use etappe_domain::trip::FieldError;
use etappe_domain::trip::input::parse_date;
use etappe_events::{Page, TripFilter};

use super::App;
use super::extract::Caller;
use super::extract::{IfMatch, JsonObject, Segments, TripPath, etag};
use super::openapi::answers::*;
use super::openapi::inputs::{CreateTrip, RestoreVersion, UpdateSettings};
use super::openapi::params::*;
use crate::problem::Problem;
use etappe_app::AppError;
use etappe_app::confirmation::ConfirmedByRequest;
use etappe_app::exports::CachedExport;
use etappe_app::exports::ExportFormat;
use etappe_app::trips::{Created, DEFAULT_ITEMS_PER_PAGE, MAX_ITEMS_PER_PAGE};
use etappe_app::views::TripDetail;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// `Idempotency-Key`: 16 to 255 characters of `A-Z a-z 0-9 _ -`.
/// The trips' routes, each declared by its handler's operation.
pub(super) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(summary, update, delete))
        .routes(routes!(detail))
        .routes(routes!(history))
        .routes(routes!(restore))
        .routes(routes!(duplicate))
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    let Some(raw) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = raw.to_str().unwrap_or_default();
    let valid = (16..=255).contains(&key.len())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(AppError::BadHeader(
            "Idempotency-Key must be 16 to 255 characters of A-Z, a-z, 0-9, _ and - (a UUID works)"
                .into(),
        ));
    }
    Ok(Some(key.to_owned()))
}

/// `POST /trips`: 202 with `Location`; the days are computed by the workers meanwhile.
#[utoipa::path(post, path = "/trips", operation_id = "createTrip", tag = "trips",
    summary = "Create a trip",
    description = "Scope trips:write. Answers at once with 202 and `Location`; the days are computed meanwhile (`partial` until they exist). With `Idempotency-Key`, a retry answers the same trip.",
    params(IdempotencyKey),
    request_body(content = CreateTrip, content_type = "application/json"),
    responses(
        (status = 202, description = "Created; the days are being computed", body = crate::openapi::views::TripSummarySchema,
            headers(("Location" = String, description = "/trips/{id}"),
                ("Idempotent-Replayed" = String, description = "true when a retry was recognised"))),
        BadRequest, Unauthorized, Forbidden, BodyTimeout, Conflict, TooLarge, NotJson, Invalid,
        RateLimited))]
pub(super) async fn create(
    State(state): State<App>,
    caller: Caller,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> Result<Response, Problem> {
    let key = idempotency_key(&headers)?;
    let created = state.trips().create(&caller, &body, key.as_deref()).await?;
    created_response(StatusCode::ACCEPTED, &created).map_err(Problem::from)
}

/// A new trip's answer: its summary, `Location`, and whether a retry was recognised.
fn created_response(status: StatusCode, created: &Created) -> Result<Response, AppError> {
    let location = format!("/trips/{}", created.trip.id);
    let mut response = (status, Json(&created.trip)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::LOCATION,
        HeaderValue::from_str(&location).map_err(|e| AppError::Internal(e.to_string()))?,
    );
    if created.replayed {
        h.insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(response)
}

/// `POST /trips/{id}/duplicate`: 201 with `Location`; `Idempotency-Key` is required, so
/// that a retried click or a lost answer never makes two copies.
#[utoipa::path(post, path = "/trips/{id}/duplicate", operation_id = "duplicateTrip", tag = "trips",
    summary = "Duplicate a trip",
    description = "Scope trips:write. A new trip with the same source, settings and days; `Idempotency-Key` is required, so a retried click never makes two copies.",
    params(TripPathParam, RequiredIdempotencyKey),
    responses(
        (status = 201, description = "The copy", body = crate::openapi::views::TripSummarySchema,
            headers(("Location" = String, description = "/trips/{id}"))),
        BadRequest, Unauthorized, Forbidden, NotFound, BodyTimeout, Conflict, Invalid, RateLimited))]
pub(super) async fn duplicate(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let key = idempotency_key(&headers)?.ok_or_else(|| {
        AppError::BadHeader(
            "Idempotency-Key is required to duplicate a trip: 16 to 255 characters of A-Z, a-z, 0-9, _ and - (a UUID works)"
                .into(),
        )
    })?;
    let created = state.trips().duplicate(&caller, trip_id, &key).await?;
    created_response(StatusCode::CREATED, &created).map_err(Problem::from)
}

const LIST_PARAMETERS: [&str; 5] = ["page", "itemsPerPage", "title", "startDate", "endDate"];

fn parse_count(name: &str, raw: &str, max: u32, errors: &mut Vec<FieldError>) -> Option<u32> {
    match raw.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Some(n),
        _ => {
            errors.push(FieldError::new(
                name,
                format!(
                    "{name} must be a whole number from 1 to {max}; got {}",
                    quote(raw)
                ),
            ));
            None
        }
    }
}

/// `GET /trips?page=&itemsPerPage=&title=&startDate=&endDate=`.
#[utoipa::path(get, path = "/trips", operation_id = "listTrips", tag = "trips",
    summary = "List my trips", description = "Scope trips:read. Newest first.",
    params(ListQuery),
    responses((status = 200, description = "A page of trips", body = crate::openapi::views::TripListSchema),
        BadRequest, Unauthorized, Forbidden, RateLimited))]
pub(super) async fn list(
    State(state): State<App>,
    caller: Caller,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, Problem> {
    let mut errors = Vec::new();
    for name in params
        .keys()
        .filter(|k| !LIST_PARAMETERS.contains(&k.as_str()))
    {
        errors.push(FieldError::new(
            name.chars().take(40).collect::<String>(),
            format!(
                "unknown query parameter {}; accepted: {}",
                quote(name),
                LIST_PARAMETERS.join(", ")
            ),
        ));
    }
    let page = params
        .get("page")
        .map_or(Some(1), |p| parse_count("page", p, MAX_PAGE, &mut errors));
    let per_page = params
        .get("itemsPerPage")
        .map_or(Some(DEFAULT_ITEMS_PER_PAGE), |p| {
            parse_count("itemsPerPage", p, MAX_ITEMS_PER_PAGE, &mut errors)
        });
    let mut date = |name: &str| match params.get(name) {
        None => None,
        Some(raw) => parse_date(name, raw).map_err(|e| errors.push(e)).ok(),
    };
    let filter = TripFilter {
        title: params
            .get("title")
            .filter(|t| !t.trim().is_empty())
            .cloned(),
        start_date: date("startDate"),
        end_date: date("endDate"),
    };
    let (Some(page), Some(per_page), true) = (page, per_page, errors.is_empty()) else {
        return Err(AppError::InvalidQuery(errors).into());
    };
    let list = state
        .trips()
        .list(&caller.principal, &filter, Page { page, per_page })
        .await?;
    Ok(Json(list).into_response())
}

/// `GET /trips/{id}`: `{id, version, partial, isLocked, computationStatus}`; with a `.gpx` or
/// `.fit` suffix, the whole trip as a file.
#[utoipa::path(get, path = "/trips/{id}", operation_id = "getTrip", tag = "trips",
    summary = "Where a trip stands", description = "Scope trips:read.",
    params(TripPathParam),
    responses((status = 200, description = "The trip's summary", body = crate::openapi::views::TripSummarySchema),
        Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn summary(
    State(state): State<App>,
    caller: Caller,
    headers: HeaderMap,
    Segments(raw): Segments<String>,
) -> Result<Response, Problem> {
    let (id, format) = match raw.rsplit_once('.') {
        Some((id, "gpx")) => (id, Some(ExportFormat::Gpx)),
        Some((id, "fit")) => (id, Some(ExportFormat::Fit)),
        _ => (raw.as_str(), None),
    };
    let trip_id = id.parse().map_err(|_| AppError::NotFound)?;
    if let Some(format) = format {
        return Ok(file_response(
            state
                .exports()
                .export(&caller.principal, trip_id, None, format)
                .await?,
            &headers,
        ));
    }
    let summary = state.trips().summary(&caller.principal, trip_id).await?;
    Ok(Json(summary).into_response())
}

/// `body` with the trip's `version` as a strong ETag. `no-store`: the ETag is a
/// precondition token for writes, not a cache validator (enrichments change the body, not
/// the version).
pub(super) fn versioned_json(
    version: u64,
    body: &impl serde::Serialize,
) -> Result<Response, AppError> {
    let mut response = Json(body).into_response();
    let h = response.headers_mut();
    h.insert(
        header::ETAG,
        HeaderValue::from_str(&etag(version)).map_err(|e| AppError::Internal(e.to_string()))?,
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// The trip after a read or an edit, with its version as ETag.
pub(super) fn detail_response(detail: &TripDetail) -> Result<Response, AppError> {
    versioned_json(detail.version, detail)
}

/// `GET /trips/{id}/detail`, or `?version=N`: the trip as it was at version N.
#[utoipa::path(get, path = "/trips/{id}/detail", operation_id = "getTripDetail", tag = "trips",
    summary = "The whole trip",
    description = "Scope trips:read. `ETag` is the version to send as `If-Match`; `Cache-Control: no-store`.",
    params(TripPathParam, VersionQuery),
    responses((status = 200, description = "The trip", body = crate::openapi::views::TripDetailSchema,
            headers(("ETag" = String, description = "The version, a strong tag"))),
        BadRequest, Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn detail(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, Problem> {
    if let Some(name) = params.keys().find(|k| k.as_str() != "version") {
        return Err(AppError::InvalidQuery(vec![FieldError::new(
            name.chars().take(40).collect::<String>(),
            format!("unknown query parameter {}; accepted: version", quote(name)),
        )])
        .into());
    }
    let detail = match params.get("version") {
        None => state.trips().detail(&caller.principal, trip_id).await?,
        Some(raw) => {
            let version = raw.parse::<u64>().ok().filter(|v| *v >= 1).ok_or_else(|| {
                AppError::InvalidQuery(vec![FieldError::new(
                    "version",
                    format!("version must be a whole number from 1; got {}", quote(raw)),
                )])
            })?;
            state
                .trips()
                .detail_at(&caller.principal, trip_id, version)
                .await?
        }
    };
    Ok(detail_response(&detail)?)
}

/// `POST /trips/{id}/restore` `{version}`: the trip made what it was at that version.
#[utoipa::path(post, path = "/trips/{id}/restore", operation_id = "restoreVersion", tag = "trips",
    summary = "Restore a past version",
    description = "Scope trips:write, If-Match. The trip's source, settings, days and route become what they were at `version` (read it first with `GET /trips/{id}/detail?version=N`); the version moves, the history says so, and the analysis runs again.",
    params(TripPathParam, IfMatchHeader),
    request_body(content = RestoreVersion, content_type = "application/json"),
    responses((status = 200, description = "The trip after the restore", body = crate::openapi::views::TripDetailSchema, headers(("ETag" = String, description = "The new version"))),
        BadRequest, Unauthorized, Forbidden, NotFound, BodyTimeout, Stale, TooLarge, NotJson,
        Invalid, Locked, PreconditionRequired, RateLimited))]
pub(super) async fn restore(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    IfMatch(base): IfMatch,
    super::extract::OptionalJsonObject(body): super::extract::OptionalJsonObject,
) -> Result<Response, Problem> {
    if let Some(name) = body.keys().find(|k| k.as_str() != "version") {
        return Err(etappe_domain::trip::InputError::UnknownFields {
            unknown: vec![name.clone()],
            accepted: vec!["version".into()],
        }
        .into());
    }
    let version = match body.get("version") {
        None => Err("version is required: the whole number (from 1) of the version to restore"),
        Some(value) => etappe_domain::trip::input::whole_number(value)
            .filter(|v| *v >= 1)
            .ok_or("version must be a whole number from 1 (the trip's versions count from 1)"),
    }
    .map_err(|message| {
        etappe_domain::trip::InputError::Invalid(vec![FieldError::new("version", message)])
    })?;
    let detail = state
        .trips()
        .restore(&caller, trip_id, version, base)
        .await?;
    Ok(detail_response(&detail)?)
}

/// `GET /trips/{id}/history`: every event of the trip, readable.
#[utoipa::path(get, path = "/trips/{id}/history", operation_id = "tripHistory", tag = "trips",
    summary = "Every change of a trip", description = "Scope trips:read.",
    params(TripPathParam),
    responses((status = 200, description = "The trip's events, readable", body = HistorySchema),
        Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn history(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
) -> Result<Response, Problem> {
    let items = state.trips().history(&caller.principal, trip_id).await?;
    Ok(Json(serde_json::json!({"items": items, "totalItems": items.len()})).into_response())
}

/// `PATCH /trips/{id}` with `If-Match`.
#[utoipa::path(patch, path = "/trips/{id}", operation_id = "updateTripSettings", tag = "trips",
    summary = "Change settings",
    description = "Scope trips:write. If-Match is required (the ETag of the detail, or *). Refused with 423 when the trip is locked, judged on the state before the edit.",
    params(TripPathParam, IfMatchHeader),
    request_body(content(
        (UpdateSettings = "application/json"),
        (UpdateSettings = "application/merge-patch+json"))),
    responses((status = 200, description = "The trip after the change", body = crate::openapi::views::TripDetailSchema,
            headers(("ETag" = String, description = "The new version"))),
        BadRequest, Unauthorized, Forbidden, NotFound, BodyTimeout, Conflict, Stale, TooLarge,
        NotJson, Invalid, Locked, PreconditionRequired, RateLimited))]
pub(super) async fn update(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
    IfMatch(base): IfMatch,
    JsonObject(body): JsonObject,
) -> Result<Response, Problem> {
    let (detail, _) = state
        .trips()
        .update_settings(&caller, trip_id, &body, base, &ConfirmedByRequest)
        .await?;
    Ok(detail_response(&detail)?)
}

/// `DELETE /trips/{id}`: 204; allowed when the trip is locked.
#[utoipa::path(delete, path = "/trips/{id}", operation_id = "deleteTrip", tag = "trips",
    summary = "Delete a trip", description = "Scope trips:write. Allowed when the trip is locked.",
    params(TripPathParam),
    responses((status = 204, description = "Deleted"),
        Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn delete(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
) -> Result<StatusCode, Problem> {
    state
        .trips()
        .delete(&caller, trip_id, &ConfirmedByRequest)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// An exported file as an attachment.
pub(super) fn file_response(export: CachedExport, headers: &HeaderMap) -> Response {
    let file = export.file;
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == export.etag)
        });
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        file.bytes.into_response()
    };
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&export.etag) {
        h.insert(header::ETAG, value);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if unchanged {
        return response;
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(file.content_type),
    );
    let disposition = format!("attachment; filename=\"{}\"", file.file_name);
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

/// A file export's operation: the file, or 304 when `If-None-Match` names it. Given a
/// handler, it is that handler's declaration; given a name only, it declares a path axum's
/// router cannot hold (`/trips/{id}.gpx`: a suffix on a captured segment), served by the
/// handler of the path it suffixes.
macro_rules! file_operation {
    ($path:literal, $id:literal, $media:literal, $summary:literal, $params:ident, $handler:item) => {
        #[utoipa::path(get, path = $path, operation_id = $id, tag = "exports", summary = $summary,
            description = "Scope trips:read. `ETag` names the file; `Cache-Control: no-cache`.",
            params($params, IfNoneMatchHeader),
            responses(
                (status = 200, description = "The file (an attachment)", content_type = $media,
                    body = FileSchema, headers(("ETag" = String))),
                (status = 304, description = "Unchanged since the ETag sent"),
                Unauthorized, Forbidden, NotFound, Invalid, RateLimited))]
        $handler
    };
    ($name:ident, $path:literal, $id:literal, $media:literal, $summary:literal, $params:ident) => {
        file_operation!($path, $id, $media, $summary, $params,
            #[allow(dead_code)]
            pub(super) fn $name() {});
    };
}
pub(super) use file_operation;

// Served by `summary` (a `.gpx` or `.fit` suffix on the id); declared apart for the document.
file_operation!(
    export_trip_gpx,
    "/trips/{id}.gpx",
    "exportTripGpx",
    "application/gpx+xml",
    "The trip as GPX 1.1",
    TripPathParam
);
file_operation!(
    export_trip_fit,
    "/trips/{id}.fit",
    "exportTripFit",
    "application/vnd.ant.fit",
    "The trip as a FIT course",
    TripPathParam
);
