//! Telemetry, set up in one place: `tracing` to stderr with an `EnvFilter`, and OpenTelemetry
//! trace export over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. W3C trace context
//! is read from incoming requests and written into event metadata, so a trace can be
//! followed from the request to the events it appended (and, from #3, into the worker).

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Keeps the exporter alive; flushes pending spans when dropped.
#[derive(Debug)]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("telemetry: flushing spans failed: {error}");
        }
    }
}

/// Failures setting telemetry up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("invalid log filter {0:?}: {1}")]
    Filter(String, String),
    #[error("OTLP exporter: {0}")]
    Exporter(String),
    #[error("ETAPPE_LOG_FORMAT must be text or json; got {0:?}")]
    Format(String),
}

/// Makes `ring` the process's TLS provider (the HTTP clients are built without a default
/// one, to avoid a C build of aws-lc). Idempotent.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Installs the global subscriber. Call once, from `main`.
/// `format` is `text` (for people; colours only on a terminal) or `json` (one object a line,
/// for a log shipper).
pub fn init(
    service: &'static str,
    filter: &str,
    format: &str,
    otlp_endpoint: Option<&str>,
) -> Result<TelemetryGuard, TelemetryError> {
    use std::io::IsTerminal as _;
    install_tls_provider();
    let env_filter = EnvFilter::try_new(filter)
        .map_err(|e| TelemetryError::Filter(filter.to_owned(), e.to_string()))?;
    let text = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(true);
    let fmt = match format {
        "text" => text.boxed(),
        "json" => text
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
        other => return Err(TelemetryError::Format(other.to_owned())),
    };
    let provider = match otlp_endpoint {
        Some(endpoint) => {
            use opentelemetry_otlp::WithExportConfig;
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
                .build()
                .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
            let resource = opentelemetry_sdk::Resource::builder()
                .with_service_name(service)
                .build();
            Some(
                SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource)
                    .build(),
            )
        }
        None => None,
    };
    // Traces have their own filter: a quiet log (`ETAPPE_LOG=warn`) must not silence them.
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer(service))
            .with_filter(EnvFilter::new("info"))
            .boxed()
    });
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    tracing_subscriber::registry()
        .with(fmt.with_filter(env_filter))
        .with(otel)
        .init();
    Ok(TelemetryGuard { provider })
}

struct HeaderExtractor<'a>(&'a axum::http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Makes the caller's trace (a `traceparent` header) the parent of `span`.
pub fn continue_trace(span: &tracing::Span, headers: &axum::http::HeaderMap) {
    let context = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    // Without an OpenTelemetry layer there is nothing to attach to; that is not an error.
    let _ = span.set_parent(context);
}

struct TraceparentInjector(Option<String>);

impl Injector for TraceparentInjector {
    fn set(&mut self, key: &str, value: String) {
        if key == "traceparent" {
            self.0 = Some(value);
        }
    }
}

/// The W3C `traceparent` of the current span, when a trace is being recorded.
pub fn current_traceparent() -> Option<String> {
    let context = tracing::Span::current().context();
    let mut injector = TraceparentInjector(None);
    TraceContextPropagator::new().inject_context(&context, &mut injector);
    injector.0
}

/// A span's parent from a `traceparent` carried in a message (the queue's headers).
pub fn continue_trace_from(span: &tracing::Span, traceparent: Option<&str>) {
    let Some(traceparent) = traceparent else {
        return;
    };
    let mut headers = axum::http::HeaderMap::new();
    if let Ok(value) = axum::http::HeaderValue::from_str(traceparent) {
        headers.insert("traceparent", value);
    }
    continue_trace(span, &headers);
}
