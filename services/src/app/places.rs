//! Place search: the configured geocoder (Nominatim, rate-limited and cached) or the embedded
//! GeoNames gazetteer. Place names are third-party data: control characters are stripped and
//! they are returned as data. A failing geocoder is a named upstream error, never a guess.

use etappe_domain::text::{quote, strip_controls};
use etappe_domain::trip::plan::{PlaceInput, PlanInput, PlanPlace, RoutePlan};
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
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
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
#[derive(Clone, Debug, Serialize)]
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

/// A second exact match at least this share of the best one's population (the embedded
/// gazetteer) makes a name ambiguous: "Springfield" is, "Basel" (177,595 against Bazel's
/// 5,687) is not.
const AMBIGUOUS_POPULATION_SHARE: f64 = 0.4;
/// The same for Nominatim's importance, which is spread much more narrowly than
/// populations.
const AMBIGUOUS_IMPORTANCE_SHARE: f64 = 0.9;
/// Candidates named when a name is ambiguous.
const CANDIDATES_NAMED: usize = 5;

/// Why a place name could not be resolved to one place.
enum Unresolved {
    /// No place of that name.
    Unknown,
    /// Several places of that name of similar weight, described for the caller.
    Ambiguous(Vec<String>),
    /// The geocoder failed.
    Upstream(etappe_upstream::UpstreamError),
}

/// The place a name means: its clear best match (an exact name first; of several exact ones
/// the most populous, or the geocoder's first), or why there is none.
async fn resolve_name(upstreams: &Upstreams, name: &str) -> Result<PlanPlace, Unresolved> {
    let folded = etappe_gazetteer::fold(name);
    if let Some(geocoder) = &upstreams.geocoder {
        let found = geocoder
            .search(name, CANDIDATES_NAMED)
            .await
            .map_err(Unresolved::Upstream)?;
        let exact: Vec<&etappe_upstream::Place> = found
            .iter()
            .filter(|p| etappe_gazetteer::fold(&p.name) == folded)
            .collect();
        // Nominatim ranks by importance: a second exact match nearly as important is the
        // "Springfield" case; Paris, Texas is far below Paris.
        let best = exact.first().copied().or(found.first());
        let Some(best) = best else {
            return Err(Unresolved::Unknown);
        };
        let weight = |p: &etappe_upstream::Place| p.importance.unwrap_or(0.0);
        if exact.len() > 1
            && exact
                .iter()
                .skip(1)
                .any(|p| weight(p) >= AMBIGUOUS_IMPORTANCE_SHARE * weight(best))
        {
            return Err(Unresolved::Ambiguous(
                exact
                    .iter()
                    .map(|p| {
                        format!(
                            "{} ({:.4},{:.4})",
                            strip_controls(&p.display_name),
                            p.lat,
                            p.lon
                        )
                    })
                    .collect(),
            ));
        }
        return Ok(PlanPlace {
            name: Some(strip_controls(&best.name)),
            lat: best.lat,
            lon: best.lon,
        });
    }
    let gazetteer = etappe_gazetteer::Gazetteer::try_embedded().map_err(|_| Unresolved::Unknown)?;
    let found = gazetteer.search(name, 20);
    let primary = |m: &&etappe_gazetteer::Match<'_, '_>| {
        etappe_gazetteer::fold(m.place.name) == folded
            || etappe_gazetteer::fold(m.place.ascii_name) == folded
    };
    let exact_kind =
        |m: &&etappe_gazetteer::Match<'_, '_>| m.kind == etappe_gazetteer::MatchKind::Exact;
    // The name itself first, then an exact alternate name ("Wien"), then the best match.
    let mut candidates: Vec<&etappe_gazetteer::Match<'_, '_>> =
        found.iter().filter(primary).collect();
    if candidates.is_empty() {
        candidates = found.iter().filter(exact_kind).collect();
    }
    if candidates.is_empty() {
        candidates = found.iter().take(1).collect();
    }
    candidates.sort_by_key(|m| std::cmp::Reverse(m.place.population));
    let Some(best) = candidates.first() else {
        return Err(Unresolved::Unknown);
    };
    let rivals = candidates.iter().skip(1).any(|m| {
        f64::from(m.place.population)
            >= AMBIGUOUS_POPULATION_SHARE * f64::from(best.place.population)
    });
    if rivals {
        return Err(Unresolved::Ambiguous(
            candidates
                .iter()
                .take(CANDIDATES_NAMED)
                .map(|m| {
                    let p = m.place;
                    let region = if p.admin1.is_empty() {
                        p.country_code.to_owned()
                    } else {
                        format!("{}-{}", p.country_code, p.admin1)
                    };
                    format!(
                        "{} {region}, population {} ({:.4},{:.4})",
                        strip_controls(p.name),
                        p.population,
                        p.lat,
                        p.lon
                    )
                })
                .collect(),
        ));
    }
    Ok(PlanPlace {
        name: Some(strip_controls(best.place.name)),
        lat: best.place.lat,
        lon: best.place.lon,
    })
}

/// A caller's plan with every name resolved to a place; every field that could not be
/// resolved is named (`plan.via[1]`: "Springfield" is ambiguous: …), a failing geocoder is
/// its named upstream error.
pub async fn resolve_plan(upstreams: &Upstreams, input: &PlanInput) -> Result<RoutePlan, AppError> {
    let mut errors = Vec::new();
    let mut places = Vec::new();
    for (field, place) in input.places() {
        match place {
            PlaceInput::At { lat, lon, name } => places.push(PlanPlace {
                name: name.clone(),
                lat: *lat,
                lon: *lon,
            }),
            PlaceInput::Named(name) => match resolve_name(upstreams, name).await {
                Ok(place) => places.push(place),
                Err(Unresolved::Upstream(error)) => return Err(AppError::Upstream(error)),
                Err(Unresolved::Unknown) => errors.push(FieldError::new(
                    field.clone(),
                    format!(
                        "{field}: no place is called {}; search with search_places (GET /geocode/search) or give coordinates (\"47.56,7.59\")",
                        quote(name)
                    ),
                )),
                Err(Unresolved::Ambiguous(candidates)) => errors.push(FieldError::new(
                    field.clone(),
                    format!(
                        "{field}: {} names several places: {}; give the one you mean as coordinates (\"lat,lon\")",
                        quote(name),
                        candidates.join("; ")
                    ),
                )),
            },
        }
    }
    if !errors.is_empty() {
        return Err(InputError::Invalid(errors).into());
    }
    let to = places.pop();
    let mut places = places.into_iter();
    let (Some(from), Some(to)) = (places.next(), to) else {
        return Err(AppError::Internal("a plan without its ends".into()));
    };
    Ok(RoutePlan {
        from,
        via: places.collect(),
        to,
        profile: input.profile,
    })
}
