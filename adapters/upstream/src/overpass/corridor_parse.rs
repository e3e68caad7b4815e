//! Turns an Overpass answer to a corridor query into what the analysis reads, through a
//! slim form that is also what the cache stores: the elements worth keeping, with only the
//! tags the analysis reads, cleaned of control characters (OSM text is written by anyone).
//!
//! Elements without `geometry` come from `out center tags` (nodes at their position, ways
//! and relations at their centre) and become points when
//! [`FeatureKind::classify`] keeps them; elements with `geometry` come from `out tags geom`
//! and become road ways (`highway`) and ferry lines (`route=ferry`). A `null` in a
//! geometry (a node Overpass could not place) splits the way rather than joining its
//! neighbours with a straight line. Elements seen in two chunks are kept once
//! ([`Merged`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use etappe_analysis::osm::{
    FEATURE_KEYS, FERRY_KEYS, Feature, FeatureKind, FerryLine, RawWay, RouteFeatures, WaySection,
};
use serde::{Deserialize, Serialize};

use super::OsmType;
use super::parse::{OverpassAnswer, RawElement, RawPoint, safe_website};
use crate::error::{Upstream, UpstreamError};
use crate::geo::is_valid_position;
use crate::text::printable;

/// OSM allows 255 characters per tag value; more is never legitimate.
const MAX_TAG_CHARS: usize = 255;

/// What one query found, in the form the cache stores.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct ChunkFound {
    pub(crate) points: Vec<SlimPoint>,
    pub(crate) ways: Vec<SlimWay>,
    pub(crate) ferries: Vec<SlimWay>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SlimPoint {
    pub(crate) osm_type: OsmType,
    pub(crate) id: u64,
    pub(crate) lat: f64,
    pub(crate) lon: f64,
    pub(crate) tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SlimWay {
    pub(crate) id: u64,
    /// The way's runs of placed vertices, (lat, lon); each has at least two.
    pub(crate) pieces: Vec<Vec<(f64, f64)>>,
    pub(crate) tags: BTreeMap<String, String>,
}

/// Parses one answer. A runtime-error `remark` fails it: its element list is silently
/// incomplete, and reading it as complete would raise false "no water" alerts.
pub(crate) fn parse_chunk(body: &str) -> Result<ChunkFound, UpstreamError> {
    let answer = OverpassAnswer::read(body, Upstream::Overpass)?;
    let mut found = ChunkFound::default();
    for element in &answer.elements {
        match &element.geometry {
            Some(geometry) => {
                let Some(id) = (element.osm_type == "way").then_some(element.id) else {
                    continue;
                };
                let pieces = placed_runs(geometry);
                if pieces.is_empty() {
                    continue;
                }
                let tag = |k: &str| element.tags.get(k).map(String::as_str);
                if tag("highway").is_some_and(WaySection::is_road) {
                    found.ways.push(SlimWay {
                        id,
                        pieces: pieces.clone(),
                        tags: kept_tags(&element.tags, WaySection::TAG_KEYS),
                    });
                }
                if tag("route") == Some("ferry") {
                    found.ferries.push(SlimWay {
                        id,
                        pieces,
                        tags: kept_tags(&element.tags, FERRY_KEYS),
                    });
                }
            }
            None => found.points.extend(slim_point(element)),
        }
    }
    Ok(found)
}

/// A point element the analysis keeps, placed at its position or centre.
fn slim_point(element: &RawElement) -> Option<SlimPoint> {
    let osm_type = match element.osm_type.as_str() {
        "node" => OsmType::Node,
        "way" => OsmType::Way,
        "relation" => OsmType::Relation,
        _ => return None,
    };
    let (lat, lon) = match (element.lat, element.lon, element.center) {
        (Some(lat), Some(lon), _) => (lat, lon),
        (_, _, Some(center)) => (center.lat, center.lon),
        _ => return None,
    };
    if !is_valid_position(lat, lon) {
        return None;
    }
    let tags = kept_tags(&element.tags, FEATURE_KEYS);
    FeatureKind::classify(|k| tags.get(k).map(String::as_str))?;
    Some(SlimPoint {
        osm_type,
        id: element.id,
        lat,
        lon,
        tags,
    })
}

/// The runs of valid vertices between `null`s, each of at least two vertices.
fn placed_runs(geometry: &[Option<RawPoint>]) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    for vertex in geometry {
        match vertex {
            Some(p) if is_valid_position(p.lat, p.lon) => run.push((p.lat, p.lon)),
            _ => {
                if run.len() >= 2 {
                    runs.push(std::mem::take(&mut run));
                }
                run.clear();
            }
        }
    }
    if run.len() >= 2 {
        runs.push(run);
    }
    runs
}

/// The listed tags, cleaned; a value with nothing printable left is dropped.
fn kept_tags(tags: &HashMap<String, String>, keys: &[&str]) -> BTreeMap<String, String> {
    keys.iter()
        .filter_map(|&key| {
            let value = printable(tags.get(key)?, MAX_TAG_CHARS)?;
            Some((key.to_owned(), value))
        })
        .collect()
}

/// Answers of several queries merged, each element once: points by type and id, ways and
/// ferries by way id (a ford way is both a point and a road way, and stays both).
#[derive(Debug, Default)]
pub(crate) struct Merged {
    seen_points: HashSet<(OsmType, u64)>,
    seen_ways: HashSet<u64>,
    seen_ferries: HashSet<u64>,
    found: RouteFeatures,
}

impl Merged {
    pub(crate) fn add(&mut self, chunk: &ChunkFound) {
        for point in &chunk.points {
            if self.seen_points.insert((point.osm_type, point.id)) {
                self.found.points.extend(feature(point));
            }
        }
        for way in &chunk.ways {
            if !self.seen_ways.insert(way.id) {
                continue;
            }
            let tag = |k: &str| way.tags.get(k).map(String::as_str);
            let Some(section) = WaySection::from_tags(0.0, (0.0, 0.0), tag) else {
                continue;
            };
            let section = WaySection {
                way_id: i64::try_from(way.id).ok(),
                ..section
            };
            for piece in &way.pieces {
                self.found.ways.push(RawWay {
                    tags: section.clone(),
                    points: piece.clone(),
                });
            }
        }
        for ferry in &chunk.ferries {
            if !self.seen_ferries.insert(ferry.id) {
                continue;
            }
            for piece in &ferry.pieces {
                self.found.ferries.push(FerryLine {
                    name: ferry.tags.get("name").cloned(),
                    points: piece.clone(),
                });
            }
        }
    }

    pub(crate) fn finish(mut self, requests: u32) -> RouteFeatures {
        self.found.requests = requests;
        self.found
    }
}

/// The analysis's view of a kept point (classified again: a cached entry written under
/// the same query version holds the same tags).
fn feature(point: &SlimPoint) -> Option<Feature> {
    let tag = |k: &str| point.tags.get(k).cloned();
    let kind = FeatureKind::classify(|k| point.tags.get(k).map(String::as_str))?;
    Some(Feature {
        name: tag("name"),
        opening_hours: tag("opening_hours"),
        seasonal: tag("seasonal"),
        usage: tag("usage"),
        website: tag("website")
            .or_else(|| tag("contact:website"))
            .and_then(|url| safe_website(&url)),
        wikidata: tag("wikidata"),
        ..Feature::new(kind, point.lat, point.lon)
    })
}

#[cfg(test)]
mod tests {
    use etappe_analysis::osm::FoodKind;

    use super::*;

    #[test]
    fn points_ways_and_ferries_are_told_apart() {
        let body = r#"{"version":0.6,"generator":"Overpass API","elements":[
            {"type":"node","id":1,"lat":47.0,"lon":8.0,"tags":{"shop":"bakery","name":"Beck\u0007er","opening_hours":"Mo-Sa 06:00-18:00"}},
            {"type":"way","id":2,"center":{"lat":47.1,"lon":8.1},"tags":{"highway":"track","ford":"yes"}},
            {"type":"node","id":3,"lat":47.0,"lon":8.0,"tags":{"amenity":"bench"}},
            {"type":"node","id":4,"lat":95.0,"lon":8.0,"tags":{"amenity":"drinking_water"}},
            {"type":"way","id":2,"bounds":{},"geometry":[{"lat":47.1,"lon":8.1},{"lat":47.11,"lon":8.1},null,{"lat":47.2,"lon":8.2},{"lat":47.21,"lon":8.2}],"tags":{"highway":"track","surface":"gravel","name":"x"}},
            {"type":"way","id":5,"geometry":[{"lat":47.3,"lon":8.3},{"lat":47.4,"lon":8.4}],"tags":{"route":"ferry","name":"Fähre"}},
            {"type":"way","id":6,"geometry":[{"lat":47.3,"lon":8.3},null],"tags":{"highway":"path"}}
        ]}"#;
        let chunk = parse_chunk(body).expect("parse");
        assert_eq!(
            chunk.points.len(),
            2,
            "bench and impossible position dropped"
        );
        assert_eq!(chunk.points[0].tags["name"], "Beck er");
        assert!(!chunk.points[0].tags.contains_key("highway"));
        assert_eq!(chunk.ways.len(), 1, "a way of one placed vertex is no way");
        assert_eq!(chunk.ways[0].pieces.len(), 2, "split at the null");
        assert!(!chunk.ways[0].tags.contains_key("name"));
        assert_eq!(chunk.ferries.len(), 1);

        let mut merged = Merged::default();
        merged.add(&chunk);
        merged.add(&chunk);
        let found = merged.finish(2);
        assert_eq!(found.requests, 2);
        assert_eq!(found.points.len(), 2, "the second copy is a duplicate");
        assert_eq!(found.points[0].kind, FeatureKind::Food(FoodKind::Bakery));
        assert_eq!(found.points[1].kind, FeatureKind::Ford);
        assert_eq!(found.ways.len(), 2);
        assert_eq!(found.ways[0].tags.surface.as_deref(), Some("gravel"));
        assert_eq!(found.ferries[0].name.as_deref(), Some("Fähre"));
    }

    #[test]
    fn runtime_errors_fail_and_other_remarks_do_not() {
        let failed = r#"{"elements":[],"remark":"runtime error: Query ran out of memory in \"query\" at line 1."}"#;
        let error = parse_chunk(failed).expect_err("remark");
        assert_eq!(error.upstream, Upstream::Overpass);
        assert!(error.retryable);
        let harmless = r#"{"elements":[],"remark":"runtime remark: Timeout is 25"}"#;
        assert_eq!(parse_chunk(harmless).expect("fine"), ChunkFound::default());
        let error = parse_chunk(r#"{"remark":"x"}"#).expect_err("no elements");
        assert!(error.failure.starts_with("unexpected response"), "{error}");
    }
}
