//! Local stand-ins for the upstreams: an axum server on 127.0.0.1 that
//! answers with a canned response and records every request it receives.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use etappe_upstream::UpstreamError;

/// A plain reqwest client as the application builds it. With the
/// `rustls-no-provider` feature reqwest panics at build time unless a crypto
/// provider is installed, even for plain-http clients; installing twice in
/// one process fails harmlessly, hence the ignored result.
pub(crate) fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .build()
        .expect("a client with default settings builds")
}

pub(crate) fn fixture(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", name]
        .iter()
        .collect();
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("fixture {}: {error}", path.display()))
}

/// What the stand-in answers to every request.
#[derive(Debug, Clone)]
pub(crate) struct Canned {
    pub(crate) status: u16,
    pub(crate) body: String,
    pub(crate) content_type: &'static str,
    pub(crate) retry_after: Option<&'static str>,
    pub(crate) delay: Duration,
}

impl Canned {
    pub(crate) fn json(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            body: body.into(),
            content_type: "application/json",
            retry_after: None,
            delay: Duration::ZERO,
        }
    }

    pub(crate) fn status(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            content_type: "text/html",
            ..Self::json(body)
        }
    }

    pub(crate) fn delayed(self, delay: Duration) -> Self {
        Self { delay, ..self }
    }

    pub(crate) fn with_retry_after(self, value: &'static str) -> Self {
        Self {
            retry_after: Some(value),
            ..self
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct RecordedRequest {
    pub(crate) method: Method,
    pub(crate) uri: Uri,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
    pub(crate) arrived: Instant,
}

impl RecordedRequest {
    pub(crate) fn query_pairs(&self) -> Vec<(String, String)> {
        let query = self.uri.query().unwrap_or_default();
        url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect()
    }

    pub(crate) fn query_value(&self, key: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }
}

/// What the stand-in saw: every request, and the most ever handled at once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Recorder {
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Recorder {
    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().expect("recorder lock").clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.requests.lock().expect("recorder lock").len()
    }

    pub(crate) fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
struct Stand {
    canned: Canned,
    recorder: Recorder,
}

async fn answer(
    State(stand): State<Stand>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let arrived = Instant::now();
    let recorder = &stand.recorder;
    let now_in_flight = recorder.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    recorder
        .max_in_flight
        .fetch_max(now_in_flight, Ordering::SeqCst);
    recorder
        .requests
        .lock()
        .expect("recorder lock")
        .push(RecordedRequest {
            method,
            uri,
            headers,
            body,
            arrived,
        });
    tokio::time::sleep(stand.canned.delay).await;
    recorder.in_flight.fetch_sub(1, Ordering::SeqCst);

    let canned = &stand.canned;
    let mut response = (
        StatusCode::from_u16(canned.status).expect("valid status"),
        canned.body.clone(),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(canned.content_type),
    );
    if let Some(retry_after) = canned.retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    }
    response
}

/// Serves `canned` on every path of a fresh 127.0.0.1 port; returns its base URL.
pub(crate) async fn serve(canned: Canned) -> (String, Recorder) {
    let recorder = Recorder::default();
    let app = axum::Router::new().fallback(answer).with_state(Stand {
        canned,
        recorder: recorder.clone(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (format!("http://{address}"), recorder)
}

/// A base URL where nothing listens: bind a port, then release it.
pub(crate) async fn dead_base_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{address}")
}

pub(crate) fn expect_failure<T: std::fmt::Debug>(
    result: Result<T, UpstreamError>,
) -> UpstreamError {
    match result {
        Ok(value) => panic!("expected a failure, got {value:?}"),
        Err(error) => error,
    }
}

pub(crate) const SERVER_ERRORS: [u16; 3] = [500, 502, 503];
pub(crate) const MALFORMED_BODIES: [&str; 4] = [
    "<html><body>Bad Gateway</body></html>",
    "{\"elements\": [",
    "",
    "null",
];
