//! Place search: the configured geocoder (Nominatim, rate-limited and cached) or the embedded
//! GeoNames gazetteer. Place names are third-party data: control characters are stripped and
//! they are returned as data. A failing geocoder is a named upstream error, never a guess.

use etappe_domain::text::strip_controls;
use etappe_domain::trip::{FieldError, InputError};
use etappe_workers::upstreams::Upstreams;
use serde::Serialize;

use super::AppError;
use crate::identity::{Principal, Scope};

/// The most places a search answers.
pub const MAX_PLACES: usize = 10;
/// How many when the caller does not say.
pub const DEFAULT_PLACES: usize = 5;

/// One place found.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Place)]
pub struct PlaceItem {
    /// Third-party data (GeoNames or OpenStreetMap).
    pub name: String,
    pub display_name: String,
    pub lat: f64,
    pub lon: f64,
    pub country_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub population: Option<u32>,
    #[serde(rename = "type")]
    pub kind: String,
}

/// The answer.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaceList {
    pub items: Vec<PlaceItem>,
    pub total_items: usize,
    pub source: &'static str,
}

/// Searches places by name (`q` 1–200 characters, `limit` 1–10).
pub async fn search_places(
    principal: &Principal,
    upstreams: &Upstreams,
    q: &str,
    limit: usize,
) -> Result<PlaceList, AppError> {
    if !principal.has(Scope::TripsRead) {
        return Err(AppError::InsufficientScope(Scope::TripsRead));
    }
    let q = q.trim();
    let mut errors = Vec::new();
    if q.is_empty() || q.chars().count() > 200 {
        errors.push(FieldError::new(
            "q",
            "q must be a place name of 1 to 200 characters",
        ));
    }
    if !(1..=MAX_PLACES).contains(&limit) {
        errors.push(FieldError::new(
            "limit",
            format!("limit must be a whole number from 1 to {MAX_PLACES}"),
        ));
    }
    if !errors.is_empty() {
        return Err(InputError::Invalid(errors).into());
    }
    if let Some(geocoder) = &upstreams.geocoder {
        let found = geocoder
            .search(q, limit)
            .await
            .map_err(AppError::Upstream)?;
        let items: Vec<PlaceItem> = found
            .into_iter()
            .map(|p| PlaceItem {
                name: strip_controls(&p.name),
                display_name: strip_controls(&p.display_name),
                lat: p.lat,
                lon: p.lon,
                country_code: p.country_code.as_deref().map(strip_controls),
                population: None,
                kind: strip_controls(&p.kind),
            })
            .collect();
        return Ok(PlaceList {
            total_items: items.len(),
            items,
            source: "Nominatim (© OpenStreetMap contributors, ODbL)",
        });
    }
    let gazetteer = etappe_gazetteer::Gazetteer::try_embedded().map_err(|e| {
        AppError::Unavailable(format!("the embedded gazetteer cannot be read: {e:?}"))
    })?;
    let items: Vec<PlaceItem> = gazetteer
        .search(q, limit)
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
                country_code: Some(place.country_code.to_owned()),
                population: Some(place.population),
                kind: "locality".into(),
            }
        })
        .collect();
    Ok(PlaceList {
        total_items: items.len(),
        items,
        source: "embedded GeoNames gazetteer (CC BY 4.0)",
    })
}
