//! Small builders of JSON Schema fragments, so the shapes in [`super::domain`] and
//! [`super::views`] read as their fields: `req("stageId", uuid())`, `opt("title",
//! nullable(text()))`. Written by hand rather than derived because the types they describe
//! live in `app` and the domain, which stay free of the document's crate.

use serde_json::{Map, Value, json};

/// A field of an object: its name, its schema, and whether every answer carries it.
#[derive(Debug)]
pub struct Field {
    name: &'static str,
    schema: Value,
    required: bool,
}

/// A field every answer carries.
pub fn req(name: &'static str, schema: Value) -> Field {
    Field {
        name,
        schema,
        required: true,
    }
}

/// A field an answer may leave out.
pub fn opt(name: &'static str, schema: Value) -> Field {
    Field {
        name,
        schema,
        required: false,
    }
}

/// An object of these fields (the document closes it: `additionalProperties: false`).
pub fn object(description: &str, fields: Vec<Field>) -> Value {
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    let properties: Map<String, Value> = fields
        .into_iter()
        .map(|f| (f.name.to_owned(), f.schema))
        .collect();
    let mut shape = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        shape["required"] = json!(required);
    }
    if !description.is_empty() {
        shape["description"] = json!(description);
    }
    shape
}

/// `schema` with a description.
pub fn doc(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

pub fn text() -> Value {
    json!({"type": "string"})
}

/// A string that is one of `values`.
pub fn words(values: impl serde::Serialize) -> Value {
    let mut shape = json!({"type": "string"});
    shape["enum"] = serde_json::to_value(values).unwrap_or_default();
    shape
}

pub fn uuid() -> Value {
    json!({"type": "string", "format": "uuid"})
}

pub fn date() -> Value {
    json!({"type": "string", "format": "date"})
}

pub fn date_time() -> Value {
    json!({"type": "string", "format": "date-time"})
}

pub fn boolean() -> Value {
    json!({"type": "boolean"})
}

pub fn number() -> Value {
    json!({"type": "number", "format": "double"})
}

/// A number within `min..=max`.
pub fn number_in(min: f64, max: f64) -> Value {
    json!({"type": "number", "format": "double", "minimum": min, "maximum": max})
}

/// A whole number of at least `min`.
pub fn count(min: u64) -> Value {
    json!({"type": "integer", "minimum": min})
}

pub fn list(items: Value) -> Value {
    let mut shape = json!({"type": "array"});
    shape["items"] = items;
    shape
}

/// A reference to the component `name`.
pub fn component(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// `schema` or `null`: a `type` list for a plain type, `oneOf` for a reference.
pub fn nullable(mut schema: Value) -> Value {
    match schema.get("type").cloned() {
        Some(Value::String(kind)) => {
            schema["type"] = json!([kind, "null"]);
            schema
        }
        _ => json!({"oneOf": [schema, {"type": "null"}]}),
    }
}

/// `schema` or `null`, with the description on the value (as readers look for it).
pub fn nullable_doc(schema: Value, description: &str) -> Value {
    match schema.get("type") {
        Some(Value::String(_)) => doc(nullable(schema), description),
        _ => nullable(doc(schema, description)),
    }
}

/// A point: `lat`, `lon`.
pub fn lat_lon() -> [Field; 2] {
    [req("lat", number()), req("lon", number())]
}
