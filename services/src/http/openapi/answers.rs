//! What the document says about answers that are not views: the problem document every error
//! is, one reusable response per error status, and the shapes handlers build on the spot
//! (share links, history, probes).

use std::collections::BTreeMap;

use serde_json::json;
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

use crate::openapi::schema;

crate::problem::documented::problems! {
    [pub(in crate::http)]
    BadRequest = 400, "Unknown field or query parameter, malformed body or header";
    Unauthorized = 401, "No valid token";
    Forbidden = 403, "Missing scope (trips:read to read, trips:write to change)";
    NotFound = 404, "No such trip or day (or someone else's)";
    BodyTimeout = 408, "The request body did not arrive within the server's deadline";
    Conflict = 409, "Concurrent change, or an idempotency key reused with another body";
    Stale = 412, "Stale version: If-Match names a version that is not the current one";
    TooLarge = 413, "Body too large";
    NotJson = 415, "Not JSON (or, for an upload, not multipart/form-data)";
    Invalid = 422, "Invalid value, or the trip cannot do this yet";
    Locked = 423, "Trip locked (its start date is today or earlier), judged before the edit";
    PreconditionRequired = 428, "If-Match missing";
    RateLimited = 429, "Over a budget: reads, changes (shared with MCP) and trip creations per credential a minute, public-link reads per address and per code, live streams per user";
    Unavailable = 503, "A third party failed (see upstream, failure, retryable)";
}

/// One problem with one input field.
#[derive(ToSchema)]
#[schema(as = FieldError)]
#[allow(dead_code)]
pub(in crate::http) struct FieldErrorSchema {
    /// The field's wire name, or `body` for the whole input.
    field: String,
    message: String,
}

/// A problem document (RFC 9457).
#[derive(ToSchema)]
#[schema(as = Problem)]
#[allow(dead_code)]
pub(in crate::http) struct ProblemSchema {
    #[schema(rename = "type", schema_with = problem_type)]
    type_uri: String,
    title: String,
    status: u16,
    detail: String,
    #[schema(schema_with = problem_code)]
    code: String,
    #[schema(required = false)]
    errors: Vec<FieldErrorSchema>,
    /// The missing scope (insufficient_scope).
    #[schema(required = false)]
    scope: String,
    /// The trip's current version (stale_version).
    #[schema(rename = "currentVersion", required = false)]
    current_version: u64,
    /// The third party that failed (upstream_unavailable).
    #[schema(required = false, schema_with = upstream_name)]
    upstream: String,
    /// How it failed, e.g. timeout after 5s.
    #[schema(required = false)]
    failure: String,
    /// Whether the same request may succeed later.
    #[schema(required = false)]
    retryable: bool,
    /// Seconds until the budget has room again (rate_limited, too_many_streams); also the
    /// Retry-After header.
    #[schema(rename = "retryAfter", required = false)]
    retry_after: u64,
}

fn problem_type() -> RefOr<Schema> {
    schema(json!({"type": "string", "format": "uri"}))
}

fn problem_code() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": crate::http::problem::CODES}))
}

fn upstream_name() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["geocoder", "router", "accommodations"]}))
}

/// A trip's public link.
#[derive(ToSchema)]
#[schema(as = ShareLink, rename_all = "camelCase")]
#[allow(dead_code)]
pub(in crate::http) struct ShareLinkSchema {
    /// Public, anonymous; url + `.gpx` or `.fit` downloads the trip without a token.
    url: String,
    #[schema(min_length = 11, max_length = 11)]
    short_code: String,
    created_at: chrono::DateTime<chrono::Utc>,
}

/// Every event of a trip, readable.
#[derive(ToSchema)]
#[schema(as = History, rename_all = "camelCase")]
#[allow(dead_code)]
pub(in crate::http) struct HistorySchema {
    items: Vec<HistoryItemSchema>,
    total_items: u64,
}

/// One event of a trip's history.
#[derive(ToSchema)]
#[schema(as = HistoryItem, rename_all = "camelCase")]
#[allow(dead_code)]
pub(in crate::http) struct HistoryItemSchema {
    stream_version: u64,
    #[schema(rename = "type")]
    kind: String,
    actor: Option<String>,
    at: chrono::DateTime<chrono::Utc>,
    summary: String,
}

/// `/livez` and `/readyz`.
#[derive(ToSchema)]
#[schema(as = Health)]
#[allow(dead_code)]
pub(in crate::http) struct HealthSchema {
    #[schema(schema_with = health_status)]
    status: String,
    /// The database, the queue and the workers (readyz only).
    #[schema(required = false)]
    checks: BTreeMap<String, String>,
    /// Each third-party upstream's health (probed at most every 30 s); reported, never
    /// required (readyz only).
    #[schema(required = false)]
    upstreams: UpstreamsSchema,
}

fn health_status() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["live", "ready", "unready"]}))
}

/// The upstreams.
#[derive(ToSchema)]
#[schema(as = Upstreams)]
#[allow(dead_code)]
pub(in crate::http) struct UpstreamsSchema {
    geocoder: UpstreamHealthSchema,
    accommodations: UpstreamHealthSchema,
    /// Where the analysis reads OpenStreetMap now: `local index` (an imported extract),
    /// `overpass` or `none`.
    osm: UpstreamHealthSchema,
    weather: UpstreamHealthSchema,
    /// Heights for routes without elevation: the first source asked, `srtm` (imported
    /// tiles, then Open-Meteo when configured too), `open-meteo`, or `none`.
    elevation: UpstreamHealthSchema,
    router: UpstreamHealthSchema,
}

/// One upstream's health.
#[derive(ToSchema)]
#[schema(as = UpstreamHealth)]
#[allow(dead_code)]
pub(in crate::http) struct UpstreamHealthSchema {
    /// nominatim or gazetteer; overpass or none; open-meteo or none; brouter, valhalla or
    /// offline.
    provider: String,
    /// up, down: <failure>, or embedded (the offline default).
    status: String,
    /// Always false: an upstream never makes the service unready.
    required: bool,
}

/// A file (GPX or FIT): its bytes, described by its media type, not by a JSON schema.
#[derive(Debug)]
pub(in crate::http) struct FileSchema;

impl utoipa::PartialSchema for FileSchema {
    fn schema() -> RefOr<Schema> {
        schema(json!({"description": "The file's bytes, as its media type says"}))
    }
}

impl ToSchema for FileSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "File".into()
    }
}
