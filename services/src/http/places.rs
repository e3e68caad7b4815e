//! `GET /geocode/search?q=&limit=`: places by name, from the embedded GeoNames gazetteer
//! (ASCII-folded, prefix and typo-tolerant, ranked by population). Place names are third-party
//! data: control characters are stripped and they are returned as data.

use std::collections::HashMap;

use axum::Json;
use axum::extract::Query;
use etappe_events::text::{quote, strip_controls};
use etappe_events::trip::FieldError;
use serde::Serialize;

use super::extract::Caller;
use crate::app::AppError;
use crate::identity::Scope;

const PARAMETERS: [&str; 2] = ["q", "limit"];

/// One place found.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PlaceItem {
    name: String,
    display_name: String,
    lat: f64,
    lon: f64,
    country_code: String,
    population: u32,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PlaceList {
    items: Vec<PlaceItem>,
    total_items: usize,
    source: &'static str,
}

pub(super) async fn search(
    Caller(principal): Caller,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<PlaceList>, AppError> {
    if !principal.has(Scope::TripsRead) {
        return Err(AppError::InsufficientScope(Scope::TripsRead));
    }
    let mut errors: Vec<FieldError> = params
        .keys()
        .filter(|k| !PARAMETERS.contains(&k.as_str()))
        .map(|k| {
            FieldError::new(
                strip_controls(k).chars().take(40).collect::<String>(),
                format!("unknown query parameter {}; accepted: q, limit", quote(k)),
            )
        })
        .collect();
    let q = params
        .get("q")
        .map(|q| q.trim().to_owned())
        .unwrap_or_default();
    if q.is_empty() || q.chars().count() > 200 {
        errors.push(FieldError::new(
            "q",
            "q must be a place name of 1 to 200 characters",
        ));
    }
    let limit = match params.get("limit") {
        None => 5,
        Some(raw) => match raw.parse::<usize>() {
            Ok(n) if (1..=10).contains(&n) => n,
            _ => {
                errors.push(FieldError::new(
                    "limit",
                    format!(
                        "limit must be a whole number from 1 to 10; got {}",
                        quote(raw)
                    ),
                ));
                5
            }
        },
    };
    if !errors.is_empty() {
        return Err(AppError::InvalidQuery(errors));
    }
    let gazetteer = etappe_gazetteer::Gazetteer::try_embedded().map_err(|e| {
        AppError::Unavailable(format!("the embedded gazetteer cannot be read: {e:?}"))
    })?;
    let items: Vec<PlaceItem> = gazetteer
        .search(&q, limit)
        .into_iter()
        .map(|m| {
            let place = m.place;
            let country = gazetteer
                .country_name(place.country_code)
                .unwrap_or(place.country_code);
            PlaceItem {
                name: strip_controls(place.name),
                display_name: strip_controls(&format!("{}, {country}", place.name)),
                lat: place.lat,
                lon: place.lon,
                country_code: place.country_code.to_owned(),
                population: place.population,
                kind: "locality",
            }
        })
        .collect();
    Ok(Json(PlaceList {
        total_items: items.len(),
        items,
        source: "embedded GeoNames gazetteer (CC BY 4.0)",
    }))
}
