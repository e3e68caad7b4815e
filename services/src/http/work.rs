//! REST handlers of the work side: re-running the analysis, uploading a GPX file, following
//! a trip live over server-sent events, and the Prometheus metrics.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::{Multipart, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde_json::{Map, Value, json};

use super::AppState;
use super::extract::{Caller, TripPath};
use crate::app::views::{TripSummary, today};
use crate::app::{AppError, RequestContext};
use crate::identity::Principal;

/// `POST /trips/{id}/analyze`: 202; the workers re-analyse meanwhile.
pub(super) async fn analyze(
    State(state): State<AppState>,
    Caller(principal): Caller,
    context: RequestContext,
    TripPath(trip_id): TripPath,
) -> Result<Response, AppError> {
    let summary = state.trips.analyze(&principal, trip_id, &context).await?;
    Ok((StatusCode::ACCEPTED, Json(summary)).into_response())
}

/// `POST /trips/gpx-upload` (multipart): a `file` part (the GPX, ≤ 30 MB) and an optional
/// `settings` part (a JSON object of settings).
pub(super) async fn upload(
    State(state): State<AppState>,
    Caller(principal): Caller,
    context: RequestContext,
    mut multipart: Multipart,
) -> Result<Response, AppError> {
    let mut file: Option<(String, Vec<u8>)> = None;
    let mut settings = Map::new();
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| AppError::MalformedBody(format!("the multipart body cannot be read: {e}")))?
    {
        match field.name().unwrap_or_default() {
            "file" => {
                let name = field.file_name().unwrap_or("upload.gpx").to_owned();
                let bytes = field.bytes().await.map_err(|_| {
                    AppError::MalformedBody("the file is larger than 30 MB or was cut off".into())
                })?;
                file = Some((name, bytes.to_vec()));
            }
            "settings" => {
                let text = field
                    .text()
                    .await
                    .map_err(|e| AppError::MalformedBody(e.to_string()))?;
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(map)) => settings = map,
                    _ => {
                        return Err(AppError::MalformedBody(
                            "the settings part must be a JSON object".into(),
                        ));
                    }
                }
            }
            other => {
                return Err(AppError::MalformedBody(format!(
                    "unknown part {}; accepted: file, settings",
                    etappe_events::text::quote(other)
                )));
            }
        }
    }
    let Some((name, bytes)) = file else {
        return Err(AppError::MalformedBody(
            "a part named file with the GPX is required".into(),
        ));
    };
    let created = state
        .trips
        .create_from_upload(&principal, &name, &bytes, &settings, &context)
        .await?;
    let location = format!("/trips/{}", created.trip.id);
    let mut response = (StatusCode::ACCEPTED, Json(&created.trip)).into_response();
    response.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(&location).map_err(|e| AppError::Internal(e.to_string()))?,
    );
    Ok(response)
}

fn trip_event(view: &etappe_events::projection::TripView) -> Event {
    let summary = TripSummary::of(view, today());
    let data = json!({"version": summary.version, "streamVersion": view.stream_version, "partial": summary.partial,
        "computationStatus": summary.computation_status});
    Event::default()
        .event("trip")
        .id(format!("trip-{}", view.stream_version))
        .data(data.to_string())
}

/// `GET /trips/{id}/events`: the trip's live progress and "trip changed, now version N",
/// starting from the current state. Browsers' `EventSource` cannot send headers, so the token
/// may also come as `?access_token=`.
pub(super) async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
    TripPath(trip_id): TripPath,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    let principal = authenticate(&state, &headers, &query).await?;
    let view = state.trips.watch(&principal, trip_id).await?;
    let (sender, receiver) = tokio::sync::mpsc::channel::<Event>(64);
    let progress = state.work.progress.clone();
    let trips = state.trips.clone();
    tokio::spawn(async move {
        // Subscribe before reading the current state, so nothing falls between the two.
        let live = progress.subscribe(trip_id).await;
        if sender.send(trip_event(&view)).await.is_err() {
            return;
        }
        let mut last_seq: HashMap<uuid::Uuid, u64> = HashMap::new();
        let mut send_progress = |p: &etappe_workers::progress::Progress| -> Option<Event> {
            let seen = last_seq.entry(p.job_id).or_default();
            if p.seq <= *seen {
                return None;
            }
            *seen = p.seq;
            Some(
                Event::default()
                    .event("progress")
                    .id(p.seq.to_string())
                    .data(serde_json::to_string(p).unwrap_or_default()),
            )
        };
        if let Ok(current) = progress.current(trip_id).await {
            for p in &current {
                if let Some(event) = send_progress(p)
                    && sender.send(event).await.is_err()
                {
                    return;
                }
            }
        }
        let mut live = match live {
            Ok(stream) => Some(stream),
            Err(error) => {
                tracing::warn!(%error, "live progress unavailable; the trip is still polled");
                None
            }
        };
        let mut stream_version = view.stream_version;
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                item = async { match live.as_mut() { Some(s) => s.next().await, None => std::future::pending().await } } => {
                    match item {
                        Some(p) => {
                            if let Some(event) = send_progress(&p) && sender.send(event).await.is_err() { return; }
                        }
                        None => live = None,
                    }
                }
                _ = tick.tick() => {
                    if sender.is_closed() { return; }
                    match trips.current_view(trip_id).await {
                        Ok(Some(v)) if v.stream_version != stream_version => {
                            stream_version = v.stream_version;
                            if sender.send(trip_event(&v)).await.is_err() { return; }
                        }
                        Ok(None) => {
                            let _ = sender.send(Event::default().event("deleted").data("{}")).await;
                            return;
                        }
                        _ => {}
                    }
                }
            }
        }
    });
    let stream = futures::stream::unfold(receiver, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
) -> Result<Principal, AppError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned)
        .or_else(|| query.get("access_token").cloned())
        .ok_or(AppError::Unauthenticated)?;
    state
        .identity
        .authenticate(token.trim())
        .await?
        .ok_or(AppError::Unauthenticated)
}

/// `GET /metrics`: Prometheus text exposition.
pub(super) async fn metrics(State(state): State<AppState>) -> Response {
    let work = &state.work;
    if let Ok(depth) = work.queue.depth().await {
        work.metrics.set(
            "etappe_queue_depth",
            "Jobs waiting in the queue.",
            &[],
            depth as f64,
        );
    }
    if let Ok(dead) = work.queue.dead_lettered().await {
        work.metrics.set(
            "etappe_dead_letter_depth",
            "Jobs in the dead-letter queue.",
            &[],
            dead as f64,
        );
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        work.metrics.render(),
    )
        .into_response()
}
