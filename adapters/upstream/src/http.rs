//! The one send-and-read path all adapters share, so timeouts, body limits
//! and error classification behave the same for every upstream.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use reqwest::{RequestBuilder, StatusCode, header::RETRY_AFTER};
use serde::de::DeserializeOwned;
use tracing::Instrument as _;

use crate::error::{Upstream, UpstreamError, parse_retry_after};

/// Bodies larger than this are refused: no answer we ask for is near it, and
/// an upstream gone wrong must not be able to exhaust our memory.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Error bodies are only read for their message, so a small cap suffices.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) body: String,
}

impl Answer {
    /// The body of a 2xx answer, or the classified status error.
    pub(crate) fn into_success_body(self, upstream: Upstream) -> Result<String, UpstreamError> {
        match UpstreamError::from_status(upstream, self.status, self.retry_after) {
            Some(error) => {
                tracing::warn!(%upstream, failure = %error.failure, "upstream refused or failed");
                Err(error)
            }
            None => Ok(self.body),
        }
    }
}

/// Asks an upstream's status endpoint whether it serves. `any_answer`: for an upstream with
/// no status endpoint, any HTTP answer proves it is reachable; else only a 2xx does.
pub(crate) async fn probe(
    upstream: Upstream,
    request: RequestBuilder,
    timeout: Duration,
    any_answer: bool,
) -> Result<String, UpstreamError> {
    let answer = send(upstream, request, timeout).await?;
    if any_answer {
        return Ok(answer.body);
    }
    answer.into_success_body(upstream)
}

/// What a process does with each upstream call's end: its upstream, its outcome (`ok`,
/// `status_4xx`, `status_5xx`, `failed` for no answer) and its seconds. The process's metrics
/// install one ([`observe_calls`]); without, calls are only traced.
pub type CallObserver = Arc<dyn Fn(&'static str, &'static str, f64) + Send + Sync>;

static OBSERVER: RwLock<Option<CallObserver>> = RwLock::new(None);

/// Installs `observer` for every upstream call of this process (the last one installed wins).
pub fn observe_calls(observer: CallObserver) {
    if let Ok(mut slot) = OBSERVER.write() {
        *slot = Some(observer);
    }
}

/// Sends the request with `timeout` covering connect, headers and body, and
/// reads the whole body. Transport failures are classified here; statuses
/// are left to the caller because some upstreams explain errors in the body.
/// Each call is a span of its own (`upstream`) and reaches the installed observer.
pub(crate) async fn send(
    upstream: Upstream,
    request: RequestBuilder,
    timeout: Duration,
) -> Result<Answer, UpstreamError> {
    let started = Instant::now();
    let span = tracing::info_span!(
        "upstream",
        upstream = upstream.as_str(),
        status = tracing::field::Empty
    );
    let answer = send_once(upstream, request, timeout)
        .instrument(span.clone())
        .await;
    let outcome = match &answer {
        Ok(a) if a.status.is_success() => "ok",
        Ok(a) if a.status.is_client_error() => "status_4xx",
        Ok(_) => "status_5xx",
        Err(_) => "failed",
    };
    if let Ok(a) = &answer {
        span.record("status", a.status.as_u16());
    }
    if let Some(observer) = OBSERVER.read().ok().and_then(|o| o.clone()) {
        observer(upstream.as_str(), outcome, started.elapsed().as_secs_f64());
    }
    answer
}

async fn send_once(
    upstream: Upstream,
    request: RequestBuilder,
    timeout: Duration,
) -> Result<Answer, UpstreamError> {
    let mut response = request
        .timeout(timeout)
        .send()
        .await
        .map_err(|error| transport_failure(upstream, &error, timeout))?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(parse_retry_after);

    if !status.is_success() {
        // The status already tells what went wrong; a body that fails to
        // arrive must not turn a clear "server error 503" into a timeout.
        let bytes = read_capped(&mut response, MAX_ERROR_BODY_BYTES)
            .await
            .unwrap_or_default();
        let body = String::from_utf8_lossy(&bytes).into_owned();
        return Ok(Answer {
            status,
            retry_after,
            body,
        });
    }

    let bytes = match read_capped(&mut response, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(ReadFailure::Transport(error)) => {
            return Err(transport_failure(upstream, &error, timeout));
        }
        Err(ReadFailure::TooLarge) => {
            return Err(UpstreamError::unexpected(
                upstream,
                format!("body larger than {MAX_BODY_BYTES} bytes"),
            ));
        }
    };
    let body = String::from_utf8(bytes)
        .map_err(|_| UpstreamError::unexpected(upstream, "body is not UTF-8"))?;
    Ok(Answer {
        status,
        retry_after,
        body,
    })
}

/// Decodes a JSON body; a shape mismatch is the upstream's fault, not ours.
pub(crate) fn parse_json<T: DeserializeOwned>(
    upstream: Upstream,
    body: &str,
) -> Result<T, UpstreamError> {
    serde_json::from_str(body).map_err(|error| {
        let detail = crate::text::printable(&error.to_string(), 200)
            .unwrap_or_else(|| "undecodable JSON".to_owned());
        UpstreamError::unexpected(upstream, detail)
    })
}

fn transport_failure(
    upstream: Upstream,
    error: &reqwest::Error,
    timeout: Duration,
) -> UpstreamError {
    let classified = UpstreamError::from_transport(upstream, error, timeout);
    tracing::warn!(%upstream, failure = %classified.failure, "upstream request failed");
    classified
}

enum ReadFailure {
    Transport(reqwest::Error),
    TooLarge,
}

async fn read_capped(
    response: &mut reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, ReadFailure> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadFailure::Transport)? {
        if bytes.len() + chunk.len() > limit {
            return Err(ReadFailure::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// What a client of a service over HTTP holds: the shared HTTP client, the cache of the
/// service's answers, and how long one call may take.
#[derive(Clone)]
pub struct CachedHttp {
    pub client: reqwest::Client,
    pub cache: std::sync::Arc<dyn crate::ResponseCache>,
    pub timeout: Duration,
}

impl std::fmt::Debug for CachedHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedHttp")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Joins path segments onto a configured base URL. Done by segments rather
/// than `Url::join` so a base with a path prefix (`https://host/nominatim`)
/// keeps it whether or not it ends in a slash.
pub(crate) fn endpoint(base_url: &str, segments: &[&str]) -> Result<url::Url, crate::ConfigError> {
    let invalid = |reason: &str| crate::ConfigError::InvalidBaseUrl {
        url: base_url.to_owned(),
        reason: reason.to_owned(),
    };
    let mut url = url::Url::parse(base_url).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("scheme must be http or https"));
    }
    url.set_query(None);
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|()| invalid("cannot be a base"))?
        .pop_if_empty()
        .extend(segments);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::endpoint;

    #[test]
    fn endpoints_keep_the_base_path() {
        let url = |base: &str| endpoint(base, &["api", "interpreter"]).map(|u| u.to_string());
        assert_eq!(
            url("http://127.0.0.1:8080").as_deref(),
            Ok("http://127.0.0.1:8080/api/interpreter")
        );
        assert_eq!(
            url("https://host/overpass/").as_deref(),
            Ok("https://host/overpass/api/interpreter")
        );
        assert_eq!(
            url("https://host/overpass").as_deref(),
            Ok("https://host/overpass/api/interpreter")
        );
        assert!(url("ftp://host").is_err());
        assert!(url("not a url").is_err());
    }
}
