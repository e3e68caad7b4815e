//! Request schemas that state what the server enforces, built from the domain's own field
//! lists, ranges and limits (never retyped): the settings of a creation and of an update, the
//! day edits, the places to sleep, scans and detours, and the `If-Match` header.
//!
//! Each schema is exactly as strict as the parser behind it, no more: where the parser
//! forgives (a duplicated accommodation type is dropped, `null` is "absent" on creation), the
//! schema allows it too, so a client that follows the document is never refused for its
//! shape, and one that does not is.

use std::borrow::Cow;

use chrono::{Datelike, NaiveDate};
use etappe_domain::text::LINK_MAX_BYTES;
use etappe_domain::trip::SCAN_RADIUS_KM;
use etappe_domain::trip::input::{DATE_FUTURE_YEARS, DATE_PAST_DAYS, NullMeans};
use etappe_domain::trip::plan::{MAX_VIA, PLACE_NAME_MAX_CHARS};
use etappe_domain::trip::settings::{SettingField, TripSettings};
use serde_json::{Map, Value, json};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::openapi::inputs::{self, ACCOMMODATION_TYPES, Kind, LAT, LON};
use crate::openapi::schema;

/// An `If-Match` the server evaluates: `*`, or one or more strong ETags (`"3"`, `"3", "4"`).
/// A weak tag (`W/"3"`) never matches under strong comparison, so it is refused.
pub(crate) const IF_MATCH_PATTERN: &str = r#"^(\*|"[0-9]{1,19}"([ \t]*,[ \t]*"[0-9]{1,19}")*)$"#;

/// What a source link must look like: https, a host name (no user name or password), an
/// optional port, any path. The parser also accepts IP addresses and, for hosts the operator
/// allowed, http; the document names the form every deployment accepts.
const SOURCE_URL_PATTERN: &str = r"^\s*[Hh][Tt][Tt][Pp][Ss]://[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z][A-Za-z0-9-]*)*(:[0-9]{1,4})?([/?#][\s\S]*)?\s*$";

/// A name that keeps a visible character once control and format characters are removed
/// and it is trimmed (`strip_controls`, then `trim`).
const VISIBLE: &str = r"[^\s\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]";

/// Latitude and longitude as the parsers check them (on the globe).
fn latitude() -> Value {
    strict(Kind::Number(LAT), false)
}

fn longitude() -> Value {
    strict(Kind::Number(LON), false)
}

/// A `YYYY-MM-DD` date in the years that lie wholly inside the window the parser accepts
/// on `today` (`DATE_PAST_DAYS` back, `DATE_FUTURE_YEARS` ahead). JSON Schema cannot compare
/// dates, so the days at the window's two ragged ends are left out: a client that follows
/// the document is never refused for a date. The document is rebuilt each day.
pub(crate) fn trip_date_pattern(today: NaiveDate) -> String {
    let earliest = today - chrono::Duration::days(DATE_PAST_DAYS);
    let latest = today
        .with_year(today.year() + DATE_FUTURE_YEARS)
        .unwrap_or(today + chrono::Duration::days(3652));
    let first = if earliest.ordinal() == 1 {
        earliest.year()
    } else {
        earliest.year() + 1
    };
    let last = if latest.month() == 12 && latest.day() == 31 {
        latest.year()
    } else {
        latest.year() - 1
    };
    let years: Vec<String> = (first..=last).map(|y| y.to_string()).collect();
    format!(
        "^({})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
        years.join("|")
    )
}

/// A field of the one input catalogue (`openapi::inputs`) as the document states it: exactly
/// as strict as the parser behind it (a name must keep a visible character, a date lies in
/// the accepted years, a list of words has at least one), `null` in the type where it is
/// accepted.
fn strict(kind: Kind, nullable: bool) -> Value {
    let mut s = match kind {
        Kind::Text { min, max } => {
            let mut s = json!({"type": "string"});
            if min > 0 {
                s["minLength"] = json!(min);
                s["pattern"] = json!(VISIBLE);
            }
            if max > 0 {
                s["maxLength"] = json!(max);
            }
            s
        }
        Kind::SourceLink { max } => json!({"type": "string", "minLength": 1, "maxLength": max,
            "pattern": SOURCE_URL_PATTERN}),
        Kind::Date { nullable } => {
            let date = json!({"type": "string", "format": "date",
                "pattern": trip_date_pattern(chrono::Utc::now().date_naive())});
            // `null` clears a date on an update (and is "absent" on a creation).
            if nullable { or_null(date) } else { date }
        }
        Kind::Integer { min, max } => inputs::integer_keywords(min, max),
        Kind::Number(range) => inputs::number_keywords(range, |n| json!(n)),
        Kind::Boolean => json!({"type": "boolean"}),
        Kind::OneOf(values) => json!({"type": "string", "enum": values}),
        // Duplicates are accepted and dropped, so the schema does not ask for unique items;
        // the accommodation types are a component of the document, named there once.
        Kind::AnyOf(values) => {
            let items = if values == ACCOMMODATION_TYPES {
                json!({"$ref": "#/components/schemas/AccommodationType"})
            } else {
                json!({"enum": values})
            };
            json!({"type": "array", "minItems": 1, "items": items})
        }
        Kind::List { max } => json!({"type": "array", "maxItems": max,
            "items": {"type": "string", "minLength": 1}}),
        Kind::Point => json!({"type": "object", "required": ["lat", "lon"],
            "additionalProperties": false,
            "properties": {"lat": latitude(), "lon": longitude(),
                "ele": {"description": "Accepted and ignored: the route's own is used."}}}),
        Kind::Object(fields) | Kind::Named(fields) => {
            let properties: Map<String, Value> = fields
                .iter()
                .map(|f| (f.name.to_owned(), strict(f.kind, f.nullable)))
                .collect();
            json!({"type": "object", "properties": properties, "additionalProperties": false})
        }
    };
    if nullable {
        s = or_null(s);
    }
    s
}

/// `schema` with `null` added to its type.
fn or_null(mut schema: Value) -> Value {
    let mut kinds: Vec<Value> = match schema["type"].take() {
        Value::Array(a) => a,
        other => vec![other],
    };
    if !kinds.contains(&json!("null")) {
        kinds.push(json!("null"));
    }
    schema["type"] = Value::Array(kinds);
    schema
}

/// One setting's schema, from the one catalogue (a new field does not compile until it is
/// described there), with its default from `defaults` (the domain's default settings as
/// JSON, read once per document) where it is a value a client may send.
fn setting(field: SettingField, nulls: NullMeans, defaults: &Value) -> Value {
    let described = inputs::setting(field);
    let mut s = strict(described.field.kind, described.field.nullable);
    if !described.about.is_empty() {
        s["description"] = json!(described.about);
    }
    let plain = matches!(
        described.field.kind,
        Kind::Number(_) | Kind::Integer { .. } | Kind::Boolean | Kind::OneOf(_)
    );
    match defaults.get(field.name()) {
        Some(default) if plain && !default.is_null() => s["default"] = default.clone(),
        _ => {}
    }
    if nulls == NullMeans::Absent {
        // On a creation `null` reads as "left out", whatever the field.
        s = or_null(s);
    }
    s
}

fn settings_properties(nulls: NullMeans) -> Map<String, Value> {
    let defaults = serde_json::to_value(TripSettings::default()).unwrap_or_default();
    SettingField::ALL
        .into_iter()
        .map(|f| (f.name().to_owned(), setting(f, nulls, &defaults)))
        .collect()
}

/// Implements `ToSchema` for a request schema built by a function.
macro_rules! request_schema {
    ($($(#[$doc:meta])* $name:ident => $build:expr;)*) => {$(
        $(#[$doc])*
        pub(in crate::http) struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                schema($build)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                stringify!($name).into()
            }
        }
    )*};
}

fn create_trip() -> Value {
    let mut properties = settings_properties(NullMeans::Absent);
    properties.insert(
        inputs::SOURCE_URL.0.name.into(),
        described(inputs::SOURCE_URL.0, inputs::SOURCE_URL.1),
    );
    properties.insert("plan".into(), plan(true));
    json!({"type": "object", "properties": properties,
        "oneOf": [{"required": ["sourceUrl"]}, {"required": ["plan"]}],
        "description": "A route link (sourceUrl) or places to route (plan), exactly one.",
        "additionalProperties": false})
}

/// A place of a plan: a name the geocoder resolves, `"lat,lon"`, or coordinates.
fn plan_place(description: &str) -> Value {
    json!({"description": description, "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": PLACE_NAME_MAX_CHARS, "pattern": VISIBLE,
            "description": "A place name (its clear best match: an exact name, the most populous) or \"lat,lon\""},
        {"type": "object", "required": ["lat", "lon"], "additionalProperties": false,
            "properties": {"lat": latitude(), "lon": longitude(),
                "name": {"type": ["string", "null"], "minLength": 1,
                    "maxLength": PLACE_NAME_MAX_CHARS, "pattern": VISIBLE,
                    "description": "Optional; null (as `detail.plan` shows an unnamed place) is no name"}}},
    ]})
}

/// `plan`: places the routing engine routes (needs `ETAPPE_ROUTER`). On creation `from` and
/// `to` are required; on an update the fields absent keep their value.
fn plan(creating: bool) -> Value {
    let required: Vec<&str> = if creating { vec!["from", "to"] } else { vec![] };
    json!({"type": "object", "required": required, "additionalProperties": false,
    "description": "Places to route with the configured routing engine (refused with 422 not_configured when there is none); a name that is ambiguous is refused listing the candidates.",
    "properties": {
        "from": plan_place("Where the route starts"),
        "to": plan_place("Where it ends"),
        "via": {"type": "array", "maxItems": MAX_VIA, "items": plan_place("A place to pass"),
            "description": "Places to pass, in order"},
        "profile": described(inputs::PLAN_PROFILE.0, inputs::PLAN_PROFILE.1),
    }})
}

fn update_settings() -> Value {
    let mut properties = settings_properties(NullMeans::Clear);
    properties.insert("plan".into(), plan(false));
    json!({"type": "object", "properties": properties,
        "additionalProperties": false,
        "description": "Only the settings present change; null clears a date. Changing endDate, fatigueFactor, elevationPenalty or maxDistancePerDay (or startDate when endDate is set) cuts the days again; so does a planned trip's plan (other places or profile: routed again; the plan's fields absent keep their value). plan is refused on a trip from a link or file."})
}

/// Where a day ends: `distance` km from its start, or the route point nearest `endPoint` —
/// one of them, not both.
fn boundary_properties() -> Map<String, Value> {
    inputs::DAY_END_FIELDS
        .iter()
        .map(|(field, about)| (field.name.to_owned(), described(*field, about)))
        .collect()
}

/// A field of the catalogue as the document states it, with its sentence.
fn described(field: inputs::Field, about: &str) -> Value {
    let mut s = strict(field.kind, field.nullable);
    s["description"] = json!(about);
    s
}

const NOT_BOTH: &str = "give distance or endPoint, not both";

fn add_stage() -> Value {
    let mut properties = boundary_properties();
    properties.insert(
        "stageId".into(),
        json!({"type": "string", "format": "uuid",
            "description": "The day to split; the new day follows it"}),
    );
    json!({"type": "object", "required": ["stageId"], "properties": properties,
        "additionalProperties": false, "not": {"required": ["distance", "endPoint"]},
        "anyOf": [{"required": ["distance"]}, {"required": ["endPoint"]}],
        "description": format!("{NOT_BOTH}; one of them is required: where the day is split")})
}

fn update_stage() -> Value {
    json!({"type": "object", "properties": boundary_properties(),
        "additionalProperties": false, "not": {"required": ["distance", "endPoint"]},
        "anyOf": [{"required": ["distance"]}, {"required": ["endPoint"]}, {"required": ["label"]}],
        "description": format!("{NOT_BOTH}; an update needs one of them and/or label")})
}

request_schema! {
    /// `POST /trips`.
    CreateTrip => create_trip();
    /// `PATCH /trips/{id}`.
    UpdateSettings => update_settings();
    /// `POST /trips/{id}/stages`.
    AddStage => add_stage();
    /// `PATCH /trips/{id}/stages/{stageId}`.
    UpdateStage => update_stage();
    /// `PATCH /trips/{id}/stages/{stageId}/move`.
    /// `POST /trips/{id}/restore`.
    RestoreVersion => json!({"type": "object", "required": ["version"], "additionalProperties": false,
        "properties": {"version": {"type": "integer", "minimum": 1, "maximum": u64::MAX,
            "description": "The version to make the trip again"}}});
    MoveStage => json!({"type": "object", "required": ["toIndex"], "additionalProperties": false,
        "properties": {"toIndex": described(inputs::TO_INDEX,
            "The 0-based position the day moves to")}});
    /// `PATCH /trips/{id}/stages/{stageId}/accommodation`: `lat` and `lon` of one of the
    /// day's candidates choose it; neither (or both null) clears the choice.
    ChooseAccommodation => json!({"type": "object", "additionalProperties": false,
        "properties": {"lat": {"type": ["number", "null"]}, "lon": {"type": ["number", "null"]},
            "name": described(inputs::OWN_PLACE_NAME,
                "With lat and lon: a place of your own (no candidate needed)")},
        "anyOf": [
            {"required": ["lat", "lon"], "properties": {"lat": latitude(), "lon": longitude()}},
            {"properties": {"lat": {"type": "null"}, "lon": {"type": "null"}},
                "not": {"required": ["name"]}}
        ]});
    /// `POST /trips/{id}/stages/{stageId}/accommodations/manual`.
    ManualAccommodation => json!({"type": "object", "required": ["name", "lat", "lon"],
        "additionalProperties": false,
        "properties": {
            "name": strict(inputs::OWN_PLACE_NAME.kind, false),
            "lat": latitude(), "lon": longitude(),
            "priceTotal": {"type": ["number", "null"], "minimum": 0, "maximum": 10000,
                "description": "€ for the night"},
            "url": {"type": ["string", "null"], "maxLength": LINK_MAX_BYTES, "pattern": "^https?://"}}});
    /// `POST /trips/{id}/stages/{stageId}/poi-waypoint`.
    AddWaypoint => {
        let mut s = strict(Kind::Object(&inputs::WAYPOINT_FIELDS), false);
        s["required"] = json!(inputs::WAYPOINT_FIELDS.map(|f| f.name));
        s
    };
    /// `POST /trips/{id}/accommodations/scan`.
    ScanAccommodations => json!({"type": "object", "additionalProperties": false,
        "properties": {
            "radiusKm": {"type": ["number", "null"], "minimum": SCAN_RADIUS_KM.0,
                "maximum": SCAN_RADIUS_KM.1,
                "default": etappe_app::trips::days::DEFAULT_SCAN_RADIUS_KM},
            "stageId": {"type": ["string", "null"], "format": "uuid",
                "description": "One day only; all days when left out"}}});
    /// `POST /trips/gpx-upload` (multipart/form-data).
    GpxUpload => json!({"type": "object", "required": ["file"], "additionalProperties": false,
        "properties": {
            "file": {"type": "string", "format": "binary", "minLength": 1,
                "contentMediaType": "application/gpx+xml",
                "description": format!("The GPX file, at most {} MB",
                    etappe_infra::fetch::MAX_SOURCE_BYTES / (1024 * 1024))},
            "settings": {"$ref": "#/components/schemas/UploadSettings"}}});
    /// The `settings` part of an upload: a JSON object of settings (`null` is "left out").
    UploadSettings => json!({"type": "object", "additionalProperties": false,
        "properties": settings_properties(NullMeans::Absent)});
}
