//! What reaches the MCP transport is one well-formed JSON-RPC message; anything else is
//! answered here in JSON-RPC terms, because the transport answers every body it cannot read
//! with a plain-text HTTP 415, which no client maps to a reason:
//!
//! - a body that is not JSON: `-32700` (parse error), HTTP 400, id `null`;
//! - a batch (a JSON array): `-32600`, HTTP 400. Batches were required by 2025-03-26 only and
//!   removed by 2025-06-18, the oldest revision this server offers, so they are refused rather
//!   than half-served;
//! - a `tools/call` without a string `name`, or with `arguments` that are not an object, and
//!   any other request whose params the protocol's schema refuses: `-32602` (invalid params),
//!   with the request's id, so the client can tie it to its call;
//! - a message that is not a JSON-RPC request, notification or response: `-32600`;
//! - a body over 4 MiB: `-32600`, HTTP 413, saying the limit — once the client has sent it
//!   (up to 16 MiB more is read and thrown away), so that it reads the refusal.
//!
//! Only `POST` with a JSON content type is read; the transport keeps answering the rest.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

/// The largest body read (the transport's own limit).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How much more of an oversized body is read, and thrown away, before it is refused: a
/// client still sending when the refusal went out would meet a reset connection instead of
/// the JSON-RPC error. Past this the connection is cut, as before.
const DRAIN_BYTES: usize = 4 * MAX_BODY_BYTES;

/// A message's body, when it holds at most [`MAX_BODY_BYTES`]; `None` when it holds more (or
/// cannot be read), after reading on (up to [`DRAIN_BYTES`] more, within the request's body
/// deadline) so that the client finishes sending and reads the refusal. What is over the
/// limit is never kept.
pub async fn read_body(body: Body) -> Option<Bytes> {
    use futures::StreamExt;
    let mut chunks = body.into_data_stream();
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.ok()?;
        seen = seen.saturating_add(chunk.len());
        if seen <= MAX_BODY_BYTES {
            kept.extend_from_slice(&chunk);
        } else if seen > MAX_BODY_BYTES + DRAIN_BYTES {
            return None;
        }
    }
    (seen <= MAX_BODY_BYTES).then(|| Bytes::from(kept))
}

/// How much of a parser's message is quoted back (it may echo the caller's text).
const DETAIL_CHARS: usize = 160;

/// A JSON-RPC error answered before the transport.
#[derive(Debug, PartialEq)]
pub struct Rejection {
    pub status: StatusCode,
    pub id: Value,
    pub code: i64,
    pub message: String,
    /// The error's `data`, when it has one.
    pub data: Option<Value>,
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = self.data {
            error["data"] = data;
        }
        let body = json!({"jsonrpc": "2.0", "id": self.id, "error": error});
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The revision a request names in `MCP-Protocol-Version` when this server does not serve
/// it (a client speaking 2025-03-26 or 2024-11-05 is told at once, not half-served). Requests
/// without the header (an `initialize`, which names its revision in its body) pass.
fn unsupported_version(request: &Request) -> Option<String> {
    let asked = request.headers().get("mcp-protocol-version")?;
    let asked = asked.to_str().unwrap_or_default().trim();
    (!super::SUPPORTED_VERSIONS
        .iter()
        .any(|v| v.to_string() == asked))
    .then(|| {
        etappe_domain::text::strip_controls(asked)
            .chars()
            .take(64)
            .collect()
    })
}

/// The answer to an unsupported revision: 400, as the specification asks, with the request's
/// id and the protocol's error `-32022`, whose data lists what is served (SEP-2575), so a
/// client can pick a revision it shares.
fn version_refusal(requested: &str, id: Value) -> Rejection {
    let served: Vec<String> = super::SUPPORTED_VERSIONS
        .iter()
        .map(ToString::to_string)
        .collect();
    Rejection {
        status: StatusCode::BAD_REQUEST,
        id,
        code: i64::from(rmcp::model::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0),
        message: format!(
            "Unsupported MCP-Protocol-Version {}: this server speaks {}.",
            etappe_domain::text::quote(requested),
            served.join(", ")
        ),
        data: Some(json!({"requested": requested, "supported": served})),
    }
}

/// The middleware: reads the body once, answers what the transport could not, and hands the
/// same bytes on otherwise.
pub async fn refuse_malformed(request: Request, next: Next) -> Response {
    if let Some(requested) = unsupported_version(&request) {
        // The refusal names the request it answers, so the body is read for its id.
        let id = if request.method() == Method::POST {
            let body = read_body(request.into_body()).await.unwrap_or_default();
            serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|m| m.get("id").cloned())
                .filter(|id| id.is_string() || id.is_number())
                .unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        return version_refusal(&requested, id).into_response();
    }
    if request.method() != Method::POST || !is_json(&request) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Some(bytes) = read_body(body).await else {
        return too_large().into_response();
    };
    match check(&bytes) {
        Ok(()) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(rejection) => rejection.into_response(),
    }
}

/// A body over [`MAX_BODY_BYTES`]: HTTP 413 and, in JSON-RPC terms, an invalid request
/// (its id unread, so `null`), saying the limit.
pub fn too_large() -> Rejection {
    Rejection {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        id: Value::Null,
        code: -32600,
        message: format!(
            "Invalid Request: the message is larger than {} MiB ({MAX_BODY_BYTES} bytes), the most this server reads.",
            MAX_BODY_BYTES / (1024 * 1024)
        ),
        data: Some(json!({"maxBytes": MAX_BODY_BYTES})),
    }
}

fn bounded(detail: &str) -> String {
    etappe_domain::text::strip_controls(detail)
        .chars()
        .take(DETAIL_CHARS)
        .collect()
}

/// `Ok` when `body` is one message the transport reads.
pub fn check(body: &Bytes) -> Result<(), Rejection> {
    let message: Value = serde_json::from_slice(body).map_err(|e| Rejection {
        status: StatusCode::BAD_REQUEST,
        id: Value::Null,
        code: -32700,
        message: format!(
            "Parse error: the body is not JSON ({}).",
            bounded(&e.to_string())
        ),
        data: None,
    })?;
    let invalid_request = |id: Value, message: String| Rejection {
        status: StatusCode::BAD_REQUEST,
        id,
        code: -32600,
        message,
        data: None,
    };
    let Value::Object(object) = &message else {
        return Err(if message.is_array() {
            invalid_request(
                Value::Null,
                "Batches are not supported: send one JSON-RPC message per POST (this server speaks MCP 2025-06-18 and later, which removed batching).".to_owned(),
            )
        } else {
            invalid_request(
                Value::Null,
                "Invalid request: a JSON-RPC message is an object.".to_owned(),
            )
        });
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let method = object.get("method").and_then(Value::as_str);
    let invalid_params = |message: String| Rejection {
        status: StatusCode::OK,
        id: id.clone(),
        code: -32602,
        message,
        data: None,
    };
    if method == Some("tools/call") {
        let params = object.get("params");
        let name = params.and_then(|p| p.get("name"));
        if !name.is_some_and(Value::is_string) {
            return Err(invalid_params(
                "Invalid params: tools/call needs params.name, a tool name (a string); see tools/list.".to_owned(),
            ));
        }
        if params
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null())
        {
            return Err(invalid_params(
                "Invalid params: tools/call params.arguments must be an object of the tool's arguments.".to_owned(),
            ));
        }
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(message.clone()) {
        Ok(_) => Ok(()),
        Err(e) => Err(match (method, id.is_null()) {
            (Some(method), false) => invalid_params(format!(
                "Invalid params for {}: {}.",
                etappe_domain::text::quote(method),
                bounded(&e.to_string())
            )),
            _ => invalid_request(
                id.clone(),
                format!(
                    "Invalid request: not a JSON-RPC 2.0 message ({}).",
                    bounded(&e.to_string())
                ),
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body sent in 64 KiB chunks, `total` bytes in all, and how many were taken from it.
    fn chunked(total: usize) -> (Body, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::Ordering;
        let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = taken.clone();
        let chunk = 64 * 1024;
        let chunks = (0..total.div_ceil(chunk)).map(move |i| {
            let size = chunk.min(total - i * chunk);
            counter.fetch_add(size, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Bytes::from(vec![b' '; size]))
        });
        (Body::from_stream(futures::stream::iter(chunks)), taken)
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_read_to_its_end_but_not_kept() {
        use std::sync::atomic::Ordering;
        let (at_limit, _) = chunked(MAX_BODY_BYTES);
        assert_eq!(
            read_body(at_limit).await.map(|b| b.len()),
            Some(MAX_BODY_BYTES)
        );
        // Over it: refused, after the client has sent it all (so it reads the refusal).
        let (over, taken) = chunked(5 * 1024 * 1024);
        assert_eq!(read_body(over).await, None);
        assert_eq!(taken.load(Ordering::SeqCst), 5 * 1024 * 1024);
        // Far over it: not read to the end.
        let (huge, taken) = chunked(64 * 1024 * 1024);
        assert_eq!(read_body(huge).await, None);
        assert!(taken.load(Ordering::SeqCst) <= MAX_BODY_BYTES + DRAIN_BYTES + 64 * 1024);
    }

    fn code(body: &str) -> Option<(u16, i64, Value)> {
        check(&Bytes::from(body.to_owned()))
            .err()
            .map(|r| (r.status.as_u16(), r.code, r.id))
    }

    #[test]
    fn each_malformed_body_gets_its_json_rpc_error() {
        assert_eq!(code("{not json"), Some((400, -32700, Value::Null)));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#),
            Some((400, -32600, Value::Null))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#),
            Some((200, -32602, json!(7)))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":3}}"#),
            Some((200, -32602, json!("a")))
        );
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_trip","arguments":[1]}}"#
            ),
            Some((200, -32602, json!(8)))
        );
        assert_eq!(code("42"), Some((400, -32600, Value::Null)));
    }

    #[test]
    fn a_well_formed_message_passes() {
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_trip","arguments":{"id":"x"}}}"#
            ),
            None
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
    }
}
