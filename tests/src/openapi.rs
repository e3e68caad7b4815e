//! Checks answers against the generated OpenAPI document with a maintained JSON Schema
//! validator (`jsonschema`, draft 2020-12, formats checked): the status must be one the
//! operation documents, problem answers must say `application/problem+json`, and a JSON body
//! must match the documented schema. Each response schema is compiled once, with the
//! document's components beside it so that its `$ref`s resolve.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The document the application serves (today's: a test run does not span days).
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| etappe_services::http::document().value.clone())
}

/// `schema` (inline or a `$ref` into the document), compiled with the document's components.
pub fn compile(schema: &Value) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": document()["components"],
        "allOf": [schema],
    });
    jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("the document's schema {schema} does not compile: {e}"))
}

/// Every way `value` departs from `schema`, with JSON pointers.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    compile(schema)
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The validator of one response schema, compiled on first use.
fn validator(key: &str, schema: &Value) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(v) = cache.lock().expect("cache").get(key) {
        return v.clone();
    }
    let compiled = Arc::new(compile(schema));
    cache
        .lock()
        .expect("cache")
        .insert(key.to_owned(), compiled.clone());
    compiled
}

/// The documented response of `method template` for `status`.
fn response(method: &str, template: &str, status: u16) -> &'static Value {
    let operation = document()
        .pointer(&format!(
            "/paths/{}/{}",
            template.replace('~', "~0").replace('/', "~1"),
            method.to_ascii_lowercase()
        ))
        .unwrap_or_else(|| panic!("{method} {template} is not in the OpenAPI document"));
    operation
        .pointer(&format!("/responses/{status}"))
        .unwrap_or_else(|| {
            panic!(
                "{method} {template} answered {status}, which the OpenAPI document does not list"
            )
        })
}

fn media_type(headers: &HeaderMap) -> String {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Panics unless the answer is one the document promises for `method template`.
pub fn check_answer(method: &str, template: &str, status: u16, headers: &HeaderMap, body: &Value) {
    let response = response(method, template, status);
    let Some(content) = response.get("content").and_then(Value::as_object) else {
        assert!(
            body.is_null(),
            "{method} {template} {status} documents no body but sent {body}"
        );
        return;
    };
    let content_type = media_type(headers);
    let media = content.get(&content_type).unwrap_or_else(|| {
        panic!(
            "{method} {template} {status} answered {content_type}, documented: {:?}",
            content.keys()
        )
    });
    if let Some(schema) = media.get("schema") {
        let key = format!("{method} {template} {status} {content_type}");
        let errors: Vec<String> = validator(&key, schema)
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {template} {status} body does not match the document: {errors:#?}\n{body}"
        );
    }
}

/// Panics unless a non-JSON answer (a file) has a status and media type the document lists.
pub fn check_status(method: &str, template: &str, status: u16, headers: &HeaderMap) {
    let response = response(method, template, status);
    let content_type = media_type(headers);
    let documented = response
        .get("content")
        .and_then(Value::as_object)
        .is_some_and(|c| c.contains_key(&content_type));
    assert!(
        documented,
        "{method} {template} {status} answered {content_type}, not documented"
    );
}
