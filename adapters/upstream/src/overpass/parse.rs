//! Turns Overpass JSON (`out center tags`) into ranked [`Accommodation`]s,
//! cleaning every tag value on the way: OSM text is written by anyone.

use std::collections::HashMap;

use serde::Deserialize;

use super::price::estimate_price;
use super::{Accommodation, AccommodationType, OsmType, UPSTREAM};
use crate::error::{Upstream, UpstreamError};
use crate::geo::{haversine_m, is_valid_position};
use crate::http;
use crate::text::printable;

/// OSM allows 255 characters per tag value; more is never legitimate.
const MAX_TAG_CHARS: usize = 255;

/// Overpass's JSON answer, as both queries (places to sleep, features along a route) read it.
#[derive(Debug, Deserialize)]
pub(super) struct OverpassAnswer {
    /// Present when the server gave up part-way; `elements` may then be partial.
    #[serde(default)]
    pub(super) remark: Option<String>,
    pub(super) elements: Vec<RawElement>,
}

impl OverpassAnswer {
    /// An answer read whole, failures named after `upstream` (the service the caller
    /// asked): a runtime-error `remark` fails it, since its element list is then silently
    /// incomplete.
    pub(super) fn read(body: &str, upstream: Upstream) -> Result<Self, UpstreamError> {
        let answer: Self = http::parse_json(upstream, body)?;
        match answer
            .remark
            .as_deref()
            .and_then(|remark| remark_failure(upstream, remark))
        {
            Some(error) => Err(error),
            None => Ok(answer),
        }
    }
}

/// One element: a node with its position, a way or relation with its `center` (`out
/// center`) or its `geometry` (`out geom`, `null` where a node is missing).
#[derive(Debug, Deserialize)]
pub(super) struct RawElement {
    #[serde(rename = "type")]
    pub(super) osm_type: String,
    pub(super) id: u64,
    #[serde(default)]
    pub(super) lat: Option<f64>,
    #[serde(default)]
    pub(super) lon: Option<f64>,
    #[serde(default)]
    pub(super) center: Option<RawPoint>,
    #[serde(default)]
    pub(super) geometry: Option<Vec<Option<RawPoint>>>,
    #[serde(default)]
    pub(super) tags: HashMap<String, String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(super) struct RawPoint {
    pub(super) lat: f64,
    pub(super) lon: f64,
}

/// Parses an Overpass answer. Elements we cannot place or classify are
/// skipped (a way without nodes has no center); a runtime-error remark fails
/// the whole answer because its element list is silently incomplete.
pub(crate) fn parse_answer(
    body: &str,
    wanted: &[AccommodationType],
    from_lat: f64,
    from_lon: f64,
) -> Result<Vec<Accommodation>, UpstreamError> {
    let answer = OverpassAnswer::read(body, UPSTREAM)?;
    let mut accommodations: Vec<Accommodation> = answer
        .elements
        .iter()
        .filter_map(|element| into_accommodation(element, wanted))
        .collect();
    rank(&mut accommodations, from_lat, from_lon);
    Ok(accommodations)
}

/// Overpass reports its own failures inside a 200 answer. Timeouts and
/// memory exhaustion depend on server load, so they are worth retrying.
pub(crate) fn remark_failure(upstream: Upstream, remark: &str) -> Option<UpstreamError> {
    if !remark.contains("runtime error") {
        return None;
    }
    let detail = printable(remark, 300).unwrap_or_default();
    let lowered = remark.to_lowercase();
    if lowered.contains("timed out") {
        return Some(UpstreamError::new(
            upstream,
            format!("query timed out upstream: {detail}"),
            true,
        ));
    }
    let load_dependent = lowered.contains("out of memory");
    Some(UpstreamError::new(
        upstream,
        format!("query failed upstream: {detail}"),
        load_dependent,
    ))
}

fn into_accommodation(element: &RawElement, wanted: &[AccommodationType]) -> Option<Accommodation> {
    let osm_type = match element.osm_type.as_str() {
        "node" => OsmType::Node,
        "way" => OsmType::Way,
        "relation" => OsmType::Relation,
        _ => return None,
    };
    let (lat, lon) = match (element.lat, element.lon, &element.center) {
        (Some(lat), Some(lon), _) => (lat, lon),
        (_, _, Some(center)) => (center.lat, center.lon),
        _ => return None,
    };
    accommodation_from_tags(osm_type, element.id, lat, lon, &element.tags, wanted)
}

/// A place to sleep from an OSM object's tags (`tourism` one of `wanted`), with its price
/// estimated from its tags; `None` for another kind or an impossible position. Shared by
/// every source of OSM data, so a hotel reads the same from Overpass and a local index.
pub fn accommodation_from_tags(
    osm_type: OsmType,
    osm_id: u64,
    lat: f64,
    lon: f64,
    tags: &HashMap<String, String>,
    wanted: &[AccommodationType],
) -> Option<Accommodation> {
    if !is_valid_position(lat, lon) {
        return None;
    }
    let kind = AccommodationType::parse(tags.get("tourism")?.trim())?;
    if !wanted.contains(&kind) {
        return None;
    }
    let tag = |keys: &[&str]| {
        keys.iter().find_map(|key| {
            tags.get(*key)
                .and_then(|value| printable(value, MAX_TAG_CHARS))
        })
    };
    let price = estimate_price(kind, tags);
    Some(Accommodation {
        name: tag(&["name"]),
        kind,
        lat,
        lon,
        distance_to_end_m: 0.0,
        price_min_eur: price.min_eur,
        price_max_eur: price.max_eur,
        exact_price: price.exact,
        website: tag(&["website", "contact:website", "url"]).and_then(|url| safe_website(&url)),
        phone: tag(&["phone", "contact:phone"]),
        address: assemble_address(tags),
        opening_hours: tag(&["opening_hours"]),
        osm_type,
        osm_id,
    })
}

/// Sets distances from the day's end point and orders by usefulness: places
/// we can tell more about (name, website, phone, address) first, then nearer.
pub fn rank(accommodations: &mut [Accommodation], from_lat: f64, from_lon: f64) {
    for accommodation in accommodations.iter_mut() {
        accommodation.distance_to_end_m =
            haversine_m(from_lat, from_lon, accommodation.lat, accommodation.lon).round();
    }
    accommodations.sort_by(|a, b| {
        completeness(b)
            .cmp(&completeness(a))
            .then(a.distance_to_end_m.total_cmp(&b.distance_to_end_m))
            .then(a.osm_id.cmp(&b.osm_id))
    });
}

fn completeness(accommodation: &Accommodation) -> usize {
    [
        accommodation.name.is_some(),
        accommodation.website.is_some(),
        accommodation.phone.is_some(),
        accommodation.address.is_some(),
    ]
    .into_iter()
    .filter(|present| *present)
    .count()
}

/// "Hauptstraße 5, 79098 Freiburg". Villages without street names use
/// `addr:place` instead of `addr:street`.
fn assemble_address(tags: &HashMap<String, String>) -> Option<String> {
    let part = |key: &str| {
        tags.get(key)
            .and_then(|value| printable(value, MAX_TAG_CHARS))
    };
    let street = part("addr:street").or_else(|| part("addr:place"));
    let street_line = street.map(|street| match part("addr:housenumber") {
        Some(number) => format!("{street} {number}"),
        None => street,
    });
    let town_line = match (part("addr:postcode"), part("addr:city")) {
        (Some(postcode), Some(city)) => Some(format!("{postcode} {city}")),
        (postcode, city) => city.or(postcode),
    };
    let lines: Vec<String> = [street_line, town_line].into_iter().flatten().collect();
    (!lines.is_empty()).then(|| lines.join(", "))
}

/// Only http(s) links reach the UI: a `javascript:` or `data:` "website"
/// would be a script injection. Bare domains ("www.example.org") get https.
pub(crate) fn safe_website(value: &str) -> Option<String> {
    let lowered = value.to_ascii_lowercase();
    let candidate = if lowered.starts_with("http://") || lowered.starts_with("https://") {
        value.to_owned()
    } else if !value.contains(':') && value.contains('.') && !value.contains(' ') {
        format!("https://{value}")
    } else {
        return None;
    };
    let url = url::Url::parse(&candidate).ok()?;
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overpass::tags_of as tags;

    #[test]
    fn assembles_addresses_from_parts() {
        let full = tags(&[
            ("addr:street", "Hauptstraße"),
            ("addr:housenumber", "5"),
            ("addr:postcode", "79098"),
            ("addr:city", "Freiburg\n"),
        ]);
        assert_eq!(
            assemble_address(&full).as_deref(),
            Some("Hauptstraße 5, 79098 Freiburg")
        );
        let village = tags(&[("addr:place", "Oberried"), ("addr:housenumber", "3")]);
        assert_eq!(assemble_address(&village).as_deref(), Some("Oberried 3"));
        assert_eq!(assemble_address(&tags(&[("addr:housenumber", "3")])), None);
    }

    #[test]
    fn websites_must_be_http_links() {
        assert_eq!(
            safe_website("https://example.org/a").as_deref(),
            Some("https://example.org/a")
        );
        assert_eq!(
            safe_website("www.example.org").as_deref(),
            Some("https://www.example.org/")
        );
        assert_eq!(safe_website("javascript:alert(1)"), None);
        assert_eq!(safe_website("call us"), None);
    }

    #[test]
    fn remarks_other_than_runtime_errors_are_harmless() {
        assert!(remark_failure(UPSTREAM, "runtime remark: Timeout is 25 seconds").is_none());
        let timed_out = remark_failure(
            UPSTREAM,
            r#"runtime error: Query timed out in "query" at line 1 after 26 seconds."#,
        )
        .expect("failure");
        assert!(timed_out.retryable);
        assert!(timed_out.failure.starts_with("query timed out upstream"));
    }

    #[test]
    fn skips_elements_without_position_or_wanted_type() {
        let body = r#"{"elements":[
            {"type":"way","id":1,"tags":{"tourism":"hotel"}},
            {"type":"node","id":2,"lat":47.0,"lon":8.0,"tags":{"tourism":"museum"}},
            {"type":"node","id":3,"lat":47.0,"lon":8.0,"tags":{"tourism":"hostel"}},
            {"type":"node","id":4,"lat":47.0,"lon":8.0,"tags":{"tourism":"hotel"}}
        ]}"#;
        let found = parse_answer(body, &[AccommodationType::Hotel], 47.0, 8.0).expect("parse");
        assert_eq!(found.iter().map(|a| a.osm_id).collect::<Vec<_>>(), [4]);
    }
}
