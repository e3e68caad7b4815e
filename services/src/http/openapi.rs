//! The published OpenAPI 3.1 document, generated from the code: each handler carries its
//! operation (`#[utoipa::path]`) and its route is declared by it (`super::routes`), the views
//! and request schemas carry their shapes, and the document is the one table of routes —
//! `405`'s `Allow` is read from it too. It is built
//! once, on first use.
//!
//! Every object the API sends or accepts is closed (`additionalProperties: false`): the
//! parsers refuse unknown fields by name, and the tests validate real answers against the
//! document, so an undocumented field fails them.

pub(super) mod answers;
pub(super) mod inputs;
pub(super) mod params;

use std::sync::{Arc, Mutex};

use chrono::NaiveDate;

use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use utoipa::OpenApi;

use crate::openapi::domain;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Etappe",
        description = "Multi-day bicycle trip planning. Every error is application/problem+json (RFC 9457) with a stable `type` and `code`. Authenticate with `Authorization: Bearer etp_…` (a personal access token with scopes trips:read and/or trips:write), or, from a browser, with the session cookie a magic link sets (then a write needs this site's Origin and the session's X-CSRF-Token, read from GET /users/me).",
    ),
    // Only the paths axum's router cannot hold (a suffix on a captured segment, served by
    // the handler of the path they suffix); every other path is declared by its route.
    paths(
        super::trips::export_trip_gpx,
        super::trips::export_trip_fit,
        super::share::public_gpx,
        super::share::public_fit,
        super::share::public_stage_gpx,
        super::share::public_stage_fit,
    ),
    components(schemas(
        domain::Point,
        domain::Alert,
        domain::FoundAlong,
        domain::DayWeather,
        domain::Accommodation,
        domain::NightNote,
        domain::NightCandidate,
        domain::AccommodationKind,
        domain::ComputationState,
        crate::openapi::views::StageSummarySchema,
        crate::openapi::views::DetourSummarySchema,
        crate::openapi::views::ElevationSummarySchema,
        crate::openapi::views::PlanPlaceSummarySchema,
        crate::openapi::views::PlanSummarySchema,
        crate::openapi::views::ShareSummarySchema,
        crate::openapi::views::TripListItemSchema,
        crate::openapi::views::DayLineSchema,
        crate::openapi::views::PlaceItemSchema,
        answers::ProblemSchema,
        answers::FieldErrorSchema,
        answers::HistoryItemSchema,
        answers::UpstreamsSchema,
        answers::UpstreamHealthSchema,
        inputs::CreateTrip,
        inputs::UpdateSettings,
        inputs::RestoreVersion,
        inputs::AddStage,
        inputs::UpdateStage,
        inputs::MoveStage,
        inputs::ChooseAccommodation,
        inputs::ManualAccommodation,
        inputs::AddWaypoint,
        inputs::ScanAccommodations,
        inputs::GpxUpload,
        inputs::UploadSettings,
    )),
    security(("bearer" = [])),
    modifiers(&BearerScheme),
)]
pub(super) struct ApiDoc;

/// The `bearer` security scheme: a personal access token.
struct BearerScheme;

impl utoipa::Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        if let Some(components) = openapi.components.as_mut() {
            components.add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .description(Some("Personal access token (etp_…)."))
                        .build(),
                ),
            );
        }
    }
}

/// Closes every object schema that does not say otherwise (see the module header).
fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let is_object = map.get("type").is_some_and(|t| {
                t == "object" || t.as_array().is_some_and(|a| a.contains(&json!("object")))
            });
            if is_object
                && map.contains_key("properties")
                && !map.contains_key("additionalProperties")
            {
                map.insert("additionalProperties".into(), json!(false));
            }
            for value in map.values_mut() {
                close_objects(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// An absent body is not a `null` one: the server reads a missing body as `{}` and refuses a
/// `null`, so an optional body's schema is its object's, not "it or null".
fn unwrap_optional_bodies(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for operation in paths.values_mut().filter_map(Value::as_object_mut) {
        for op in operation.values_mut() {
            let Some(content) = op
                .pointer_mut("/requestBody/content")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            for media in content.values_mut() {
                let object = media.pointer("/schema/oneOf/0").cloned();
                let is_optional =
                    media.pointer("/schema/oneOf/1") == Some(&json!({"type": "null"}));
                if let (Some(object), true) = (object, is_optional) {
                    media["schema"] = object;
                }
            }
        }
    }
}

/// The document generated on `today` (the trip-date patterns follow the calendar).
fn generate() -> Value {
    let mut api = super::routes().into_openapi();
    for part in crate::openapi_parts::parts() {
        api.merge(part);
    }
    let mut doc = serde_json::to_value(api).expect("the document serializes");
    crate::openapi::splice(&mut doc);
    unwrap_optional_bodies(&mut doc);
    if let Some(schemas) = doc.pointer_mut("/components/schemas") {
        close_objects(schemas);
    }
    doc
}

/// Today's document, and its text as served.
#[derive(Debug)]
pub struct Document {
    pub value: Value,
    pub json: String,
}

/// The document: generated once a day, on first use.
pub fn document() -> Arc<Document> {
    static TODAY: Mutex<Option<(NaiveDate, Arc<Document>)>> = Mutex::new(None);
    let today = chrono::Utc::now().date_naive();
    let mut cached = TODAY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match cached.as_ref() {
        Some((day, doc)) if *day == today => doc.clone(),
        _ => {
            let value = generate();
            let json = value.to_string();
            let doc = Arc::new(Document { value, json });
            *cached = Some((today, doc.clone()));
            doc
        }
    }
}

/// The methods the document lists, per path template.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Every operation, as `(METHOD, path template)`.
pub fn operations() -> Vec<(String, String)> {
    let mut operations = Vec::new();
    if let Some(paths) = document().value["paths"].as_object() {
        for (path, item) in paths {
            for method in METHODS.iter().filter(|m| item.get(**m).is_some()) {
                operations.push((method.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    operations
}

/// Whether a template (`/trips/{id}.gpx`) matches a concrete path: a `{name}` segment matches
/// any segment that is not a file name of another template, `{name}.gpx` one ending in `.gpx`.
fn matches(template: &str, segments: &[&str]) -> bool {
    let parts: Vec<&str> = template.split('/').collect();
    parts.len() == segments.len()
        && parts.iter().zip(segments).all(|(t, s)| {
            if let Some(rest) = t.strip_prefix('{') {
                match rest.split_once('}') {
                    Some((_, "")) => !s.is_empty() && !s.ends_with(".gpx") && !s.ends_with(".fit"),
                    Some((_, suffix)) => s.len() > suffix.len() && s.ends_with(suffix),
                    None => false,
                }
            } else {
                t == s
            }
        })
}

/// The methods the document serves on a concrete path, with HEAD wherever GET is. Where
/// templates of different specificity match (`/trips/gpx-upload` and `/trips/{id}`), the
/// router takes the one with more literal segments, and so does this.
pub fn allowed_methods(path: &str) -> Vec<String> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let literals = |template: &str| template.split('/').filter(|t| !t.contains('{')).count();
    let matching: Vec<(String, String)> = operations()
        .into_iter()
        .filter(|(_, template)| matches(template, &segments))
        .collect();
    let most_literal = matching
        .iter()
        .map(|(_, template)| literals(template))
        .max()
        .unwrap_or_default();
    let mut allowed: Vec<String> = matching
        .into_iter()
        .filter(|(_, template)| literals(template) == most_literal)
        .map(|(method, _)| method)
        .collect();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.iter().any(|m| m == "GET") {
        allowed.push("HEAD".into());
    }
    allowed
}

/// `GET /openapi.json`.
#[utoipa::path(get, path = "/openapi.json", operation_id = "openapi", tag = "meta",
    summary = "This document", security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document",
        content_type = "application/json", body = Object)))]
pub(super) async fn serve() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        document().json.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowed_methods_are_read_from_the_document() {
        assert_eq!(allowed_methods("/trips"), ["GET", "POST", "HEAD"]);
        assert_eq!(
            allowed_methods("/trips/0190a4f0-0000-7000-8000-000000000000"),
            ["DELETE", "GET", "PATCH", "HEAD"]
        );
        assert_eq!(allowed_methods("/trips/x.gpx"), ["GET", "HEAD"]);
        assert_eq!(allowed_methods("/trips/gpx-upload"), ["POST"]);
        assert!(allowed_methods("/nowhere").is_empty());
    }

    #[test]
    fn every_object_is_closed() {
        let doc = &document().value;
        assert_eq!(doc["openapi"], json!("3.1.0"));
        assert_eq!(
            doc.pointer("/components/schemas/TripSummary/additionalProperties"),
            Some(&json!(false))
        );
        assert_eq!(
            doc.pointer("/components/schemas/CreateTrip/properties/maxDistancePerDay/maximum"),
            Some(&json!(
                etappe_domain::trip::settings::MAX_DISTANCE_PER_DAY.max
            ))
        );
    }
}
