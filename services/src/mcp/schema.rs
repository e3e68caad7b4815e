//! JSON Schema for the agent surface: each argument's type with its range, enum or format as
//! schema keywords (a client or model can check a value before sending it), and each tool's
//! output schema, which its `structuredContent` conforms to (a test validates every answer of
//! the journey). The ranges are the domain's own constants, so the schema cannot drift from
//! the rule that refuses the value.
//!
//! Kept lean on purpose: `tools/list` is paid for in every conversation (2,400 o200k tokens
//! for all, 260 per tool), so a keyword stands in for prose wherever it says the same thing.

use etappe_events::trip::settings::Range;
use serde_json::{Map, Value, json};

/// The type of an argument (or of a field of an object argument).
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A string of `min..=max` characters (`max` 0: no maximum).
    Text {
        min: u32,
        max: u32,
    },
    /// A string with a format (`uuid`, `uri`).
    Format(&'static str),
    /// A `YYYY-MM-DD` date; `nullable` where `null` clears it.
    Date {
        nullable: bool,
    },
    /// A whole number in `min..=max`.
    Integer {
        min: i64,
        max: i64,
    },
    /// A number in a domain range.
    Number(Range),
    Boolean,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// Any of these strings, each at most once.
    AnyOf(&'static [&'static str]),
    /// `{lat, lon}`.
    Point,
    /// An object of exactly these fields (none required).
    Object(&'static [Field]),
}

/// A field of an object argument.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    /// Only where the name and the keywords do not say it all.
    pub description: &'static str,
    /// Whether `null` is accepted too (it clears the value).
    pub nullable: bool,
}

/// A field that is not nullable.
pub const fn field(name: &'static str, kind: Kind, description: &'static str) -> Field {
    Field {
        name,
        kind,
        description,
        nullable: false,
    }
}

/// Latitude, degrees.
pub const LAT: Range = Range {
    min: -90.0,
    max: 90.0,
    min_inclusive: true,
};
/// Longitude, degrees.
pub const LON: Range = Range {
    min: -180.0,
    max: 180.0,
    min_inclusive: true,
};
/// A positive number (no upper bound).
pub const POSITIVE: Range = Range {
    min: 0.0,
    max: f64::MAX,
    min_inclusive: false,
};

fn number(n: f64) -> Value {
    // Whole bounds print as integers: `30`, not `30.0` (fewer tokens, same meaning).
    if n.fract() == 0.0 && n.abs() < 1e15 {
        #[allow(clippy::cast_possible_truncation)]
        let whole = n as i64;
        json!(whole)
    } else {
        json!(n)
    }
}

/// The schema of `kind`, with `description` when it is not empty.
pub fn render(kind: Kind, description: &str, nullable: bool) -> Value {
    let mut schema = match kind {
        Kind::Text { min, max } => {
            let mut s = json!({"type": "string"});
            if min > 0 {
                s["minLength"] = json!(min);
            }
            if max > 0 {
                s["maxLength"] = json!(max);
            }
            s
        }
        Kind::Format(format) => json!({"type": "string", "format": format}),
        Kind::Date { nullable: true } => json!({"type": ["string", "null"], "format": "date"}),
        Kind::Date { nullable: false } => json!({"type": "string", "format": "date"}),
        Kind::Integer { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
        Kind::Number(range) => {
            let mut s = json!({"type": "number"});
            let bound = if range.min_inclusive {
                "minimum"
            } else {
                "exclusiveMinimum"
            };
            s[bound] = number(range.min);
            if range.max < f64::MAX {
                s["maximum"] = number(range.max);
            }
            s
        }
        Kind::Boolean => json!({"type": "boolean"}),
        Kind::OneOf(values) => json!({"type": "string", "enum": values}),
        Kind::AnyOf(values) => {
            json!({"type": "array", "items": {"enum": values}, "uniqueItems": true})
        }
        Kind::Point => json!({
            "type": "object",
            "properties": {
                "lat": render(Kind::Number(LAT), "", false),
                "lon": render(Kind::Number(LON), "", false),
            },
            "required": ["lat", "lon"],
        }),
        Kind::Object(fields) => object(fields),
    };
    if nullable && let Some(kind) = schema.get("type").cloned() {
        schema["type"] = json!([kind, "null"]);
    }
    if !description.is_empty() {
        schema["description"] = json!(description);
    }
    schema
}

/// An object of exactly `fields`, none required.
fn object(fields: &[Field]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_owned(), render(f.kind, f.description, f.nullable)))
        .collect();
    json!({"type": "object", "properties": properties, "additionalProperties": false})
}

/// The shape of every refused call's `structuredContent` (`isError: true`): the message an
/// agent acts on, and for an upstream failure which upstream, how, and whether to retry.
pub fn error_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "error": {"type": "string"},
            "upstream": {"type": "string"},
            "failure": {"type": "string"},
            "retryable": {"type": "boolean"},
        },
        "required": ["error"],
        "additionalProperties": false,
    })
}

/// The output schema of tool `name`: what its `structuredContent` holds when it succeeds.
/// Refusals (`isError: true`) carry [`error_schema`] instead.
pub fn output(name: &str) -> Value {
    let s = json!({"type": "string"});
    let s_null = json!({"type": ["string", "null"]});
    let int = json!({"type": "integer"});
    let num = json!({"type": "number"});
    let boolean = json!({"type": "boolean"});
    let id = json!({"type": "string", "format": "uuid"});
    // What every write answers: what happened, and what to call next.
    let written = || {
        json!({
            "type": "object",
            "properties": {"result": s, "version": int, "partial": boolean, "nextAction": s},
            "required": ["result", "version", "nextAction"],
        })
    };
    // A confirmation challenge, or the change done: the same flat object.
    let confirmed = |done: &[&str]| {
        json!({
            "type": "object",
            "properties": {
                "result": s, "version": int, "partial": boolean, "nextAction": s,
                "confirmationRequired": boolean, "confirmationToken": s,
                "impact": {"type": "object"}, "expiresInSeconds": int,
            },
            "required": ["result", "nextAction"],
            "if": {"required": ["confirmationRequired"]},
            "then": {"required": ["confirmationToken", "impact"]},
            "else": {"required": done},
        })
    };
    match name {
        "list_trips" => json!({
            "type": "object",
            "properties": {
                "totalItems": int,
                "member": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"id": id, "title": s_null, "isLocked": boolean, "stageCount": int, "totalDistance": num},
                    "required": ["id"],
                }},
            },
            "required": ["totalItems", "member"],
        }),
        "get_trip" => json!({
            "type": "object",
            "properties": {
                "id": id, "version": int, "title": s_null, "partial": boolean, "isLocked": boolean,
                "startDate": s_null, "endDate": s_null,
                "settings": {"type": "object"}, "categoryStatus": {"type": "object"},
                "stages": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"stageId": id, "day": int, "km": num, "climb": num, "alerts": int},
                    "required": ["stageId", "day", "km"],
                }},
                "nextAction": s,
            },
            "required": ["id", "version", "partial", "stages", "nextAction"],
        }),
        "get_stage" => json!({
            "type": "object",
            "properties": {
                "stageId": id, "dayNumber": int, "distance": num, "version": int,
                "alerts": {"type": "array"},
                "accommodations": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": s_null, "lat": num, "lon": num},
                    "required": ["lat", "lon"],
                }},
            },
            "required": ["stageId", "version", "accommodations"],
        }),
        "search_places" => json!({
            "type": "object",
            "properties": {
                "totalItems": int,
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": s, "lat": num, "lon": num},
                    "required": ["name", "lat", "lon"],
                }},
                "source": s,
            },
            "required": ["items"],
        }),
        "create_trip" => json!({
            "type": "object",
            "properties": {"id": id, "partial": boolean, "result": s, "nextAction": s},
            "required": ["id", "partial", "nextAction"],
        }),
        "update_trip_settings" => confirmed(&["version"]),
        "unshare_trip" | "delete_trip" => confirmed(&[]),
        "edit_stages" | "choose_accommodation" => written(),
        "add_waypoint" => json!({
            "type": "object",
            "properties": {"result": s, "version": int, "nextAction": s},
            "required": ["result", "nextAction"],
        }),
        "analyze_trip" => json!({
            "type": "object",
            "properties": {"result": s, "nextAction": s},
            "required": ["result", "nextAction"],
        }),
        "share_trip" => json!({
            "type": "object",
            "properties": {"url": {"type": "string", "format": "uri"}, "shortCode": s, "result": s},
            "required": ["url", "shortCode"],
        }),
        _ => json!({
            "type": "object",
            "properties": {"topic": s},
            "required": ["topic"],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etappe_events::trip::settings::{ELEVATION_PENALTY, MAX_DISTANCE_PER_DAY};

    #[test]
    fn ranges_become_keywords() {
        assert_eq!(
            render(Kind::Number(MAX_DISTANCE_PER_DAY), "km", false),
            json!({"type": "number", "minimum": 30, "maximum": 300, "description": "km"})
        );
        assert_eq!(
            render(Kind::Number(ELEVATION_PENALTY), "", false),
            json!({"type": "number", "exclusiveMinimum": 0, "maximum": 10000})
        );
        assert_eq!(
            render(Kind::Text { min: 1, max: 255 }, "", true),
            json!({"type": ["string", "null"], "minLength": 1, "maxLength": 255})
        );
        assert_eq!(
            render(Kind::Date { nullable: true }, "", false),
            json!({"type": ["string", "null"], "format": "date"})
        );
    }
}
