//! What the document says about answers that are not views: the problem document every error
//! is, one reusable response per error status, and the shapes handlers build on the spot
//! (share links, history, probes).

use serde_json::json;
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

use crate::openapi::build::{
    boolean, component, count, date_time, doc, list, nullable, object, opt, req, text, words,
};
use crate::openapi::{schema, shape};

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
    Unavailable = 503, "A third party failed (see upstream, failure, retryable), or, for an upload, every upload slot stayed busy (Retry-After)";
}

/// The refusals of an edit with a JSON body and `If-Match`, named once for every such route.
pub(in crate::http) struct BodyEditRefusals;

impl utoipa::IntoResponses for BodyEditRefusals {
    fn responses() -> std::collections::BTreeMap<String, RefOr<utoipa::openapi::response::Response>>
    {
        [
            BadRequest::responses(),
            Unauthorized::responses(),
            Forbidden::responses(),
            NotFound::responses(),
            BodyTimeout::responses(),
            Conflict::responses(),
            Stale::responses(),
            TooLarge::responses(),
            NotJson::responses(),
            Invalid::responses(),
            Locked::responses(),
            PreconditionRequired::responses(),
            RateLimited::responses(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The answer of an edit of the days: the trip after it, with its new version as the ETag.
pub(in crate::http) struct TripEdited;

impl utoipa::IntoResponses for TripEdited {
    fn responses() -> std::collections::BTreeMap<String, RefOr<utoipa::openapi::response::Response>>
    {
        use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, ResponseBuilder};
        let etag = HeaderBuilder::new()
            .schema(Some(
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String),
            ))
            .description(Some("The new version"))
            .build();
        let response = ResponseBuilder::new()
            .description("The trip after the edit")
            .header("ETag", etag)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("TripDetail")))
                    .build(),
            )
            .build();
        std::collections::BTreeMap::from([("200".to_owned(), response.into())])
    }
}

shape!(pub(in crate::http) FieldErrorSchema = "FieldError", object(
    "One problem with one input field.",
    vec![
        req("field", doc(text(), "The field's wire name, or `body` for the whole input.")),
        req("message", text()),
    ],
));

shape!(pub(in crate::http) ProblemSchema = "Problem", object(
    "A problem document (RFC 9457).",
    vec![
        req("type", json!({"type": "string", "format": "uri"})),
        req("title", text()),
        req("status", count(0)),
        req("detail", text()),
        req("code", words(crate::http::problem::CODES)),
        opt("errors", list(component("FieldError"))),
        opt("scope", doc(text(), "The missing scope (insufficient_scope).")),
        opt(
            "currentVersion",
            doc(count(0), "The trip's current version (stale_version)."),
        ),
        opt(
            "upstream",
            doc(
                words(["geocoder", "router", "accommodations"]),
                "The third party that failed (upstream_unavailable).",
            ),
        ),
        opt("failure", doc(text(), "How it failed, e.g. timeout after 5s.")),
        opt(
            "retryable",
            doc(boolean(), "Whether the same request may succeed later."),
        ),
        opt(
            "retryAfter",
            doc(
                count(0),
                "Seconds until the budget has room again (rate_limited, too_many_streams); also the Retry-After header.",
            ),
        ),
        opt(
            "removes",
            doc(
                list(text()),
                "What the edit would remove of what a person made, a sentence each (confirmation_required, asked with Prefer: handling=strict).",
            ),
        ),
    ],
));

shape!(pub(in crate::http) ShareLinkSchema = "ShareLink", object(
    "A trip's public link.",
    vec![
        req(
            "url",
            doc(
                text(),
                "Public, anonymous; url + `.gpx` or `.fit` downloads the trip without a token.",
            ),
        ),
        req(
            "shortCode",
            json!({"type": "string", "minLength": 11, "maxLength": 11}),
        ),
        req("createdAt", date_time()),
    ],
));

shape!(pub(in crate::http) HistorySchema = "History", object(
    "Every event of a trip, readable.",
    vec![
        req("items", list(component("HistoryItem"))),
        req("totalItems", count(0)),
    ],
));

shape!(pub(in crate::http) HistoryItemSchema = "HistoryItem", object(
    "One event of a trip's history.",
    vec![
        req("streamVersion", count(0)),
        req("type", text()),
        opt("actor", nullable(text())),
        req("at", date_time()),
        req("summary", text()),
    ],
));

shape!(pub(in crate::http) HealthSchema = "Health", object(
    "`/livez` and `/readyz`.",
    vec![
        req("status", words(["live", "ready", "unready"])),
        opt(
            "checks",
            doc(
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                "The database, the queue and the workers (readyz only).",
            ),
        ),
        opt(
            "upstreams",
            doc(
                component("Upstreams"),
                "Each third-party upstream's health (probed at most every 30 s); reported, never required (readyz only).",
            ),
        ),
    ],
));

shape!(pub(in crate::http) UpstreamsSchema = "Upstreams", object(
    "The upstreams.",
    vec![
        req("geocoder", component("UpstreamHealth")),
        req("accommodations", component("UpstreamHealth")),
        req(
            "osm",
            doc(
                component("UpstreamHealth"),
                "Where the analysis reads OpenStreetMap now: `local index` (an imported extract), `overpass` or `none`.",
            ),
        ),
        req("weather", component("UpstreamHealth")),
        req(
            "elevation",
            doc(
                component("UpstreamHealth"),
                "Heights for routes without elevation: the first source asked, `srtm` (imported tiles, then Open-Meteo when configured too), `open-meteo`, or `none`.",
            ),
        ),
        req("router", component("UpstreamHealth")),
    ],
));

shape!(pub(in crate::http) UpstreamHealthSchema = "UpstreamHealth", object(
    "One upstream's health.",
    vec![
        req(
            "provider",
            doc(
                text(),
                "nominatim or gazetteer; overpass or none; open-meteo or none; brouter, valhalla or offline.",
            ),
        ),
        req(
            "status",
            doc(text(), "up, down: <failure>, or embedded (the offline default)."),
        ),
        req(
            "required",
            doc(
                boolean(),
                "Always false: an upstream never makes the service unready.",
            ),
        ),
    ],
));

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
