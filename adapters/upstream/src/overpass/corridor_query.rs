//! Overpass QL for the features along a route: the [`SearchPlan`]'s day lines cut into
//! chunks of at most [`MAX_CHUNK_KM`], one query per chunk with every point family, the road
//! ways and the ferry lines, plus a few batched queries for the searches around places.
//!
//! Chunks follow the route, not the days: a day boundary inside a chunk costs nothing, so a
//! 1,000 km route is about seven chunk queries whatever its day count. Place searches are
//! kept out of the chunks on purpose: their radii (5–15 km) are several times the line's,
//! each carries one narrow tag filter, and a change to one day's end then leaves every
//! chunk's cached answer valid. Coordinates are rounded to 5 decimals (~1 m) so the query
//! text, and with it the cache key, is stable under replanning noise.

use std::fmt::Write as _;

use etappe_analysis::osm::{PlaceClass, SearchPlan};
use sha2::{Digest, Sha256};

use crate::geo::{haversine_m, is_valid_position};

/// Overpass's own limit for one query; public instances kill longer ones.
const SERVER_TIMEOUT_S: u32 = 25;
/// A chunk's length, km: long enough that a 1,000 km route is a handful of requests,
/// short enough that a public instance answers a chunk inside [`SERVER_TIMEOUT_S`].
pub(crate) const MAX_CHUNK_KM: f64 = 150.0;
/// Vertices per chunk: each statement repeats the polyline, so this bounds the query's
/// size (~13 statements × 400 × 17 bytes ≈ 90 KB) on a winding route.
pub(crate) const MAX_CHUNK_VERTICES: usize = 400;
/// Longer segments are cut: Overpass reads a segment as a great circle, the plan as a
/// straight line in degrees, and over 5 km the two differ by under a metre.
const MAX_SEGMENT_KM: f64 = 5.0;
/// Two day lines farther apart than this are not joined: the straight gap between them
/// (a train transfer) is not part of the ride and must not be searched.
const MAX_JOIN_GAP_M: f64 = 1_000.0;
/// Place searches per batched query.
pub(crate) const MAX_PLACES_PER_QUERY: usize = 16;
/// No radius above this is sent: larger areas make public instances slow, and no rule
/// reads farther than 15 km.
pub(crate) const MAX_QUERY_RADIUS_M: f64 = 25_000.0;
/// Bumped when the query or the cached form changes, so old cache entries are not read.
const QUERY_VERSION: u32 = 1;

/// The point families along the line: `(key, value regex)` pairs whose union is exactly
/// what `FeatureKind::classify` keeps (it makes the final decision).
const LINE_POINT_FILTERS: &[&str] = &[
    r#"["amenity"~"^(drinking_water|water_point|restaurant|cafe|bar|pub|fast_food|marketplace|fuel|bicycle_repair_station|pharmacy|hospital|clinic)$"]"#,
    r#"["shop"~"^(supermarket|convenience|bakery|butcher|greengrocer|deli|general|pastry|farm|bicycle)$"]"#,
    r#"["tourism"~"^(museum|attraction|viewpoint|hotel|hostel|guest_house|chalet|camp_site|alpine_hut|wilderness_hut)$"]"#,
    r#"["historic"~"^(castle|monument|memorial|ruins|archaeological_site|church|cathedral|abbey|fort)$"]"#,
    r#"["railway"="station"]"#,
    r#"["man_made"="water_tap"]"#,
    r#"["amenity"="fountain"]["drinking_water"="yes"]"#,
    r#"["natural"="spring"]["drinking_water"="yes"]"#,
    r#"["ford"]["ford"!="no"]"#,
    r#"["amenity"="charging_station"]["bicycle"="yes"]"#,
    r#"["amenity"="charging_station"]["socket:bicycle"]["socket:bicycle"!="no"]"#,
];

/// One query to send, with the cache key of its answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CorridorQuery {
    /// "corridor part 3 of 7", for error messages and logs.
    pub(crate) label: String,
    pub(crate) ql: String,
    pub(crate) cache_key: String,
}

/// A plan radius that cannot be sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BadRadius {
    pub(crate) field: &'static str,
    pub(crate) value: f64,
}

impl std::fmt::Display for BadRadius {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} must be a number of metres above 0, got {}",
            self.field, self.value
        )
    }
}

/// Every query the plan needs: the chunk queries in route order, then the place batches.
pub(crate) fn plan_queries(plan: &SearchPlan) -> Result<Vec<CorridorQuery>, BadRadius> {
    let chunks = chunk_lines(&plan.lines);
    let mut bodies: Vec<String> = Vec::with_capacity(chunks.len() + 3);
    // The line radii matter only when there is a line (a trip of rest days has none).
    if !chunks.is_empty() {
        let line_r = radius("line_radius_m", plan.line_radius_m)?;
        let way_r = radius("way_radius_m", plan.way_radius_m)?;
        let ferry_r = radius("ferry_radius_m", plan.ferry_radius_m)?;
        bodies.extend(
            chunks
                .iter()
                .map(|chunk| chunk_query(chunk, line_r, way_r, ferry_r)),
        );
    }
    bodies.extend(place_batches(plan)?);
    let total = bodies.len();
    Ok(bodies
        .into_iter()
        .enumerate()
        .map(|(i, ql)| CorridorQuery {
            label: format!("corridor part {} of {total}", i + 1),
            cache_key: cache_key(&ql),
            ql,
        })
        .collect())
}

/// A radius in whole metres (rounded up, capped at [`MAX_QUERY_RADIUS_M`]).
fn radius(field: &'static str, value: f64) -> Result<u32, BadRadius> {
    if !value.is_finite() || value <= 0.0 {
        return Err(BadRadius { field, value });
    }
    // The cap keeps the value within u32; `as` cannot overflow here.
    Ok(value.min(MAX_QUERY_RADIUS_M).ceil() as u32)
}

/// Coordinates rounded to 5 decimals (~1 m); -0.0 becomes 0.0 so both spell the same.
fn rounded(coordinate: f64) -> f64 {
    (coordinate * 100_000.0).round() / 100_000.0 + 0.0
}

fn rounded_point((lat, lon): (f64, f64)) -> (f64, f64) {
    (rounded(lat), rounded(lon))
}

/// Cuts the day lines into polylines of at most [`MAX_CHUNK_KM`] and
/// [`MAX_CHUNK_VERTICES`], in route order. Consecutive days that meet are joined; a chunk
/// ends at a gap. Neighbouring chunks share their cut vertex, so no piece of the line is
/// left out. Invalid positions are dropped.
pub(crate) fn chunk_lines(lines: &[Vec<(f64, f64)>]) -> Vec<Vec<(f64, f64)>> {
    let mut chunks: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let mut current_km = 0.0;
    let close = |chunks: &mut Vec<Vec<(f64, f64)>>, current: &mut Vec<(f64, f64)>| {
        if !current.is_empty() {
            chunks.push(std::mem::take(current));
        }
    };
    for line in lines {
        let points: Vec<(f64, f64)> = line
            .iter()
            .copied()
            .filter(|&(lat, lon)| is_valid_position(lat, lon))
            .map(rounded_point)
            .collect();
        let Some(&first) = points.first() else {
            continue;
        };
        let joins = current
            .last()
            .is_some_and(|&last| distance_m(last, first) <= MAX_JOIN_GAP_M);
        if !joins {
            close(&mut chunks, &mut current);
            current_km = 0.0;
        }
        for p in points {
            let Some(&last) = current.last() else {
                current.push(p);
                continue;
            };
            if last == p {
                continue;
            }
            for q in densified(last, p) {
                let Some(&from) = current.last() else {
                    current.push(q);
                    continue;
                };
                let step_km = distance_m(from, q) / 1000.0;
                if current.len() >= 2
                    && (current_km + step_km > MAX_CHUNK_KM + 1e-9
                        || current.len() >= MAX_CHUNK_VERTICES)
                {
                    close(&mut chunks, &mut current);
                    current.push(from);
                    current_km = 0.0;
                }
                current.push(q);
                current_km += step_km;
            }
        }
    }
    close(&mut chunks, &mut current);
    chunks
}

/// The points after `from` up to and including `to`, so that no step is longer than
/// [`MAX_SEGMENT_KM`] (interpolated in degrees, as the plan's line is drawn).
fn densified(from: (f64, f64), to: (f64, f64)) -> Vec<(f64, f64)> {
    let km = distance_m(from, to) / 1000.0;
    // Across the antimeridian, interpolating degrees would circle the globe the long way;
    // the short segment is left to Overpass's own great circle.
    let pieces = if km.is_finite() && (to.1 - from.1).abs() <= 180.0 {
        (km / MAX_SEGMENT_KM).ceil().max(1.0) as usize
    } else {
        1
    };
    (1..=pieces)
        .map(|i| {
            if i == pieces {
                return to;
            }
            let t = i as f64 / pieces as f64;
            rounded_point((from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t))
        })
        .collect()
}

fn distance_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    haversine_m(a.0, a.1, b.0, b.1)
}

/// `lat,lon,lat,lon,…` with 5 decimals.
fn polyline(points: &[(f64, f64)]) -> String {
    let mut out = String::with_capacity(points.len() * 18);
    for (i, &point) in points.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let (lat, lon) = rounded_point(point);
        let _ = write!(out, "{lat:.5},{lon:.5}");
    }
    out
}

/// One chunk's query: the point families as centres with tags, then the road ways and the
/// ferry lines with their whole geometry. No count cap: a cap truncates silently, and a
/// truncated answer reads as "no water here".
pub(crate) fn chunk_query(points: &[(f64, f64)], line_r: u32, way_r: u32, ferry_r: u32) -> String {
    let poly = polyline(points);
    let mut ql = format!("[out:json][timeout:{SERVER_TIMEOUT_S}];(");
    for filter in LINE_POINT_FILTERS {
        let _ = write!(ql, "nwr{filter}(around:{line_r},{poly});");
    }
    let _ = write!(
        ql,
        "\
         );out center tags;\
         (way[\"highway\"](around:{way_r},{poly});\
         way[\"route\"=\"ferry\"](around:{ferry_r},{poly}););\
         out tags geom;"
    );
    ql
}

/// The tag filter a place class searches with.
fn place_filter(class: PlaceClass) -> &'static str {
    match class {
        PlaceClass::Health => r#"["amenity"~"^(pharmacy|hospital|clinic)$"]"#,
        PlaceClass::RailwayStation => r#"["railway"="station"]"#,
        PlaceClass::Accommodation => {
            r#"["tourism"~"^(hotel|hostel|guest_house|chalet|camp_site|alpine_hut|wilderness_hut)$"]"#
        }
    }
}

/// The place searches grouped by class, duplicates (the end of one day is the start of the
/// next) removed, [`MAX_PLACES_PER_QUERY`] to a query.
fn place_batches(plan: &SearchPlan) -> Result<Vec<String>, BadRadius> {
    let mut out = Vec::new();
    for class in [
        PlaceClass::Health,
        PlaceClass::RailwayStation,
        PlaceClass::Accommodation,
    ] {
        let mut statements: Vec<String> = Vec::new();
        for place in plan.places.iter().filter(|p| p.class == class) {
            if !is_valid_position(place.at.0, place.at.1) {
                continue;
            }
            let r = radius("places[].radius_m", place.radius_m)?;
            let (lat, lon) = rounded_point(place.at);
            let statement = format!("nwr{}(around:{r},{lat:.5},{lon:.5});", place_filter(class));
            if !statements.contains(&statement) {
                statements.push(statement);
            }
        }
        for batch in statements.chunks(MAX_PLACES_PER_QUERY) {
            out.push(format!(
                "[out:json][timeout:{SERVER_TIMEOUT_S}];({});out center tags;",
                batch.concat()
            ));
        }
    }
    Ok(out)
}

/// `overpass:corridor:v{QUERY_VERSION}:{sha256 of the query}`: the query text holds every
/// rounded coordinate, radius and filter, so equal keys mean equal questions.
fn cache_key(ql: &str) -> String {
    let digest = Sha256::digest(ql.as_bytes());
    let mut key = format!("overpass:corridor:v{QUERY_VERSION}:");
    for byte in digest.iter() {
        let _ = write!(key, "{byte:02x}");
    }
    key
}

#[cfg(test)]
mod tests {
    use etappe_analysis::osm::PlaceSearch;

    use super::*;

    /// A straight line due north from (45, 7), `km` long, as its two ends.
    fn north(km: f64) -> Vec<(f64, f64)> {
        vec![(45.0, 7.0), (45.0 + km / 111.195, 7.0)]
    }

    fn length_km(chunk: &[(f64, f64)]) -> f64 {
        chunk
            .windows(2)
            .map(|w| distance_m(w[0], w[1]))
            .sum::<f64>()
            / 1000.0
    }

    #[test]
    fn a_chunk_holds_up_to_150_km_and_no_more() {
        assert_eq!(chunk_lines(&[north(149.0)]).len(), 1);
        assert_eq!(chunk_lines(&[north(152.0)]).len(), 2);
        let chunks = chunk_lines(&[north(1000.0)]);
        assert_eq!(chunks.len(), 7);
        for chunk in &chunks {
            assert!(
                length_km(chunk) <= MAX_CHUNK_KM + 0.01,
                "{}",
                length_km(chunk)
            );
        }
        // Neighbours share the cut vertex: the whole line is covered.
        for pair in chunks.windows(2) {
            assert_eq!(pair[0].last(), pair[1].first());
        }
        let total: f64 = chunks.iter().map(|c| length_km(c)).sum();
        assert!((total - 1000.0).abs() < 0.5, "{total}");
    }

    #[test]
    fn day_boundaries_do_not_cut_chunks_but_gaps_do() {
        // Ten 100 km days end to end: seven chunks, as for one 1,000 km line.
        let mut days = Vec::new();
        for day in 0..10 {
            let start = 45.0 + f64::from(day) * 100.0 / 111.195;
            days.push(vec![(start, 7.0), (start + 100.0 / 111.195, 7.0)]);
        }
        assert_eq!(chunk_lines(&days).len(), 7);
        // Two 50 km days 20 km apart are two chunks; 900 m apart, one.
        let gap = |km: f64| {
            let second = 45.0 + (50.0 + km) / 111.195;
            vec![north(50.0), vec![(second, 7.0), (second + 0.45, 7.0)]]
        };
        assert_eq!(chunk_lines(&gap(20.0)).len(), 2);
        assert_eq!(chunk_lines(&gap(0.9)).len(), 1);
    }

    #[test]
    fn a_winding_line_is_cut_by_vertex_count() {
        // 1,000 vertices 50 m apart: 50 km, but more vertices than a chunk holds.
        let line: Vec<(f64, f64)> = (0..1000)
            .map(|i| {
                (
                    45.0 + f64::from(i) * 0.000_45,
                    7.0 + f64::from(i % 2) * 0.000_1,
                )
            })
            .collect();
        let chunks = chunk_lines(&[line]);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.len() <= MAX_CHUNK_VERTICES));
    }

    #[test]
    fn invalid_positions_and_rest_days_are_skipped() {
        let chunks = chunk_lines(&[
            vec![],
            vec![(f64::NAN, 7.0), (45.0, 7.0), (95.0, 7.0), (45.01, 7.0)],
        ]);
        assert_eq!(chunks, [vec![(45.0, 7.0), (45.01, 7.0)]]);
        assert!(chunk_lines(&[vec![], vec![(f64::NAN, 1.0)]]).is_empty());
    }

    #[test]
    fn long_segments_are_densified_but_not_across_the_antimeridian() {
        let chunk = &chunk_lines(&[north(12.0)])[0];
        assert_eq!(chunk.len(), 4, "12 km in steps of at most 5 km");
        let fiji = chunk_lines(&[vec![(-17.0, 179.95), (-17.0, -179.95)]]);
        assert_eq!(fiji, [vec![(-17.0, 179.95), (-17.0, -179.95)]]);
    }

    #[test]
    fn a_chunk_query_is_real_overpass_ql() {
        let ql = chunk_query(&[(47.123_456, 7.0), (-0.000_001, 7.5)], 2025, 45, 125);
        assert!(ql.starts_with("[out:json][timeout:25];("), "{ql}");
        assert!(
            ql.contains(
                r#"nwr["railway"="station"](around:2025,47.12346,7.00000,0.00000,7.50000);"#
            ),
            "{ql}"
        );
        assert!(
            ql.contains(r#");out center tags;(way["highway"](around:45,47.12346"#),
            "{ql}"
        );
        assert!(ql.contains(r#"way["route"="ferry"](around:125,"#), "{ql}");
        assert!(ql.ends_with(");out tags geom;"), "{ql}");
        assert_eq!(
            ql.matches("(around:2025,").count(),
            LINE_POINT_FILTERS.len()
        );
    }

    #[test]
    fn place_searches_are_batched_by_class_without_duplicates() {
        let mut plan = SearchPlan {
            line_radius_m: 2025.0,
            way_radius_m: 45.0,
            ferry_radius_m: 125.0,
            ..SearchPlan::default()
        };
        for i in 0..20 {
            let at = (45.0 + f64::from(i) * 0.1, 7.0);
            plan.places.push(PlaceSearch {
                class: PlaceClass::RailwayStation,
                at,
                radius_m: 10_000.0,
            });
            // The same station search again, as the next day's start.
            plan.places.push(PlaceSearch {
                class: PlaceClass::RailwayStation,
                at,
                radius_m: 10_000.0,
            });
        }
        plan.places.push(PlaceSearch {
            class: PlaceClass::Health,
            at: (45.0, 7.0),
            radius_m: 15_000.0,
        });
        let queries = plan_queries(&plan).expect("valid plan");
        // 1 health batch, 20 distinct stations in 2 batches of at most 16.
        assert_eq!(queries.len(), 3);
        assert!(queries[0].ql.contains("(around:15000,45.00000,7.00000)"));
        assert_eq!(queries[1].ql.matches("around:10000").count(), 16);
        assert_eq!(queries[2].ql.matches("around:10000").count(), 4);
        assert_eq!(queries[2].label, "corridor part 3 of 3");
    }

    #[test]
    fn bad_radii_are_refused_with_the_field_name() {
        let plan = SearchPlan {
            lines: vec![north(10.0)],
            line_radius_m: f64::NAN,
            way_radius_m: 45.0,
            ferry_radius_m: 125.0,
            ..SearchPlan::default()
        };
        let error = plan_queries(&plan).expect_err("NaN radius");
        assert_eq!(error.field, "line_radius_m");
        assert!(error.to_string().contains("above 0"), "{error}");
        let zero = SearchPlan {
            way_radius_m: 0.0,
            line_radius_m: 1.0,
            ..plan
        };
        assert_eq!(plan_queries(&zero).expect_err("zero").field, "way_radius_m");
        assert_eq!(radius("r", 0.2), Ok(1));
        assert_eq!(radius("r", 99_999.0), Ok(25_000));
    }

    #[test]
    fn cache_keys_follow_the_rounded_query() {
        let a = chunk_query(&[(45.000_001, 7.0), (45.1, 7.0)], 2025, 45, 125);
        let b = chunk_query(&[(45.000_004, 7.0), (45.1, 7.0)], 2025, 45, 125);
        let c = chunk_query(&[(45.000_1, 7.0), (45.1, 7.0)], 2025, 45, 125);
        assert_eq!(cache_key(&a), cache_key(&b));
        assert_ne!(cache_key(&a), cache_key(&c));
        assert!(cache_key(&a).starts_with("overpass:corridor:v1:"));
        assert_eq!(cache_key(&a).len(), "overpass:corridor:v1:".len() + 64);
    }
}
