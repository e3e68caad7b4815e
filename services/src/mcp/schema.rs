//! JSON Schema for the agent surface: each argument's type with its range, enum or format as
//! schema keywords (a client or model can check a value before sending it), and each tool's
//! output schema, which its `structuredContent` conforms to (a test validates every answer of
//! the journey). The ranges are the domain's own constants, so the schema cannot drift from
//! the rule that refuses the value.
//!
//! Kept lean on purpose: `tools/list` is paid for in every conversation (2,400 o200k tokens
//! for all, 260 per tool), so a keyword stands in for prose wherever it says the same thing.

use serde_json::{Map, Value, json};

use crate::openapi::inputs;
pub use crate::openapi::inputs::{Field, Kind, LAT, LON, POSITIVE, field};

/// How much of a schema to publish: what `tools/list` carries in every conversation, or the
/// whole of it, which `etappe_help` answers on demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    Lean,
    Full,
}

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

/// The schema of `kind`, with `description` when it is not empty, as `tools/list` publishes it.
pub fn render(kind: Kind, description: &str, nullable: bool) -> Value {
    render_at(Detail::Lean, kind, description, nullable)
}

/// The schema of `kind` at `detail`.
pub fn render_at(detail: Detail, kind: Kind, description: &str, nullable: bool) -> Value {
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
        Kind::SourceLink { .. } => json!({"type": "string", "format": "uri"}),
        Kind::Date { nullable: true } => nullable_of(&json!({"type": "string", "format": "date"})),
        Kind::Date { nullable: false } => json!({"type": "string", "format": "date"}),
        Kind::Integer { min, max } => inputs::integer_keywords(min, max),
        Kind::Number(range) => inputs::number_keywords(range, number),
        Kind::Boolean => json!({"type": "boolean"}),
        Kind::OneOf(values) => json!({"type": "string", "enum": values}),
        Kind::AnyOf(values) => {
            json!({"type": "array", "items": {"enum": values}})
        }
        // `maxItems` only in full: the domain states the limit when it refuses, so
        // `tools/list` need not pay for it in every conversation.
        Kind::List { max } if detail == Detail::Full && max > 0 => json!({
            "type": "array",
            "items": {"type": "string"},
            "maxItems": max,
        }),
        Kind::List { .. } => json!({"type": "array", "items": {"type": "string"}}),
        Kind::Point => json!({
            "type": "object",
            "properties": {
                "lat": render(Kind::Number(LAT), "", false),
                "lon": render(Kind::Number(LON), "", false),
            },
            "required": ["lat", "lon"],
        }),
        Kind::Object(fields) => object(fields),
        Kind::Named(fields) if detail == Detail::Full => object(fields),
        Kind::Named(fields) => json!({"type": "object", "description": named(fields)}),
    };
    if nullable && schema.get("anyOf").is_none() {
        schema = nullable_of(&schema);
    }
    if !description.is_empty() {
        schema["description"] = match schema.get("description").and_then(Value::as_str) {
            Some(listed) => json!(format!("{description}. {listed}")),
            None => json!(description),
        };
    }
    schema
}

/// The fields of a [`Kind::Named`] object as one line: each name, with its words where it
/// takes words and `null` where that clears it; the rest is `etappe_help`'s.
fn named(fields: &[Field]) -> String {
    let listed: Vec<String> = fields
        .iter()
        .map(|f| match f.kind {
            Kind::Date { nullable: true } => format!("{} (YYYY-MM-DD|null)", f.name),
            Kind::Date { nullable: false } => format!("{} (YYYY-MM-DD)", f.name),
            Kind::OneOf(values) => format!("{} ({})", f.name, values.join("|")),
            _ => f.name.to_owned(),
        })
        .collect();
    format!("Any of: {}. Types, ranges: etappe_help", listed.join(", "))
}

/// `schema` or `null`, as `anyOf`: single-type schema dialects (Gemini's function
/// declarations, the Inspector's strict mode) refuse or drop a `type` array, and every
/// dialect reads `anyOf`.
fn nullable_of(schema: &Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

/// An object of `fields`, none required. Other fields are refused by the tool, by name and
/// with the accepted list; `additionalProperties: false` would say so in every conversation's
/// `tools/list` (about 85 tokens over the catalogue) for a mistake the refusal already mends.
fn object(fields: &[Field]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_owned(), render(f.kind, f.description, f.nullable)))
        .collect();
    json!({"type": "object", "properties": properties})
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

/// What a tool's `structuredContent` holds when it succeeds (refusals, `isError: true`,
/// carry [`error_schema`] instead), one function per shape; each tool's spec names its own
/// (`ToolSpec::output`), so no tool's schema is looked up by name. Only what an agent reads
/// to go on is declared, typed: ids, `version`, `partial`, `nextAction`,
/// `confirmationToken`, the day fields it passes to the next call. Other fields may come
/// too. Which fields are always present is said by the tool's help, not by `required`
/// lists: those cost about 135 tokens of `tools/list` in every conversation, and an agent
/// reads the answer it gets.
pub mod outputs {
    use serde_json::{Value, json};

    fn object(properties: Value) -> Value {
        let mut object = json!({"type": "object"});
        object["properties"] = properties;
        object
    }

    fn list(item: Value) -> Value {
        let mut list = json!({"type": "array"});
        list["items"] = item;
        list
    }

    fn point() -> Value {
        object(json!({"lat": {"type": "number"}, "lon": {"type": "number"}}))
    }

    const S: &str = "string";
    const INT: &str = "integer";
    const BOOLEAN: &str = "boolean";

    fn of(kind: &str) -> Value {
        json!({ "type": kind })
    }

    /// A page of trips.
    pub fn trip_list() -> Value {
        object(json!({"totalItems": of(INT), "member": list(object(json!({"id": of(S)})))}))
    }

    /// A trip with its days.
    pub fn trip() -> Value {
        object(json!({
            "version": of(INT), "partial": of(BOOLEAN), "nextAction": of(S),
            "stages": list(object(json!({"stageId": of(S)}))),
        }))
    }

    /// One day with its accommodations.
    pub fn stage() -> Value {
        object(json!({"version": of(INT), "accommodations": list(point())}))
    }

    /// Places found by name.
    pub fn places() -> Value {
        object(json!({"items": list(point())}))
    }

    /// A trip just created.
    pub fn created() -> Value {
        object(json!({"id": of(S), "partial": of(BOOLEAN), "nextAction": of(S)}))
    }

    /// A change that may first answer a confirmation challenge.
    pub fn confirmed() -> Value {
        object(json!({"confirmationToken": of(S), "version": of(INT), "nextAction": of(S)}))
    }

    /// An edit of the days.
    pub fn edited() -> Value {
        object(json!({"version": of(INT), "partial": of(BOOLEAN), "nextAction": of(S)}))
    }

    /// Work started.
    pub fn started() -> Value {
        object(json!({"nextAction": of(S)}))
    }

    /// A public link.
    pub fn link() -> Value {
        object(json!({"url": of(S), "shortCode": of(S)}))
    }

    /// A help topic.
    pub fn help() -> Value {
        object(json!({"topic": of(S)}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `type` in `schema`, anywhere, is one name: no dialect is handed a type array.
    fn single_types(schema: &Value, path: &str) {
        match schema {
            Value::Object(map) => {
                if let Some(kind) = map.get("type") {
                    assert!(kind.is_string(), "{path}: type {kind}");
                }
                for (k, v) in map {
                    single_types(v, &format!("{path}/{k}"));
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    single_types(v, &format!("{path}/{i}"));
                }
            }
            _ => {}
        }
    }

    #[test]
    fn no_tool_publishes_a_type_array() {
        for tool in crate::mcp::tool_definitions() {
            let input = Value::Object(tool.input_schema.as_ref().clone());
            single_types(&input, &tool.name);
            if let Some(output) = &tool.output_schema {
                single_types(&Value::Object(output.as_ref().clone()), &tool.name);
            }
        }
        single_types(&error_schema(), "error");
    }
    use etappe_domain::trip::settings::{ELEVATION_PENALTY, MAX_DISTANCE_PER_DAY};

    #[test]
    fn ranges_become_keywords() {
        assert_eq!(
            render(Kind::Number(MAX_DISTANCE_PER_DAY), "km", false),
            json!({"type": "number", "minimum": 10, "maximum": 300, "description": "km"})
        );
        assert_eq!(
            render(Kind::Number(ELEVATION_PENALTY), "", false),
            json!({"type": "number", "exclusiveMinimum": 0, "maximum": 10000})
        );
        assert_eq!(
            render(Kind::Text { min: 1, max: 255 }, "", true),
            json!({"anyOf": [{"type": "string", "minLength": 1, "maxLength": 255}, {"type": "null"}]})
        );
        assert_eq!(
            render(Kind::Date { nullable: true }, "clears", false),
            json!({"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}], "description": "clears"})
        );
    }
}
