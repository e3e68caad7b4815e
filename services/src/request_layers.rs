//! What every request passes through, whichever transport serves it: a request id and trace
//! context (carried into event metadata by REST and MCP alike), a tracing span named after
//! the matched route, its rate/errors/duration in the metrics, and the body deadline. The composition root wraps the merged router
//! in these layers once, so no transport has its own.

use std::sync::Arc;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use etappe_infra::metrics::Metrics;
use tower_http::trace::TraceLayer;
use uuid::Uuid;

use crate::config::ServerLimits;
use etappe_app::RequestContext;

/// `router` with the layers every request passes through.
pub fn wrap(router: Router, limits: ServerLimits, metrics: Arc<Metrics>) -> Router {
    router
        .layer(axum::middleware::from_fn(request_context))
        .layer(axum::middleware::from_fn_with_state(metrics, red_metrics))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            limits.body_timeout(),
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &Request| {
                    let route = request
                        .extensions()
                        .get::<MatchedPath>()
                        .map_or("unmatched", |p| p.as_str());
                    let span = tracing::info_span!(
                        "http",
                        method = %request.method(),
                        route,
                        status = tracing::field::Empty,
                        request_id = tracing::field::Empty,
                        trace_id = tracing::field::Empty
                    );
                    crate::telemetry::continue_trace(&span, request.headers());
                    span
                })
                // The access log: a line per request at INFO, in its span (method, route,
                // status, request and trace ids), with its latency. A 5xx is a WARN here: the
                // errors that are Etappe's own are logged as ERROR where they happen, and a
                // `/readyz` saying "not ready" is an answer, not a failure.
                .on_response(
                    tower_http::trace::DefaultOnResponse::new()
                        .level(tracing::Level::INFO)
                        .latency_unit(tower_http::LatencyUnit::Millis),
                )
                .on_failure(tower_http::trace::DefaultOnFailure::new().level(tracing::Level::WARN)),
        )
}

/// Counts each answered request by its route template (never its path: ids would explode the
/// series) and status class, and times it: rate, errors and duration per route.
async fn red_metrics(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = request.method().as_str().to_owned();
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    metrics.http_answered(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// Gives each request an id (the caller's `X-Request-Id` when it is a UUID, or a new one) and
/// a trace context, which the services carry into event metadata; echoes the id on the
/// response.
async fn request_context(mut request: Request, next: Next) -> Response {
    let correlation_id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| Uuid::parse_str(v).ok())
        .unwrap_or_else(Uuid::now_v7);
    let context = RequestContext {
        correlation_id: Some(correlation_id),
        traceparent: crate::telemetry::current_traceparent(),
    };
    let span = tracing::Span::current();
    span.record("request_id", tracing::field::display(correlation_id));
    if let Some(trace_id) = context
        .traceparent
        .as_deref()
        .and_then(|t| t.split('-').nth(1))
    {
        span.record("trace_id", trace_id);
    }
    request.extensions_mut().insert(context);
    let mut response = next.run(request).await;
    if let Ok(value) = HeaderValue::from_str(&correlation_id.to_string()) {
        response.headers_mut().insert("x-request-id", value);
    }
    tracing::Span::current().record("status", response.status().as_u16());
    response
}
