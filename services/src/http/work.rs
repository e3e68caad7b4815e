//! REST handlers of the work side: re-running the analysis, uploading a GPX file, following
//! a trip live over server-sent events, and the Prometheus metrics.

use std::collections::HashMap;
use std::convert::Infallible;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde_json::{Map, Value, json};

use super::App;
use super::extract::Caller;
use super::extract::{
    MAX_UPLOAD_BODY, TripPath, Upload, multipart_failure, refuse_declared_oversize,
};
use super::openapi::answers::*;
use super::openapi::inputs::GpxUpload;
use super::openapi::params::*;
use crate::problem::Problem;
use etappe_app::AppError;
use etappe_app::follow::{FollowCredential, Update};
use etappe_app::identity::Principal;
use etappe_app::views::{TripSummary, today};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::router::UtoipaMethodRouterExt;
use utoipa_axum::routes;

/// The work routes (analysis, uploads, the live follow, metrics), each declared by its
/// handler's operation. An upload's body is bounded twice: by its declared length before a
/// byte is read, and by the bytes that arrive.
pub(super) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(analyse))
        .routes(routes!(events))
        .routes(routes!(upload).map(|upload| {
            upload
                .layer(axum::extract::DefaultBodyLimit::max(MAX_UPLOAD_BODY))
                .layer(axum::middleware::from_fn(refuse_declared_oversize))
        }))
        .routes(routes!(metrics))
}

/// `POST /trips/{id}/analyze`: 202; the workers re-analyse meanwhile.
#[utoipa::path(post, path = "/trips/{id}/analyze", operation_id = "analyzeTrip", tag = "trips",
    summary = "Analyse the trip again",
    description = "Scope trips:write. 202: the workers re-analyse every day meanwhile.",
    params(TripPathParam),
    responses((status = 202, description = "Accepted", body = crate::openapi::views::TripSummarySchema),
        Unauthorized, Forbidden, NotFound, BodyTimeout, Conflict, Invalid, Locked, RateLimited))]
pub(super) async fn analyse(
    State(state): State<App>,
    caller: Caller,
    TripPath(trip_id): TripPath,
) -> Result<Response, Problem> {
    let summary = state.trips().analyze(&caller, trip_id).await?;
    Ok((StatusCode::ACCEPTED, Json(summary)).into_response())
}

/// `POST /trips/gpx-upload` (multipart): a `file` part (the GPX, ≤ 30 MB) and an optional
/// `settings` part (a JSON object of settings).
#[utoipa::path(post, path = "/trips/gpx-upload", operation_id = "uploadGpx", tag = "trips",
    summary = "Create a trip from a GPX file",
    description = "Scope trips:write. multipart/form-data: a `file` part and an optional `settings` part (a JSON object). 202 with `Location`; the days follow within a second.",
    request_body(content = GpxUpload, content_type = "multipart/form-data"),
    responses((status = 202, description = "Created", body = crate::openapi::views::TripSummarySchema,
            headers(("Location" = String, description = "/trips/{id}"))),
        BadRequest, Unauthorized, Forbidden, BodyTimeout, TooLarge, NotJson, Invalid,
        RateLimited, Unavailable))]
pub(super) async fn upload(
    State(state): State<App>,
    caller: Caller,
    Upload(mut multipart): Upload,
) -> Result<Response, Response> {
    // Held until the answer: the body is read and checked only with a slot.
    let _slot = state
        .upload_slot()
        .await
        .map_err(|e| Problem::from(e).into_response())?;
    // The file as received (no copy: it is up to 30 MB).
    let mut file: Option<(String, axum::body::Bytes)> = None;
    let mut settings = Map::new();
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| multipart_failure(&e))?
    {
        match field.name().unwrap_or_default() {
            "file" => {
                let name = field.file_name().unwrap_or("upload.gpx").to_owned();
                let bytes = field.bytes().await.map_err(|e| multipart_failure(&e))?;
                file = Some((name, bytes));
            }
            "settings" => {
                let text = field.text().await.map_err(|e| multipart_failure(&e))?;
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(map)) => settings = map,
                    _ => {
                        return Err(Problem::from(AppError::MalformedBody(
                            "the settings part must be a JSON object".into(),
                        ))
                        .into_response());
                    }
                }
            }
            other => {
                return Err(Problem::from(AppError::MalformedBody(format!(
                    "unknown part {}; accepted: file, settings",
                    etappe_domain::text::quote(other)
                )))
                .into_response());
            }
        }
    }
    let Some((name, bytes)) = file else {
        return Err(Problem::from(AppError::MalformedBody(
            "a part named file with the GPX is required".into(),
        ))
        .into_response());
    };
    let created = state
        .trips()
        .create_from_upload(&caller, &name, &bytes, &settings)
        .await
        .map_err(|e| Problem::from(e).into_response())?;
    let location = format!("/trips/{}", created.trip.id);
    let mut response = (StatusCode::ACCEPTED, Json(&created.trip)).into_response();
    response.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(&location)
            .map_err(|e| Problem::from(AppError::Internal(e.to_string())).into_response())?,
    );
    Ok(response)
}

fn trip_event(view: &etappe_domain::projection::TripView) -> Event {
    let summary = TripSummary::of(view, today());
    let data = json!({"version": summary.version, "streamVersion": view.stream_version, "partial": summary.partial,
        "computationStatus": summary.computation_status});
    Event::default()
        .event("trip")
        .id(format!("trip-{}", view.stream_version))
        .data(data.to_string())
}

/// `GET /trips/{id}/events`: the trip's live progress and "trip changed, now version N",
/// starting from the current state. A browser's `EventSource` cannot send headers: it sends
/// the session cookie by itself. A token in the URL is refused: URLs land in proxy logs and
/// histories, and a personal token lives for months.
#[utoipa::path(get, path = "/trips/{id}/events", operation_id = "followTrip", tag = "trips",
    summary = "Follow a trip live (server-sent events)",
    description = "Scope trips:read. Events `trip` (`{version, streamVersion, partial, computationStatus}`), `progress`, `deleted` and `unauthorized`. Authenticated by `Authorization: Bearer` or, in a browser, the session cookie; a token in the URL (`?access_token=`) is refused.",
    params(TripPathParam),
    responses((status = 200, description = "An event stream", content_type = "text/event-stream",
            body = String),
        BadRequest, Unauthorized, Forbidden, NotFound, RateLimited))]
pub(super) async fn events(
    State(state): State<App>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
    TripPath(trip_id): TripPath,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Problem> {
    let (principal, credential) = authenticate(&state, &headers, &query).await?;
    let updates = state.follow(&principal, credential, trip_id).await?;
    let stream = futures::stream::unfold(updates, |mut updates| async move {
        updates.recv().await.map(|u| (Ok(sse_event(u)), updates))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// An update of a followed trip as a server-sent event.
fn sse_event(update: Update) -> Event {
    match update {
        Update::Trip(view) => trip_event(&view),
        Update::Progress(p) => Event::default()
            .event("progress")
            .id(p.seq.to_string())
            .data(serde_json::to_string(&p).unwrap_or_default()),
        Update::Deleted => Event::default().event("deleted").data("{}"),
        Update::Unauthorized => Event::default().event("unauthorized").data("{}"),
    }
}

/// Who opens a stream, and the credential [`App::follow`] checks again while it runs.
async fn authenticate(
    state: &App,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
) -> Result<(Principal, FollowCredential), Problem> {
    // A browser's EventSource cannot set headers: the session cookie stands for the person
    // (a read: no CSRF token needed). A token in the URL would be written to every log on
    // its way, so it is refused, saying what to do instead.
    if query.contains_key("access_token") {
        return Err(AppError::BadHeader(
            "a token in the URL is not accepted (it would land in logs and histories): send Authorization: Bearer, or open the stream from the logged-in page (its session cookie)".into(),
        ).into());
    }
    let token = crate::auth::bearer_token(headers)
        .map(str::to_owned)
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        let (session, _) = crate::auth::session_of(state.accounts(), headers)
            .await?
            .ok_or(AppError::Unauthenticated)?;
        let cookie = crate::auth::cookie(headers, state.accounts().web.cookie_name())
            .unwrap_or_default()
            .to_owned();
        return Ok((
            etappe_app::accounts::Accounts::principal_of(&session),
            FollowCredential::Session(cookie),
        ));
    };
    let principal = crate::auth::authenticate(state.identity(), &token)
        .await?
        .ok_or(AppError::Unauthenticated)?
        .principal;
    Ok((principal, FollowCredential::Token(token)))
}

/// `GET /metrics`: Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", operation_id = "metrics", tag = "meta",
    summary = "Prometheus metrics", security(()),
    responses((status = 200, description = "The OpenMetrics text exposition",
        content_type = "application/openmetrics-text", body = String)))]
pub(super) async fn metrics(State(state): State<App>) -> Response {
    let work = &state.work();
    work.metrics
        .live_streams
        .set(i64::try_from(state.streams().total()).unwrap_or(i64::MAX));
    if let Ok(depth) = work.queue.depth().await {
        work.metrics
            .queue_depth
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }
    if let Ok(dead) = work.queue.dead_lettered().await {
        work.metrics
            .dead_letter_depth
            .set(i64::try_from(dead).unwrap_or(i64::MAX));
    }
    (
        [(header::CONTENT_TYPE, etappe_infra::metrics::CONTENT_TYPE)],
        work.metrics.render(),
    )
        .into_response()
}
