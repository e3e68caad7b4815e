//! `GET /geocode/search?q=&limit=`: places by name, through the place service (the configured
//! geocoder or the embedded gazetteer).

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Query, State};
use etappe_domain::text::{quote, strip_controls};
use etappe_domain::trip::FieldError;

use super::App;
use super::extract::Caller;
use super::openapi::answers::*;
use super::openapi::params::PlaceQuery;
use crate::problem::Problem;
use etappe_app::AppError;
use etappe_app::places::{DEFAULT_PLACES, PlaceList, PlaceSearch, search_places};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

const PARAMETERS: [&str; 3] = ["q", "limit", "near"];

/// Place search, declared by its handler's operation.
pub(super) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::new().routes(routes!(search))
}

/// `GET /geocode/search`.
#[utoipa::path(get, path = "/geocode/search", operation_id = "searchPlaces", tag = "places",
    summary = "Find places by name",
    description = "Scope trips:read. Villages, towns, stations, huts, campsites, hotels and peaks of the imported OpenStreetMap extract, then localities of the embedded gazetteer, then (configured, and only when neither knows the name exactly) the geocoder. `near` (\"lat,lon\") ranks the nearest first among equally good matches.",
    params(PlaceQuery),
    responses((status = 200, description = "Places found", body = crate::openapi::views::PlaceListSchema),
        BadRequest, Unauthorized, Forbidden, RateLimited, Unavailable))]
pub(super) async fn search(
    State(state): State<App>,
    caller: Caller,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<PlaceList>, Problem> {
    let errors: Vec<FieldError> = params
        .keys()
        .filter(|k| !PARAMETERS.contains(&k.as_str()))
        .map(|k| {
            FieldError::new(
                strip_controls(k).chars().take(40).collect::<String>(),
                format!(
                    "unknown query parameter {}; accepted: q, limit, near",
                    quote(k)
                ),
            )
        })
        .collect();
    if !errors.is_empty() {
        return Err(AppError::InvalidQuery(errors).into());
    }
    let limit = match params.get("limit") {
        None => DEFAULT_PLACES,
        Some(raw) => raw.parse::<usize>().map_err(|_| {
            AppError::InvalidQuery(vec![FieldError::new(
                "limit",
                format!(
                    "limit must be a whole number from 1 to 10; got {}",
                    quote(raw)
                ),
            )])
        })?,
    };
    let q = params.get("q").map_or("", String::as_str);
    let search = PlaceSearch {
        q,
        limit,
        near: params.get("near").map(String::as_str),
    };
    let places = search_places(&caller.principal, &state.work().upstreams, search)
        .await
        .map_err(|e| match e {
            AppError::Input(input) => AppError::InvalidQuery(input.field_errors()),
            other => other,
        })?;
    Ok(Json(places))
}
