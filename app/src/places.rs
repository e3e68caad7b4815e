//! Places by name, where the trip is. A name is looked up in the imported OpenStreetMap
//! extract (villages, stations, huts, campsites, hotels, peaks, squares, by every name they
//! carry), then in the embedded GeoNames gazetteer, then in the configured geocoder
//! (Nominatim, rate-limited and cached): for a search always, for a plan's name only when
//! neither of the others knows it exactly. Which candidate
//! a plan's name takes is the domain's rule ([`choice`]): exact and local first, nearest the
//! plan's other places, never a silent jump to another continent. Place names are
//! third-party data: cleaned at the text gate and returned as data. A failing geocoder is a
//! named upstream error, never a guess.

use etappe_domain::text::{NAME_MAX_CHARS, strip_controls};
use etappe_domain::trip::plan::choice::{self, Candidate, Coverage, NameFit, PlaceSource, Slot};
use etappe_domain::trip::plan::{PlaceInput, PlanInput, PlanPlace, RoutePlan};
use etappe_domain::trip::{FieldError, InputError};
use etappe_gazetteer::{Gazetteer, MatchKind};
use etappe_workers::upstreams::Upstreams;
use serde::Serialize;

use super::AppError;
use crate::identity::{Principal, Scope};

/// The most places a search answers.
pub const MAX_PLACES: usize = 10;
/// How many when the caller does not say.
pub const DEFAULT_PLACES: usize = 5;
/// Candidates asked of each source for one name of a plan.
const CANDIDATES_PER_SOURCE: usize = 20;
/// A place this close to a gazetteer locality is said to be near it ("near Triesenberg").
const NEAR_LOCALITY_M: f64 = 15_000.0;
/// A population at which a gazetteer place weighs one half (see [`population_weight`]).
const HALF_WEIGHT_POPULATION: f64 = 100_000.0;

/// One place found.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaceItem {
    /// Third-party data (OpenStreetMap, GeoNames).
    pub name: String,
    /// The name with where it is: "Malbun (alpine_hut), near Triesenberg, Liechtenstein".
    pub display_name: String,
    pub lat: f64,
    pub lon: f64,
    pub country_code: Option<String>,
    /// Where it is, in words: the locality it lies near and its country.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub population: Option<u32>,
    /// What it is: village, town, station, alpine_hut, camp_site, hotel, peak, locality…
    #[serde(rename = "type")]
    pub kind: String,
    /// Where it was found: extract, gazetteer or geocoder.
    pub found_in: &'static str,
    /// Its distance from `near`, when the search was given one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_km: Option<f64>,
}

/// The answer.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaceList {
    pub items: Vec<PlaceItem>,
    pub total_items: usize,
    /// The sources read, with their licences.
    pub source: String,
}

/// A place search: what is typed, how many, and the point to rank from.
#[derive(Clone, Debug)]
pub struct PlaceSearch<'a> {
    pub q: &'a str,
    pub limit: usize,
    /// `"lat,lon"`: places nearest it first among equally good matches.
    pub near: Option<&'a str>,
}

/// Searches places by name (`q` 1–200 characters, `limit` 1–10, `near` "lat,lon").
pub async fn search_places(
    principal: &Principal,
    upstreams: &Upstreams,
    search: PlaceSearch<'_>,
) -> Result<PlaceList, AppError> {
    if !principal.has(Scope::TripsRead) {
        return Err(AppError::InsufficientScope(Scope::TripsRead));
    }
    let q = search.q.trim();
    let mut errors = Vec::new();
    if q.is_empty() || q.chars().count() > NAME_MAX_CHARS {
        errors.push(FieldError::new(
            "q",
            format!("q must be a place name of 1 to {NAME_MAX_CHARS} characters"),
        ));
    }
    if !(1..=MAX_PLACES).contains(&search.limit) {
        errors.push(FieldError::new(
            "limit",
            format!("limit must be a whole number from 1 to {MAX_PLACES}"),
        ));
    }
    let near = match search.near.map(parse_near).transpose() {
        Ok(near) => near,
        Err(error) => {
            errors.push(error);
            None
        }
    };
    if !errors.is_empty() {
        return Err(InputError::Invalid(errors).into());
    }
    let per_source = search.limit.max(CANDIDATES_PER_SOURCE / 2);
    let found = candidates(upstreams, q, per_source, Geocoder::Always)
        .await
        .map_err(AppError::Upstream)?;
    let mut ranked: Vec<Found> = distinct(found.places);
    ranked.sort_by(|a, b| {
        let distance = |f: &Found| {
            near.map_or(0.0, |(lat, lon)| {
                etappe_geo::haversine_m(lat, lon, f.candidate.lat, f.candidate.lon)
            })
        };
        (a.candidate.fit, a.candidate.source)
            .cmp(&(b.candidate.fit, b.candidate.source))
            .then(distance(a).total_cmp(&distance(b)))
            .then(b.candidate.weight.total_cmp(&a.candidate.weight))
    });
    let items: Vec<PlaceItem> = ranked
        .into_iter()
        .take(search.limit)
        .map(|f| item(f, near))
        .collect();
    Ok(PlaceList {
        total_items: items.len(),
        items,
        source: found.sources.join("; "),
    })
}

/// `"lat,lon"` as coordinates, or what is accepted: decimal degrees without exponent or
/// leading zeros, spaces around either number — exactly the OpenAPI pattern of `near`, so
/// the document is as strict as the server (a final line break, which that pattern's `$`
/// lets through, is let through here too).
fn parse_near(raw: &str) -> Result<(f64, f64), FieldError> {
    let refuse = || {
        FieldError::new(
            "near",
            "near must be a point as \"lat,lon\" in decimal degrees (\"47.14,9.52\"), latitude -90 to 90, longitude -180 to 180",
        )
    };
    let raw = raw.strip_suffix('\n').unwrap_or(raw);
    let (lat, lon) = raw.split_once(',').ok_or_else(refuse)?;
    match (
        degrees(lat.trim_matches(' '), 90),
        degrees(lon.trim_matches(' '), 180),
    ) {
        (Some(lat), Some(lon)) => Ok((lat, lon)),
        _ => Err(refuse()),
    }
}

/// `-?D(.F)?` with D a whole number up to `max` without leading zeros (`max` itself only with
/// a zero fraction), as a number.
fn degrees(text: &str, max: u32) -> Option<f64> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || whole.len() > 3 || (whole.len() > 1 && whole.starts_with('0')) {
        return None;
    }
    if fraction.is_some_and(|f| !digits(f)) {
        return None;
    }
    let whole_value: u32 = whole.parse().ok()?;
    let zero_fraction = fraction.is_none_or(|f| f.bytes().all(|b| b == b'0'));
    if whole_value > max || (whole_value == max && !zero_fraction) {
        return None;
    }
    text.parse().ok()
}

/// A candidate with what only a search answer shows.
struct Found {
    candidate: Candidate,
    country_code: Option<String>,
    region: Option<String>,
    population: Option<u32>,
}

/// What the sources offered for a name, and which sources were read.
struct Offered {
    places: Vec<Found>,
    sources: Vec<&'static str>,
}

/// When the configured geocoder is asked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Geocoder {
    /// Always: a search shows the rider everything there is to pick from.
    Always,
    /// Only when neither the extract nor the gazetteer knows the name exactly: a plan's
    /// village is not worth a third party's request (its usage policy allows one a second).
    WhenUnknown,
}

/// Every source's candidates for `name`, at most `per_source` from each: the extract and
/// the gazetteer always, the geocoder (when configured) as `geocoder` says.
async fn candidates(
    upstreams: &Upstreams,
    name: &str,
    per_source: usize,
    geocoder: Geocoder,
) -> Result<Offered, etappe_upstream::UpstreamError> {
    let gazetteer = Gazetteer::try_embedded().ok();
    let mut places = Vec::new();
    let mut sources = Vec::new();
    if let Some(index) = &upstreams.local_index {
        match index.places_named(name, per_source).await {
            Ok(named) if !named.is_empty() => {
                sources.push("OpenStreetMap extract (© OpenStreetMap contributors, ODbL)");
                places.extend(named.into_iter().map(|p| {
                    let (country_code, country, region) =
                        whereabouts(gazetteer, p.lat, p.lon, &p.name);
                    Found {
                        candidate: Candidate {
                            name: strip_controls(&p.name),
                            kind: p.kind,
                            country,
                            lat: p.lat,
                            lon: p.lon,
                            fit: if p.exact {
                                NameFit::Exact
                            } else {
                                NameFit::Partial
                            },
                            source: PlaceSource::Extract,
                            weight: p.weight,
                        },
                        country_code,
                        region,
                        population: None,
                    }
                }));
            }
            Ok(_) => {}
            // The extract is a help, not a requirement: the gazetteer still answers.
            Err(error) => {
                tracing::warn!(%error, "places: the OpenStreetMap extract does not answer");
            }
        }
    }
    if let Some(gazetteer) = gazetteer {
        let found = gazetteer.search(name, per_source);
        if !found.is_empty() {
            sources.push("embedded GeoNames gazetteer (CC BY 4.0)");
        }
        places.extend(found.into_iter().map(|m| {
            let place = m.place;
            let country = gazetteer
                .country_name(place.country_code)
                .unwrap_or(place.country_code);
            Found {
                candidate: Candidate {
                    name: strip_controls(place.name),
                    kind: "locality".into(),
                    country: Some(country.to_owned()),
                    lat: place.lat,
                    lon: place.lon,
                    fit: match m.kind {
                        MatchKind::Exact => NameFit::Exact,
                        MatchKind::Prefix | MatchKind::Token => NameFit::Partial,
                        MatchKind::Fuzzy => NameFit::Fuzzy,
                    },
                    source: PlaceSource::Gazetteer,
                    weight: population_weight(place.population),
                },
                country_code: Some(place.country_code.to_owned()),
                region: Some(country.to_owned()),
                population: Some(place.population),
            }
        }));
    }
    let known_exactly = places.iter().any(|f| f.candidate.fit == NameFit::Exact);
    let ask = geocoder == Geocoder::Always || !known_exactly;
    if let Some(geocoder) = upstreams.geocoder.as_ref().filter(|_| ask) {
        let found = geocoder.search(name, per_source.min(MAX_PLACES)).await?;
        sources.push("Nominatim (© OpenStreetMap contributors, ODbL)");
        let folded = etappe_gazetteer::fold(name);
        places.extend(found.into_iter().map(|p| {
            let country_code = p.country_code.as_deref().map(strip_controls);
            let country = country_code
                .as_deref()
                .and_then(|c| gazetteer.and_then(|g| g.country_name(&c.to_uppercase())))
                .map(str::to_owned)
                .or_else(|| country_code.clone());
            Found {
                candidate: Candidate {
                    fit: if etappe_gazetteer::fold(&p.name) == folded {
                        NameFit::Exact
                    } else {
                        NameFit::Partial
                    },
                    name: strip_controls(&p.name),
                    kind: strip_controls(&p.kind),
                    country,
                    lat: p.lat,
                    lon: p.lon,
                    source: PlaceSource::Geocoder,
                    weight: p.importance.unwrap_or(0.3).clamp(0.0, 1.0),
                },
                region: Some(strip_controls(&p.display_name)),
                country_code,
                population: None,
            }
        }));
    }
    Ok(Offered { places, sources })
}

/// A gazetteer population as a weight among places of one name: one half at 100,000, so
/// Springfield, Illinois and Springfield, Massachusetts weigh alike and Paris, Texas is a
/// fifth of Paris.
fn population_weight(population: u32) -> f64 {
    let p = f64::from(population);
    p / (p + HALF_WEIGHT_POPULATION)
}

/// The country code, country name and region in words of a point the extract holds: the
/// nearest gazetteer locality's country, and "near" that locality when it is close and not
/// the place itself.
fn whereabouts(
    gazetteer: Option<&Gazetteer<'static>>,
    lat: f64,
    lon: f64,
    own_name: &str,
) -> (Option<String>, Option<String>, Option<String>) {
    let Some((gazetteer, nearest)) = gazetteer.and_then(|g| Some((g, g.reverse(lat, lon)?))) else {
        return (None, None, None);
    };
    let code = nearest.place.country_code;
    let country = gazetteer.country_name(code).unwrap_or(code).to_owned();
    let same = etappe_gazetteer::fold(nearest.place.name) == etappe_gazetteer::fold(own_name);
    let region = if nearest.distance_m <= NEAR_LOCALITY_M && !same {
        format!("near {}, {country}", strip_controls(nearest.place.name))
    } else {
        country.clone()
    };
    (Some(code.to_owned()), Some(country), Some(region))
}

/// The found places without the same place from a later source.
fn distinct(found: Vec<Found>) -> Vec<Found> {
    let mut kept: Vec<Found> = Vec::new();
    for f in found {
        let twin = kept.iter().any(|k| {
            etappe_gazetteer::fold(&k.candidate.name) == etappe_gazetteer::fold(&f.candidate.name)
                && etappe_geo::haversine_m(
                    k.candidate.lat,
                    k.candidate.lon,
                    f.candidate.lat,
                    f.candidate.lon,
                ) < 3_000.0
        });
        if !twin {
            kept.push(f);
        }
    }
    kept
}

fn item(found: Found, near: Option<(f64, f64)>) -> PlaceItem {
    let Found {
        candidate: c,
        country_code,
        region,
        population,
    } = found;
    let display_name = match &region {
        Some(region) if c.source == PlaceSource::Geocoder => region.clone(),
        Some(region) => format!("{} ({}), {region}", c.name, c.kind),
        None => format!("{} ({})", c.name, c.kind),
    };
    PlaceItem {
        display_name,
        lat: c.lat,
        lon: c.lon,
        country_code,
        region: region.filter(|_| c.source != PlaceSource::Geocoder),
        population,
        kind: c.kind,
        found_in: match c.source {
            PlaceSource::Extract => "extract",
            PlaceSource::Gazetteer => "gazetteer",
            PlaceSource::Geocoder => "geocoder",
        },
        distance_km: near.map(|(lat, lon)| {
            (etappe_geo::haversine_m(lat, lon, c.lat, c.lon) / 100.0).round() / 10.0
        }),
        name: c.name,
    }
}

/// A caller's plan with every name resolved to a place, or every field that could not be
/// (`plan.via[1]`: "Malbun" matches no place near the plan's other places: …, with the
/// candidates); a failing geocoder is its named upstream error.
pub async fn resolve_plan(upstreams: &Upstreams, input: &PlanInput) -> Result<RoutePlan, AppError> {
    let mut slots = Vec::new();
    let mut given_names = Vec::new();
    for (field, place) in input.places() {
        match place {
            PlaceInput::At { lat, lon, name } => {
                slots.push(Slot::At {
                    lat: *lat,
                    lon: *lon,
                });
                given_names.push(name.clone());
            }
            PlaceInput::Named(name) => {
                let offered = candidates(
                    upstreams,
                    name,
                    CANDIDATES_PER_SOURCE,
                    Geocoder::WhenUnknown,
                )
                .await
                .map_err(AppError::Upstream)?;
                slots.push(Slot::Named {
                    field,
                    name: name.clone(),
                    candidates: offered.places.into_iter().map(|f| f.candidate).collect(),
                });
                given_names.push(None);
            }
        }
    }
    let coverage = match &upstreams.local_index {
        Some(index) => Coverage(index.coverage().await),
        None => Coverage::default(),
    };
    let chosen = choice::choose(&slots, &coverage)
        .map_err(|errors| AppError::from(InputError::Invalid(errors)))?;
    let places: Option<Vec<PlanPlace>> = slots
        .iter()
        .zip(chosen)
        .zip(given_names)
        .map(|((slot, chosen), given)| match (slot, chosen) {
            (_, Some(c)) => Some(PlanPlace {
                name: Some(c.name),
                lat: c.lat,
                lon: c.lon,
            }),
            (Slot::At { lat, lon }, None) => Some(PlanPlace {
                name: given,
                lat: *lat,
                lon: *lon,
            }),
            (Slot::Named { .. }, None) => None,
        })
        .collect();
    let Some(mut places) = places else {
        return Err(AppError::Internal(
            "a named place without its choice".into(),
        ));
    };
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

#[cfg(test)]
mod tests {
    use super::parse_near;

    #[test]
    fn near_takes_decimal_degrees_in_range_and_nothing_else() {
        assert_eq!(parse_near("47.14,9.52").ok(), Some((47.14, 9.52)));
        assert_eq!(parse_near(" -90 , 180.000 ").ok(), Some((-90.0, 180.0)));
        assert_eq!(parse_near("0,-179.9\n").ok(), Some((0.0, -179.9)));
        for refused in [
            "90.1,0", "0,180.5", "05,1", "1e1,2", "inf,1", "1,", ",1", "1;2", "\t1,2", "1.,2",
            "+1,2", "536.0,1",
        ] {
            assert!(parse_near(refused).is_err(), "{refused:?}");
        }
    }
}
