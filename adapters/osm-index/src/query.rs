//! The port answered from the index: [`LocalIndex`] implements [`OsmFeatures`].
//!
//! A [`SearchPlan`] becomes sets of grid cells (the cells each thinned line segment crosses,
//! grown by the search radius; the cells around each place), the cells become `IN (…)`
//! queries, and what comes back is filtered exactly here: a point is kept within the line
//! radius of a segment registered for its cell, or within a place's radius when the place's
//! class holds its kind; a way when one of its segments comes within the radius of a line
//! segment. Clipping ways to the day's buffer is left to [`etappe_analysis::osm::corridors`],
//! as for Overpass. Two datasets may overlap at a border: objects are deduplicated by id.

use std::collections::{BTreeSet, HashMap, HashSet};

use async_trait::async_trait;
use etappe_analysis::geo::haversine_m;
use etappe_analysis::osm::{
    Feature, FeatureKind, FerryLine, PlaceClass, RawWay, RouteFeatures, SearchPlan, WaySection,
};
use etappe_upstream::overpass::{MAX_RADIUS_M, accommodation_from_tags, rank_accommodations};
use etappe_upstream::{Accommodation, BedSearch, NamedPlace, OsmFeatures, OsmType, UpstreamError};

use crate::db::{BATCH, Bbox, DatasetInfo, IndexDb, StoredPoint};
use crate::error::IndexError;
use crate::grid;
use crate::import::decode_geometry;

/// The families a search around a place may need, for cells no line search covers.
const PLACE_FAMILIES: &[&str] = &["health", "railway_station", "accommodation"];

/// The local OpenStreetMap index, read through the [`OsmFeatures`] port.
#[derive(Debug, Clone)]
pub struct LocalIndex {
    db: IndexDb,
}

impl LocalIndex {
    pub fn new(db: IndexDb) -> Self {
        Self { db }
    }

    /// The database it reads (and `import` writes).
    pub fn db(&self) -> &IndexDb {
        &self.db
    }

    /// The loaded datasets, oldest first.
    pub async fn status(&self) -> Result<Vec<DatasetInfo>, IndexError> {
        self.db.active_datasets().await
    }

    /// Whether any dataset is loaded.
    pub async fn is_loaded(&self) -> Result<bool, IndexError> {
        Ok(!self.db.active_datasets().await?.is_empty())
    }

    async fn loaded(&self) -> Result<Vec<DatasetInfo>, IndexError> {
        let datasets = self.db.active_datasets().await?;
        if datasets.is_empty() {
            return Err(IndexError::NotLoaded);
        }
        Ok(datasets)
    }

    /// [`OsmFeatures::along`] with the index's own error.
    pub async fn find_along(&self, plan: &SearchPlan) -> Result<RouteFeatures, IndexError> {
        let datasets = self.loaded().await?;
        let uncovered_days = uncovered_days(plan, &datasets);

        let lines = Segments::new(&plan.lines, plan.line_radius_m);
        let mut place_cells: HashMap<i64, Vec<usize>> = HashMap::new();
        for (i, place) in plan.places.iter().enumerate() {
            if !(place.at.0.is_finite() && place.at.1.is_finite()) {
                continue;
            }
            let reach = grid::reach(place.radius_m, place.at.0);
            grid::around(grid::cell(place.at.0, place.at.1), reach, |c| {
                place_cells.entry(c).or_default().push(i);
            });
        }
        let line_cells: BTreeSet<i64> = lines.by_cell.keys().copied().collect();
        let place_only: BTreeSet<i64> = place_cells
            .keys()
            .filter(|c| !line_cells.contains(c))
            .copied()
            .collect();

        let mut seen = HashSet::new();
        let mut points = Vec::new();
        for dataset in &datasets {
            for (cells, families) in [(&line_cells, &[][..]), (&place_only, PLACE_FAMILIES)] {
                let cells: Vec<i64> = cells.iter().copied().collect();
                for chunk in cells.chunks(BATCH) {
                    for row in self.db.points_in(dataset.id, chunk, families).await? {
                        if !seen.insert((row.osm_type.clone(), row.osm_id)) {
                            continue;
                        }
                        let Some(feature) = feature_of(&row) else {
                            continue;
                        };
                        let at = (feature.lat, feature.lon);
                        let near_line = lines.near_point(at, plan.line_radius_m);
                        let near_place = || {
                            place_cells
                                .get(&grid::cell(at.0, at.1))
                                .into_iter()
                                .flatten()
                                .filter_map(|i| plan.places.get(*i))
                                .any(|p| {
                                    p.class.contains(feature.kind)
                                        && haversine_m(p.at, at) <= p.radius_m
                                })
                        };
                        if near_line || near_place() {
                            points.push(feature);
                        } else {
                            // Kept for a later dataset's duplicate: it was judged already.
                        }
                    }
                }
            }
        }

        let mut ways = Vec::new();
        for (way_id, tags, points) in self
            .ways_near(&datasets, plan, plan.way_radius_m, "road")
            .await?
        {
            let tag = |k: &str| tags.get(k).map(String::as_str);
            if let Some(section) = WaySection::from_tags(0.0, (0.0, 0.0), tag) {
                ways.push(RawWay {
                    tags: WaySection {
                        way_id: Some(way_id),
                        ..section
                    },
                    points,
                });
            }
        }
        let ferries = self
            .ways_near(&datasets, plan, plan.ferry_radius_m, "ferry")
            .await?
            .into_iter()
            .map(|(_, tags, points)| FerryLine {
                name: tags.get("name").cloned(),
                points,
            })
            .collect();

        Ok(RouteFeatures {
            points,
            ways,
            ferries,
            uncovered_days,
            requests: 0,
        })
    }

    /// Ways of `class` with a segment within `radius_m` of a plan line: id, tags and geometry.
    async fn ways_near(
        &self,
        datasets: &[DatasetInfo],
        plan: &SearchPlan,
        radius_m: f64,
        class: &str,
    ) -> Result<Vec<(i64, HashMap<String, String>, Vec<(f64, f64)>)>, IndexError> {
        let lines = Segments::new(&plan.lines, radius_m);
        let cells: Vec<i64> = lines
            .by_cell
            .keys()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for dataset in datasets {
            let mut candidates = Vec::new();
            for chunk in cells.chunks(BATCH) {
                for (way, bbox) in self.db.way_boxes_in(dataset.id, chunk, class).await? {
                    if seen.insert(way) && lines.near_box(bbox, radius_m) {
                        candidates.push(way);
                    }
                }
            }
            for chunk in candidates.chunks(BATCH) {
                for row in self.db.ways_by_id(dataset.id, chunk).await? {
                    let points = decode_geometry(&row.geom);
                    if !lines.near_polyline(&points, radius_m) {
                        continue;
                    }
                    match serde_json::from_str::<HashMap<String, String>>(&row.tags) {
                        Ok(tags) => out.push((row.way_id, tags, points)),
                        Err(error) => {
                            tracing::warn!(way = row.way_id, %error, "skipping a way with unreadable tags");
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// [`OsmFeatures::accommodations_near`] with the index's own error.
    pub async fn find_accommodations(
        &self,
        search: BedSearch<'_>,
    ) -> Result<Vec<Accommodation>, IndexError> {
        if !search.at_valid_position() {
            return Err(IndexError::InvalidRequest(format!(
                "position ({}, {}) is not a latitude in [-90, 90] and a longitude in [-180, 180]",
                search.lat, search.lon
            )));
        }
        let (lat, lon) = (search.lat, search.lon);
        let (radius_m, types) = (search.radius_m, search.types);
        if radius_m == 0 || radius_m > MAX_RADIUS_M {
            return Err(IndexError::InvalidRequest(format!(
                "radius {radius_m} m is outside 1..={MAX_RADIUS_M} m"
            )));
        }
        let datasets = self.loaded().await?;
        if !datasets.iter().any(|d| d.bbox.contains(lat, lon)) {
            let names: Vec<&str> = datasets.iter().map(|d| d.name.as_str()).collect();
            return Err(IndexError::InvalidRequest(format!(
                "({lat:.5}, {lon:.5}) is outside the loaded OpenStreetMap index ({}); import an extract that covers it",
                names.join(", ")
            )));
        }
        if types.is_empty() {
            return Ok(Vec::new());
        }
        let radius = f64::from(radius_m);
        let mut cells = Vec::new();
        grid::around(grid::cell(lat, lon), grid::reach(radius, lat), |c| {
            cells.push(c);
        });
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        for dataset in &datasets {
            for chunk in cells.chunks(BATCH) {
                for row in self
                    .db
                    .points_in(dataset.id, chunk, &["accommodation"])
                    .await?
                {
                    if !seen.insert((row.osm_type.clone(), row.osm_id))
                        || haversine_m((lat, lon), (row.lat, row.lon)) > radius
                    {
                        continue;
                    }
                    let Ok(tags) = serde_json::from_str::<HashMap<String, String>>(&row.tags)
                    else {
                        continue;
                    };
                    let osm_type = match row.osm_type.as_str() {
                        "node" => OsmType::Node,
                        "way" => OsmType::Way,
                        _ => OsmType::Relation,
                    };
                    let Ok(osm_id) = u64::try_from(row.osm_id) else {
                        continue;
                    };
                    if let Some(place) =
                        accommodation_from_tags(osm_type, osm_id, row.lat, row.lon, &tags, types)
                    {
                        found.push(place);
                    }
                }
            }
        }
        rank_accommodations(&mut found, lat, lon);
        Ok(found)
    }
}

impl LocalIndex {
    /// The extract's places named `query` (folded as the gazetteer folds), exact ones first,
    /// then those a name of which begins with it; each place once, at most `limit`.
    pub async fn find_places(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<NamedPlace>, IndexError> {
        let key = etappe_gazetteer::fold(query);
        if key.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let cap = u32::try_from(limit.saturating_mul(4)).unwrap_or(u32::MAX);
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        for prefix in [false, true] {
            for row in self.db.places_by_key(&key, prefix, cap).await? {
                if found.len() == limit {
                    return Ok(found);
                }
                if seen.insert((row.osm_type.clone(), row.osm_id)) {
                    found.push(NamedPlace {
                        exact: row.key == key,
                        name: row.name,
                        kind: row.kind,
                        lat: row.lat,
                        lon: row.lon,
                        weight: f64::from(row.weight),
                    });
                }
            }
        }
        Ok(found)
    }
}

#[async_trait]
impl OsmFeatures for LocalIndex {
    fn source(&self) -> &'static str {
        "local index"
    }

    /// Loaded when an extract is active; a database error reads as not loaded (logged),
    /// so the analysis falls back to Overpass or says no source is there.
    async fn is_loaded(&self) -> bool {
        match LocalIndex::is_loaded(self).await {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::warn!(%error, "could not read the local OpenStreetMap index");
                false
            }
        }
    }

    async fn along(&self, plan: &SearchPlan) -> Result<RouteFeatures, UpstreamError> {
        Ok(self.find_along(plan).await?)
    }

    async fn places_named(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<NamedPlace>, UpstreamError> {
        Ok(self.find_places(query, limit).await?)
    }

    async fn coverage(&self) -> Vec<[f64; 4]> {
        match self.db.active_datasets().await {
            Ok(datasets) => datasets
                .iter()
                .map(|d| [d.bbox.south, d.bbox.west, d.bbox.north, d.bbox.east])
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "could not read the local OpenStreetMap index");
                Vec::new()
            }
        }
    }

    async fn accommodations_near(
        &self,
        search: BedSearch<'_>,
    ) -> Result<Vec<Accommodation>, UpstreamError> {
        Ok(self.find_accommodations(search).await?)
    }
}

/// A stored point as the analysis sees it; `None` when its tags no longer classify.
fn feature_of(row: &StoredPoint) -> Option<Feature> {
    let tags: HashMap<String, String> = match serde_json::from_str(&row.tags) {
        Ok(tags) => tags,
        Err(error) => {
            tracing::warn!(osm_id = row.osm_id, %error, "skipping a point with unreadable tags");
            return None;
        }
    };
    let tag = |k: &str| tags.get(k).map(String::as_str);
    let kind = FeatureKind::classify(tag)?;
    let own = |k: &str| tags.get(k).cloned();
    Some(Feature {
        kind,
        lat: row.lat,
        lon: row.lon,
        name: own("name"),
        opening_hours: own("opening_hours"),
        seasonal: own("seasonal"),
        usage: own("usage"),
        website: own("website"),
        wikidata: own("wikidata"),
    })
}

/// Days (0-based) with a line point outside every dataset's box; a rest day (no line) is
/// judged by its places, which [`SearchPlan::for_stages`] lists day by day, each day's
/// starting with its health search.
fn uncovered_days(plan: &SearchPlan, datasets: &[DatasetInfo]) -> Vec<usize> {
    let covered = |(lat, lon): (f64, f64)| datasets.iter().any(|d| d.bbox.contains(lat, lon));
    let mut groups: Vec<Vec<(f64, f64)>> = Vec::new();
    for place in &plan.places {
        if place.class == PlaceClass::Health || groups.is_empty() {
            groups.push(Vec::new());
        }
        if let Some(group) = groups.last_mut() {
            group.push(place.at);
        }
    }
    let places_by_day = (groups.len() == plan.lines.len()).then_some(groups);
    plan.lines
        .iter()
        .enumerate()
        .filter(|(day, line)| {
            if line.is_empty() {
                places_by_day
                    .as_ref()
                    .and_then(|g| g.get(*day))
                    .is_some_and(|places| !places.iter().all(|p| covered(*p)))
            } else {
                !line.iter().all(|p| covered(*p))
            }
        })
        .map(|(day, _)| day)
        .collect()
}

/// The segments of the plan's lines, each registered in every cell within a radius of it.
#[derive(Debug)]
struct Segments {
    segments: Vec<((f64, f64), (f64, f64))>,
    by_cell: HashMap<i64, Vec<u32>>,
}

impl Segments {
    fn new(lines: &[Vec<(f64, f64)>], radius_m: f64) -> Self {
        let mut segments = Vec::new();
        for line in lines {
            let line: Vec<(f64, f64)> = line
                .iter()
                .copied()
                .filter(|(lat, lon)| lat.is_finite() && lon.is_finite())
                .collect();
            match line.as_slice() {
                [] => {}
                [only] => segments.push((*only, *only)),
                _ => segments.extend(line.windows(2).map(|w| (w[0], w[1]))),
            }
        }
        let mut by_cell: HashMap<i64, Vec<u32>> = HashMap::new();
        let mut crossed = Vec::new();
        let mut grown = HashSet::new();
        for (i, (a, b)) in segments.iter().enumerate() {
            let Ok(i) = u32::try_from(i) else { break };
            crossed.clear();
            grown.clear();
            grid::segment_cells(*a, *b, |c| crossed.push(c));
            grown.extend(crossed.iter().copied());
            let reach = grid::reach(radius_m, a.0.abs().max(b.0.abs()));
            for c in &crossed {
                // Only the neighbours the radius really reaches: for a 45 m way search
                // that is a few cells where the line runs near a cell edge, not all eight.
                grid::around(*c, reach, |g| {
                    if !grown.contains(&g) && grid::segment_cell_m(*a, *b, g) <= radius_m {
                        grown.insert(g);
                    }
                });
            }
            for g in &grown {
                by_cell.entry(*g).or_default().push(i);
            }
        }
        Self { segments, by_cell }
    }

    fn near_point(&self, p: (f64, f64), radius_m: f64) -> bool {
        self.by_cell
            .get(&grid::cell(p.0, p.1))
            .into_iter()
            .flatten()
            .filter_map(|i| self.segments.get(*i as usize))
            .any(|(a, b)| grid::point_segment_m(p, *a, *b) <= radius_m)
    }

    /// Whether a segment registered in a cell the box touches comes within `radius_m` of it.
    fn near_box(&self, bbox: Bbox, radius_m: f64) -> bool {
        let (r0, r1) = (grid::row(bbox.south), grid::row(bbox.north));
        let (c0, c1) = (grid::col(bbox.west), grid::col(bbox.east));
        if (r1 - r0 + 1) * (c1 - c0 + 1) > 10_000 {
            // A very long way (a ferry across a sea): let its geometry decide.
            return true;
        }
        let corners = (bbox.south, bbox.west, bbox.north, bbox.east);
        (r0..=r1).any(|r| {
            (c0..=c1).any(|c| {
                self.by_cell
                    .get(&(r * grid::COLUMNS + c))
                    .into_iter()
                    .flatten()
                    .filter_map(|i| self.segments.get(*i as usize))
                    .any(|(a, b)| grid::segment_box_m(*a, *b, corners) <= radius_m)
            })
        })
    }

    fn near_polyline(&self, points: &[(f64, f64)], radius_m: f64) -> bool {
        let mut cells = Vec::new();
        for pair in points.windows(2) {
            cells.clear();
            grid::segment_cells(pair[0], pair[1], |c| cells.push(c));
            for c in &cells {
                let hit = self
                    .by_cell
                    .get(c)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| self.segments.get(*i as usize))
                    .any(|(a, b)| grid::segment_segment_m(pair[0], pair[1], *a, *b) <= radius_m);
                if hit {
                    return true;
                }
            }
        }
        false
    }
}
