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
use etappe_domain::text::{LINK_MAX_BYTES, NAME_MAX_CHARS};
use etappe_domain::trip::SCAN_RADIUS_KM;
use etappe_domain::trip::edits::LABEL_MAX_CHARS;
use etappe_domain::trip::input::{DATE_FUTURE_YEARS, DATE_PAST_DAYS, NullMeans};
use etappe_domain::trip::plan::{MAX_VIA, PLACE_NAME_MAX_CHARS, RideProfile};
use etappe_domain::trip::settings::{
    AVERAGE_SPEED, DAYS, DEPARTURE_HOUR, ELEVATION_PENALTY, FATIGUE_FACTOR, MAX_DISTANCE_PER_DAY,
    NightsMode, Range, SettingField, TITLE_MAX_CHARS, TripSettings,
};
use etappe_domain::trip::source::SOURCE_URL_MAX_CHARS;
use serde_json::{Map, Value, json};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

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
fn coordinate(max: f64, nullable: bool) -> Value {
    let kind = if nullable {
        json!(["number", "null"])
    } else {
        json!("number")
    };
    json!({"type": kind, "minimum": -max, "maximum": max})
}

fn latitude() -> Value {
    coordinate(90.0, false)
}

fn longitude() -> Value {
    coordinate(180.0, false)
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

/// A number in one of the domain's ranges.
fn number_in(range: Range, default: f64, description: &str) -> Value {
    let mut s = json!({"type": "number", "maximum": range.max, "default": default,
        "description": description});
    let key = if range.min_inclusive {
        "minimum"
    } else {
        "exclusiveMinimum"
    };
    s[key] = json!(range.min);
    s
}

/// One setting's schema, by the domain's field list (a new field does not compile until
/// it is described here).
fn setting(field: SettingField, nulls: NullMeans) -> Value {
    let d = TripSettings::default();
    let mut s = match field {
        SettingField::Title => json!({
            "type": "string", "minLength": 1, "maxLength": TITLE_MAX_CHARS,
            "pattern": VISIBLE,
            "description": "The trip's name. Control characters are removed; it must keep one visible character."}),
        SettingField::StartDate | SettingField::EndDate => {
            let description = if field == SettingField::StartDate {
                "First day (YYYY-MM-DD), at most a year ago and at most ten years ahead. A trip whose start date is today or earlier (UTC) is locked."
            } else {
                "Last day (YYYY-MM-DD), after startDate. With both dates the trip has endDate − startDate + 1 days."
            };
            // `null` clears a date on an update (and is "absent" on a creation).
            json!({"type": ["string", "null"], "format": "date",
                "pattern": trip_date_pattern(chrono::Utc::now().date_naive()),
                "description": description})
        }
        SettingField::FatigueFactor => number_in(
            FATIGUE_FACTOR,
            d.fatigue_factor,
            "Each day is this fraction of the day before.",
        ),
        SettingField::ElevationPenalty => number_in(
            ELEVATION_PENALTY,
            d.elevation_penalty,
            "Metres of climbing that count as one kilometre.",
        ),
        SettingField::MaxDistancePerDay => number_in(
            MAX_DISTANCE_PER_DAY,
            d.max_distance_per_day,
            "Kilometres of effort, a hard cap per day: a day's distance plus its climbing over elevationPenalty (flat days ride exactly this far, hilly ones less).",
        ),
        SettingField::AverageSpeed => {
            number_in(AVERAGE_SPEED, d.average_speed, "km/h, for arrival times.")
        }
        SettingField::DepartureHour => json!({
            "type": "integer", "minimum": DEPARTURE_HOUR.min, "maximum": DEPARTURE_HOUR.max,
            "default": d.departure_hour, "description": "Local hour the rider sets off."}),
        SettingField::EbikeMode => json!({"type": "boolean", "default": d.ebike_mode}),
        // Duplicates are accepted and dropped, so the schema does not ask for unique items.
        SettingField::EnabledAccommodationTypes => json!({
            "type": "array", "minItems": 1,
            "items": {"$ref": "#/components/schemas/AccommodationType"},
            "description": "Which kinds of places to sleep a scan looks for, in order of preference (with nights at_accommodation the first type wins a tie). Default: all."}),
        SettingField::Days => json!({
            "type": ["integer", "null"], "minimum": DAYS.min, "maximum": DAYS.max,
            "description": "How many days, without dates (\"in 6 days\"): the route is cut into exactly that many. With both dates set, the dates decide; null lets maxDistancePerDay decide."}),
        SettingField::Nights => json!({
            "type": "string",
            "enum": NightsMode::ALL.map(NightsMode::as_str),
            "default": d.nights.as_str(),
            "description": "Where each day ends: anywhere (by distance and climbing), or at_accommodation (at a place to sleep of the enabled types near each day's planned end, chosen by Etappe; needs an OpenStreetMap source)."}),
    };
    if nulls == NullMeans::Absent {
        // On a creation `null` reads as "left out", whatever the field.
        let kind = s["type"].clone();
        let mut kinds: Vec<Value> = match kind {
            Value::Array(a) => a,
            other => vec![other],
        };
        if !kinds.contains(&json!("null")) {
            kinds.push(json!("null"));
        }
        s["type"] = Value::Array(kinds);
    }
    s
}

fn settings_properties(nulls: NullMeans) -> Map<String, Value> {
    SettingField::ALL
        .into_iter()
        .map(|f| (f.name().to_owned(), setting(f, nulls)))
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
        "sourceUrl".into(),
        json!({"type": "string", "minLength": 1, "maxLength": SOURCE_URL_MAX_CHARS,
            "pattern": SOURCE_URL_PATTERN,
            "description": "https link to a Komoot tour or collection, a Strava route, a RideWithGPS route or a GPX file (http only for hosts the operator allowed). Fixed for the trip's life."}),
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
    let profiles: Vec<&str> = RideProfile::ALL.iter().map(|p| p.as_str()).collect();
    let required: Vec<&str> = if creating { vec!["from", "to"] } else { vec![] };
    json!({"type": "object", "required": required, "additionalProperties": false,
    "description": "Places to route with the configured routing engine (refused with 422 not_configured when there is none); a name that is ambiguous is refused listing the candidates.",
    "properties": {
        "from": plan_place("Where the route starts"),
        "to": plan_place("Where it ends"),
        "via": {"type": "array", "maxItems": MAX_VIA, "items": plan_place("A place to pass"),
            "description": "Places to pass, in order"},
        "profile": {"type": "string", "enum": profiles,
            "description": "How the route is ridden (default touring)"},
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
    let mut p = Map::new();
    p.insert(
        "distance".into(),
        json!({"type": "number", "exclusiveMinimum": 0,
            "description": "km from the day's start where it (or its first half) ends"}),
    );
    p.insert(
        "endPoint".into(),
        json!({"type": "object", "required": ["lat", "lon"], "additionalProperties": false,
            "properties": {"lat": latitude(), "lon": longitude(),
                "ele": {"description": "Accepted and ignored: the route's own is used."}},
            "description": "The route point nearest this one becomes the day's end"}),
    );
    p.insert(
        "label".into(),
        json!({"type": ["string", "null"], "maxLength": LABEL_MAX_CHARS,
            "description": "The rider's name for the day; null or blank clears it"}),
    );
    p
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
        "properties": {"toIndex": {"type": "integer", "minimum": 0,
            "description": "The 0-based position the day moves to"}}});
    /// `PATCH /trips/{id}/stages/{stageId}/accommodation`: `lat` and `lon` of one of the
    /// day's candidates choose it; neither (or both null) clears the choice.
    ChooseAccommodation => json!({"type": "object", "additionalProperties": false,
        "properties": {"lat": {"type": ["number", "null"]}, "lon": {"type": ["number", "null"]},
            "name": {"type": "string", "minLength": 1, "maxLength": NAME_MAX_CHARS, "pattern": VISIBLE,
                "description": "With lat and lon: a place of your own (no candidate needed)"}},
        "anyOf": [
            {"required": ["lat", "lon"], "properties": {"lat": latitude(), "lon": longitude()}},
            {"properties": {"lat": {"type": "null"}, "lon": {"type": "null"}},
                "not": {"required": ["name"]}}
        ]});
    /// `POST /trips/{id}/stages/{stageId}/accommodations/manual`.
    ManualAccommodation => json!({"type": "object", "required": ["name", "lat", "lon"],
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": NAME_MAX_CHARS, "pattern": VISIBLE},
            "lat": latitude(), "lon": longitude(),
            "priceTotal": {"type": ["number", "null"], "minimum": 0, "maximum": 10000,
                "description": "€ for the night"},
            "url": {"type": ["string", "null"], "maxLength": LINK_MAX_BYTES, "pattern": "^https?://"}}});
    /// `POST /trips/{id}/stages/{stageId}/poi-waypoint`.
    AddWaypoint => json!({"type": "object", "required": ["waypointLat", "waypointLon"],
        "additionalProperties": false,
        "properties": {"waypointLat": latitude(), "waypointLon": longitude()}});
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
