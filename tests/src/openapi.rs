//! Checks answers against the published OpenAPI document: the status must be one the
//! operation documents, problem answers must say `application/problem+json`, and a JSON body
//! must match the documented schema. A small validator covering the keywords the document
//! uses (`$ref`, `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
//! `const`, `minimum`, `maximum`, `format` date/date-time/uuid).

use std::sync::OnceLock;

use reqwest::header::HeaderMap;
use serde_json::Value;

/// The document the application serves.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        serde_json::from_str(etappe_services::http::OPENAPI_JSON).expect("openapi.json parses")
    })
}

fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            resolve(
                doc,
                doc.pointer(pointer)
                    .unwrap_or_else(|| panic!("dangling $ref {reference}")),
            )
        }
        None => schema,
    }
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        other => panic!("unsupported type {other}"),
    }
}

/// Every way `value` departs from `schema`, with JSON-pointer-like paths.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    walk(document(), schema, value, "$", &mut errors);
    errors
}

fn walk(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.iter().any(|t| type_matches(t, value)) {
            errors.push(format!("{at}: expected {names:?}, got {value}"));
            return;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        errors.push(format!("{at}: {value} is not one of {options:?}"));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        errors.push(format!("{at}: {value} is not {constant}"));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            errors.push(format!("{at}: {n} < minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            errors.push(format!("{at}: {n} > maximum {max}"));
        }
    }
    if let (Some(format), Some(s)) = (schema.get("format").and_then(Value::as_str), value.as_str())
    {
        let ok = match format {
            "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok(),
            "date-time" => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
            "uuid" => uuid::Uuid::parse_str(s).is_ok(),
            _ => true,
        };
        if !ok {
            errors.push(format!("{at}: {s:?} is not a {format}"));
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    errors.push(format!("{at}: missing required property {name}"));
                }
            }
        }
        for (name, item) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => walk(doc, sub, item, &format!("{at}.{name}"), errors),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        errors.push(format!("{at}: undocumented property {name}"));
                    }
                    Some(extra @ Value::Object(_)) => {
                        walk(doc, extra, item, &format!("{at}.{name}"), errors);
                    }
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            walk(doc, items, item, &format!("{at}[{i}]"), errors);
        }
    }
}

/// Panics unless the answer is one the document promises for `method template`.
pub fn check_answer(method: &str, template: &str, status: u16, headers: &HeaderMap, body: &Value) {
    let doc = document();
    let operation = doc
        .pointer(&format!(
            "/paths/{}/{}",
            template.replace('~', "~0").replace('/', "~1"),
            method.to_ascii_lowercase()
        ))
        .unwrap_or_else(|| panic!("{method} {template} is not in the OpenAPI document"));
    let response = operation
        .pointer(&format!("/responses/{status}"))
        .unwrap_or_else(|| panic!("{method} {template} answered {status}, which the OpenAPI document does not list: {body}"));
    let Some(content) = response.get("content").and_then(Value::as_object) else {
        assert!(
            body.is_null(),
            "{method} {template} {status} documents no body but sent {body}"
        );
        return;
    };
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_owned();
    let media = content.get(&content_type).unwrap_or_else(|| {
        panic!(
            "{method} {template} {status} answered {content_type}, documented: {:?}",
            content.keys()
        )
    });
    if let Some(schema) = media.get("schema") {
        let errors = validate(schema, body);
        assert!(
            errors.is_empty(),
            "{method} {template} {status} body does not match the document: {errors:#?}\n{body}"
        );
    }
}

/// Panics unless a non-JSON answer (a file) has a status and media type the document lists.
pub fn check_status(method: &str, template: &str, status: u16, headers: &HeaderMap) {
    let doc = document();
    let operation = doc
        .pointer(&format!(
            "/paths/{}/{}",
            template.replace('~', "~0").replace('/', "~1"),
            method.to_ascii_lowercase()
        ))
        .unwrap_or_else(|| panic!("{method} {template} is not in the OpenAPI document"));
    let response = operation
        .pointer(&format!("/responses/{status}"))
        .unwrap_or_else(|| {
            panic!(
                "{method} {template} answered {status}, which the OpenAPI document does not list"
            )
        });
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let documented = response
        .get("content")
        .and_then(Value::as_object)
        .is_some_and(|c| c.contains_key(content_type));
    assert!(
        documented,
        "{method} {template} {status} answered {content_type}, not documented"
    );
}
