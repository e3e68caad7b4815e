//! The parameters operations share, with the limits their parsers enforce: the path ids, the
//! preconditions (`If-Match`, `If-None-Match`, `Idempotency-Key`) and the query strings of
//! the list, the detail and the place search.

use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterIn};

use super::inputs::IF_MATCH_PATTERN;
use crate::openapi::schema;
use etappe_app::places::MAX_PLACES;
pub(crate) use etappe_app::trips::MAX_PAGE;
use etappe_app::trips::{DEFAULT_ITEMS_PER_PAGE, MAX_ITEMS_PER_PAGE, SHARE_CODE_CHARS};

/// A parameter written as an OpenAPI object; its schema goes through [`schema`] (spliced in
/// whole once the document is generated).
fn parameter(mut value: Value) -> Parameter {
    let raw = value
        .as_object_mut()
        .and_then(|p| p.remove("schema"))
        .unwrap_or_else(|| json!({}));
    let mut parameter: Parameter = serde_json::from_value(value).expect("a valid parameter object");
    parameter.schema = Some(schema(raw));
    parameter
}

/// Implements `IntoParams` for a set of parameters written as OpenAPI objects.
macro_rules! params {
    ($($(#[$doc:meta])* $name:ident => [$($param:expr),* $(,)?];)*) => {$(
        $(#[$doc])*
        pub(in crate::http) struct $name;

        impl IntoParams for $name {
            fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
                vec![$(parameter($param)),*]
            }
        }
    )*};
}

fn trip_id() -> Value {
    json!({"name": "id", "in": "path", "required": true,
        "schema": {"type": "string", "format": "uuid"}, "description": "The trip's id"})
}

fn stage_id() -> Value {
    json!({"name": "stageId", "in": "path", "required": true,
        "schema": {"type": "string", "format": "uuid"}, "description": "The day's id"})
}

fn share_code() -> Value {
    json!({"name": "code", "in": "path", "required": true,
        "schema": {"type": "string", "pattern": format!("^[A-Za-z0-9_-]{{{SHARE_CODE_CHARS}}}$")},
        "description": "The public link's code"})
}

fn if_match() -> Value {
    json!({"name": "If-Match", "in": "header", "required": true,
        "schema": {"type": "string", "pattern": IF_MATCH_PATTERN},
        "description": "The strong ETag read from the trip (\"3\"), a list of them, or *; a weak tag is refused"})
}

fn if_none_match() -> Value {
    json!({"name": "If-None-Match", "in": "header", "required": false,
        "schema": {"type": "string"}, "description": "The ETag of the copy the caller has"})
}

fn idempotency_key(required: bool) -> Value {
    json!({"name": "Idempotency-Key", "in": "header", "required": required,
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,255}$"},
        "description": "16 to 255 characters of A-Z, a-z, 0-9, _ and - (a UUID works): a retry answers the same trip"})
}

fn date_query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false,
        "schema": {"type": "string", "format": "date", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "description": description})
}

params! {
    /// `{id}`.
    TripPathParam => [trip_id()];
    /// `{id}` and `{stageId}`.
    StagePathParams => [trip_id(), stage_id()];
    /// `{code}`.
    CodePathParam => [share_code()];
    /// `{code}` and `{stageId}`.
    CodeStagePathParams => [share_code(), stage_id()];
    /// `If-Match` on a structural write.
    IfMatchHeader => [if_match()];
    /// `If-None-Match` on a file or the route lines.
    IfNoneMatchHeader => [if_none_match()];
    /// `Idempotency-Key` on a creation (optional).
    IdempotencyKey => [idempotency_key(false)];
    /// `Idempotency-Key` on a duplication (required).
    RequiredIdempotencyKey => [idempotency_key(true)];
    /// `GET /trips`.
    ListQuery => [
        json!({"name": "page", "in": "query", "required": false,
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1}}),
        json!({"name": "itemsPerPage", "in": "query", "required": false,
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ITEMS_PER_PAGE,
                "default": DEFAULT_ITEMS_PER_PAGE}}),
        json!({"name": "title", "in": "query", "required": false, "schema": {"type": "string"},
            "description": "Part of the title, any case"}),
        date_query("startDate", "Trips starting on or after this day"),
        date_query("endDate", "Trips ending on or before this day"),
    ];
    /// `GET /trips/{id}/detail`.
    VersionQuery => [json!({"name": "version", "in": "query", "required": false,
        "schema": {"type": "integer", "minimum": 1, "maximum": u64::MAX},
        "description": "Read the trip as it was at this version"})];
    /// `DELETE /trips/{id}/stages/{stageId}`.
    MergeIntoQuery => [json!({"name": "mergeInto", "in": "query", "required": false,
        "schema": {"type": "string", "enum": ["previous", "next"], "default": "previous"},
        "description": "Which riding day the deleted day's route joins"})];
    /// `GET /geocode/search`.
    PlaceQuery => [
        json!({"name": "q", "in": "query", "required": true,
            "schema": {"type": "string", "minLength": 1,
                "maxLength": etappe_domain::text::NAME_MAX_CHARS, "pattern": r"\S"},
            "description": "A place name"}),
        json!({"name": "limit", "in": "query", "required": false,
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PLACES,
                "default": etappe_app::places::DEFAULT_PLACES}}),
        json!({"name": "near", "in": "query", "required": false,
            "schema": {"type": "string", "maxLength": 60,
                "pattern": r"^ *-?(90(\.0+)?|[1-8]?[0-9](\.[0-9]+)?) *, *-?(180(\.0+)?|1[0-7][0-9](\.[0-9]+)?|[1-9]?[0-9](\.[0-9]+)?) *$"},
            "description": "A point \"lat,lon\": the nearest places first among equally good matches (the trip's other places)"}),
    ];
}
