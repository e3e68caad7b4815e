//! `etappe osm import`: an extract streamed into a new dataset in three passes, with memory
//! bounded by what is kept rather than by the file.
//!
//! 1. Nodes the analysis reads become point rows at once (written in batches); the ids of
//!    the nodes of kept ways (roads, ferries, points drawn as areas) are collected, then
//!    sorted and deduplicated.
//! 2. The coordinates of exactly those nodes are looked up: 16 bytes per needed node (id
//!    plus two 32-bit coordinates), however many nodes the file has.
//! 3. Kept ways get their geometry and are written with the grid cells they cross; areas
//!    become points at their centroid.
//!
//! The rows go to a dataset in state `loading`; only at the end does one transaction drop
//! the older dataset of the same name and make this one `active`. So a crash, a corrupt
//! file or a cut download leaves the previous index answering, and re-running an import
//! gives the same index (the leftovers of a failed run are purged first). The file's
//! framing and each block's declared sizes are checked before any row is written, and
//! every pass reads the blocks through [`crate::framing::BlockReader`], which refuses one
//! that inflates past (or short of) its declared size or over the format's limits.
//!
//! A file with nothing the analysis reads is not activated unless asked for
//! ([`ImportOptions::allow_empty`]): an empty region answers "covered, nothing found"
//! along every route inside it, and that is what a broken file used to import as.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::Utc;
use osmpbf::{BlobDecode, Element, PrimitiveBlock};
use serde::Serialize;

use crate::db::{Bbox, IndexDb, PointRow, WayRow};
use crate::error::IndexError;
use crate::framing;
use crate::grid;
use crate::places::{self, PlaceRow, place_rows};
use crate::tags::{Tags, family};

/// Point rows buffered before a write.
const POINT_BATCH: usize = 2_000;
/// Ways buffered before a write.
const WAY_BATCH: usize = 1_000;
/// A needed node not (yet) found in the file.
const MISSING: (i32, i32) = (i32::MIN, i32::MIN);
/// Degrees per unit of the stored 32-bit coordinates.
const COORD_SCALE: f64 = 1e-7;
const PASSES: u8 = 3;

/// Where an import is, for a progress display.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// 1-based.
    pub pass: u8,
    pub passes: u8,
    /// Bytes of the file read in this pass.
    pub bytes_read: u64,
    pub total_bytes: u64,
    /// Points and ways kept so far.
    pub kept: u64,
    pub elapsed: Duration,
}

impl Progress {
    /// Of the whole import, 0–100 (each pass reads the file once).
    pub fn percent(&self) -> f64 {
        let within = if self.total_bytes == 0 {
            1.0
        } else {
            self.bytes_read as f64 / self.total_bytes as f64
        };
        (f64::from(self.pass.saturating_sub(1)) + within.min(1.0)) / f64::from(self.passes) * 100.0
    }
}

/// What an import loaded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub dataset_id: i64,
    pub name: String,
    pub input_bytes: u64,
    /// Point features kept (nodes, and areas at their centroid).
    pub points: u64,
    /// Road ways kept.
    pub ways: u64,
    /// Ferry lines kept.
    pub ferries: u64,
    /// Nodes and ways read in the file.
    pub nodes_read: u64,
    pub ways_read: u64,
    pub bbox: Bbox,
    pub elapsed: Duration,
}

/// The dataset name of an extract: its file name without `.osm.pbf` (or `.pbf`).
pub fn dataset_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file
        .strip_suffix(".osm.pbf")
        .or_else(|| file.strip_suffix(".pbf"))
        .unwrap_or(&file);
    if stem.is_empty() {
        "extract".to_owned()
    } else {
        stem.to_owned()
    }
}

/// How an import treats what it finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Activate the dataset even if it holds no point, road or ferry (`--allow-empty`);
    /// otherwise such an import fails with [`IndexError::Empty`] and changes nothing.
    pub allow_empty: bool,
}

/// Imports the extract at `path` into `db`, replacing the dataset of the same name once it
/// is complete. `progress` is called every ~2 s or 5 %, and at the end of each pass.
/// With the default options: an empty region is refused.
pub async fn import(
    db: &IndexDb,
    path: &Path,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<ImportReport, IndexError> {
    import_with(db, path, &ImportOptions::default(), progress).await
}

/// [`import()`] with `options`.
pub async fn import_with(
    db: &IndexDb,
    path: &Path,
    options: &ImportOptions,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<ImportReport, IndexError> {
    let started = Instant::now();
    let size = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta.len(),
        Ok(_) => {
            return Err(IndexError::Unreadable {
                path: path.to_owned(),
                detail: "it is a directory, not a file".to_owned(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(IndexError::NoSuchFile {
                path: path.to_owned(),
            });
        }
        Err(e) => {
            return Err(IndexError::Unreadable {
                path: path.to_owned(),
                detail: e.to_string(),
            });
        }
    };
    framing::check(path, size)?;
    let name = dataset_name(path);
    db.purge_loading(&name).await?;
    let id = db
        .create_loading(&name, &path.display().to_string(), size, Utc::now())
        .await?;
    let mut run = Run {
        db,
        id,
        path: path.to_owned(),
        size,
        started,
        progress,
        ticker: Ticker::new(),
        kept: 0,
    };
    let outcome = match run.passes().await {
        Ok(report) if report.points + report.ways + report.ferries == 0 && !options.allow_empty => {
            Err(IndexError::Empty {
                path: path.to_owned(),
            })
        }
        other => other,
    };
    match outcome {
        Ok(mut report) => {
            db.activate(
                id,
                &name,
                report.bbox,
                (
                    to_i64(report.points),
                    to_i64(report.ways),
                    to_i64(report.ferries),
                ),
            )
            .await?;
            if let Err(error) = db.analyze().await {
                // The index works without fresh statistics, only slower.
                tracing::warn!(%error, "could not refresh the statistics of the OSM index");
            }
            report.name = name;
            report.dataset_id = id;
            report.elapsed = started.elapsed();
            Ok(report)
        }
        Err(error) => {
            // Best effort: a leftover `loading` dataset is purged by the next run anyway.
            if let Err(cleanup) = db.discard(id).await {
                tracing::warn!(%cleanup, "could not remove the unfinished OSM dataset");
            }
            Err(error)
        }
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// One import in progress.
struct Run<'a> {
    db: &'a IndexDb,
    id: i64,
    path: PathBuf,
    size: u64,
    started: Instant,
    progress: &'a mut (dyn FnMut(&Progress) + Send),
    ticker: Ticker,
    kept: u64,
}

/// Running min/max of positions.
#[derive(Debug, Clone, Copy)]
struct Extent(Bbox);

impl Extent {
    fn new() -> Self {
        Self(Bbox {
            south: f64::INFINITY,
            west: f64::INFINITY,
            north: f64::NEG_INFINITY,
            east: f64::NEG_INFINITY,
        })
    }

    fn add(&mut self, lat: f64, lon: f64) {
        self.0.south = self.0.south.min(lat);
        self.0.north = self.0.north.max(lat);
        self.0.west = self.0.west.min(lon);
        self.0.east = self.0.east.max(lon);
    }

    fn get(self) -> Option<Bbox> {
        (self.0.south <= self.0.north && self.0.west <= self.0.east).then_some(self.0)
    }
}

impl Run<'_> {
    async fn passes(&mut self) -> Result<ImportReport, IndexError> {
        // Pass 1: point nodes, and the node ids kept ways need.
        let mut blocks = Blocks::open(&self.path)?;
        let mut header_bbox = None;
        let mut extent = Extent::new();
        let mut needed: Vec<i64> = Vec::new();
        let mut points: Vec<PointRow> = Vec::new();
        let mut places: Vec<PlaceRow> = Vec::new();
        let (mut nodes_read, mut ways_read, mut point_count) = (0_u64, 0_u64, 0_u64);
        while let Some(block) = blocks.next()? {
            match block {
                Decoded::Header(bbox) => header_bbox = bbox,
                Decoded::Data(block) => block.for_each_element(|element| match element {
                    Element::Node(n) => {
                        nodes_read += 1;
                        extent.add(n.lat(), n.lon());
                        let tags = Tags::collect(n.tags());
                        point_node(n.id(), n.lat(), n.lon(), &tags, &mut points);
                        place_rows("node", n.id(), (n.lat(), n.lon()), &tags, &mut places);
                    }
                    Element::DenseNode(n) => {
                        nodes_read += 1;
                        extent.add(n.lat(), n.lon());
                        let tags = Tags::collect(n.tags());
                        point_node(n.id(), n.lat(), n.lon(), &tags, &mut points);
                        place_rows("node", n.id(), (n.lat(), n.lon()), &tags, &mut places);
                    }
                    Element::Way(w) => {
                        ways_read += 1;
                        let tags = Tags::collect(w.tags());
                        if tags.is_road()
                            || tags.is_ferry()
                            || tags.point_kind().is_some()
                            || places::kind_of(&tags).is_some()
                        {
                            needed.extend(w.refs());
                        }
                    }
                    Element::Relation(_) => {}
                }),
            }
            if points.len() >= POINT_BATCH {
                point_count += self.flush_points(&mut points).await?;
            }
            if places.len() >= POINT_BATCH {
                self.flush_places(&mut places).await?;
            }
            self.tick(1, blocks.read(), false);
            tokio::task::yield_now().await;
        }
        point_count += self.flush_points(&mut points).await?;
        self.tick(1, blocks.read(), true);
        needed.sort_unstable();
        needed.dedup();
        needed.shrink_to_fit();

        // Pass 2: the coordinates of the needed nodes.
        let mut coords = vec![MISSING; needed.len()];
        let mut found = 0_usize;
        let mut blocks = Blocks::open(&self.path)?;
        while found < needed.len() {
            let Some(block) = blocks.next()? else { break };
            if let Decoded::Data(block) = block {
                let mut locate = |id: i64, lat: i32, lon: i32| {
                    if let Ok(i) = needed.binary_search(&id)
                        && coords[i] == MISSING
                    {
                        coords[i] = (lat, lon);
                        found += 1;
                    }
                };
                block.for_each_element(|element| match element {
                    Element::Node(n) => locate(n.id(), n.decimicro_lat(), n.decimicro_lon()),
                    Element::DenseNode(n) => locate(n.id(), n.decimicro_lat(), n.decimicro_lon()),
                    _ => {}
                });
            }
            self.tick(2, blocks.read(), false);
            tokio::task::yield_now().await;
        }
        self.tick(2, self.size, true);
        if found < needed.len() {
            tracing::info!(
                missing = needed.len() - found,
                "ways refer to nodes the extract does not hold (clipped at its border); their geometry skips them"
            );
        }

        // Pass 3: ways with their geometry.
        let lookup = |id: i64| -> Option<(f64, f64)> {
            let i = needed.binary_search(&id).ok()?;
            let (lat, lon) = *coords.get(i)?;
            ((lat, lon) != MISSING)
                .then(|| (f64::from(lat) * COORD_SCALE, f64::from(lon) * COORD_SCALE))
        };
        let mut blocks = Blocks::open(&self.path)?;
        let mut ways: Vec<WayRow> = Vec::new();
        let (mut road_count, mut ferry_count) = (0_u64, 0_u64);
        while let Some(block) = blocks.next()? {
            if let Decoded::Data(block) = block {
                block.for_each_element(|element| {
                    let Element::Way(w) = element else { return };
                    let tags = Tags::collect(w.tags());
                    let (road, ferry, kind) = (tags.is_road(), tags.is_ferry(), tags.point_kind());
                    let place = places::kind_of(&tags).is_some();
                    if !(road || ferry || kind.is_some() || place) {
                        return;
                    }
                    let geometry: Vec<(f64, f64)> = w.refs().filter_map(lookup).collect();
                    if place && let Some(at) = centroid(&geometry) {
                        place_rows("way", w.id(), at, &tags, &mut places);
                    }
                    if let Some(kind) = kind
                        && let Some((lat, lon)) = centroid(&geometry)
                    {
                        points.push(PointRow {
                            cell: grid::cell(lat, lon),
                            kind: family(kind),
                            osm_type: "way",
                            osm_id: w.id(),
                            lat,
                            lon,
                            tags: tags.point_json(),
                        });
                    }
                    if geometry.len() < 2 {
                        return;
                    }
                    if road {
                        ways.push(way_row(w.id(), "road", tags.road_json(), &geometry));
                        road_count += 1;
                    } else if ferry {
                        ways.push(way_row(w.id(), "ferry", tags.ferry_json(), &geometry));
                        ferry_count += 1;
                    }
                });
            }
            if ways.len() >= WAY_BATCH {
                self.flush_ways(&mut ways).await?;
            }
            if points.len() >= POINT_BATCH {
                point_count += self.flush_points(&mut points).await?;
            }
            if places.len() >= POINT_BATCH {
                self.flush_places(&mut places).await?;
            }
            self.tick(3, blocks.read(), false);
            tokio::task::yield_now().await;
        }
        self.flush_ways(&mut ways).await?;
        point_count += self.flush_points(&mut points).await?;
        self.flush_places(&mut places).await?;
        self.tick(3, blocks.read(), true);

        let bbox = header_bbox
            .or_else(|| extent.get())
            .ok_or_else(|| IndexError::NotPbf {
                path: self.path.clone(),
                detail: "it holds no nodes and no bounding box".to_owned(),
            })?;
        Ok(ImportReport {
            dataset_id: self.id,
            name: String::new(),
            input_bytes: self.size,
            points: point_count,
            ways: road_count,
            ferries: ferry_count,
            nodes_read,
            ways_read,
            bbox,
            elapsed: self.started.elapsed(),
        })
    }

    async fn flush_points(&mut self, rows: &mut Vec<PointRow>) -> Result<u64, IndexError> {
        let n = rows.len() as u64;
        self.db.insert_points(self.id, rows).await?;
        rows.clear();
        self.kept += n;
        Ok(n)
    }

    async fn flush_places(&mut self, rows: &mut Vec<PlaceRow>) -> Result<(), IndexError> {
        self.db.insert_places(self.id, rows).await?;
        rows.clear();
        Ok(())
    }

    async fn flush_ways(&mut self, rows: &mut Vec<WayRow>) -> Result<(), IndexError> {
        self.db.insert_ways(self.id, rows).await?;
        self.kept += rows.len() as u64;
        rows.clear();
        Ok(())
    }

    fn tick(&mut self, pass: u8, bytes_read: u64, pass_done: bool) {
        let report = Progress {
            pass,
            passes: PASSES,
            bytes_read: bytes_read.min(self.size),
            total_bytes: self.size,
            kept: self.kept,
            elapsed: self.started.elapsed(),
        };
        if self.ticker.due(report.percent(), pass_done) {
            (self.progress)(&report);
        }
    }
}

/// Decides when progress is worth showing: every 2 s or 5 %, and at each pass's end.
#[derive(Debug)]
struct Ticker {
    last: Instant,
    last_percent: f64,
}

impl Ticker {
    fn new() -> Self {
        Self {
            last: Instant::now(),
            last_percent: 0.0,
        }
    }

    fn due(&mut self, percent: f64, force: bool) -> bool {
        if force
            || self.last.elapsed() >= Duration::from_secs(2)
            || percent - self.last_percent >= 5.0
        {
            self.last = Instant::now();
            self.last_percent = percent;
            return true;
        }
        false
    }
}

fn point_node(id: i64, lat: f64, lon: f64, tags: &Tags<'_>, out: &mut Vec<PointRow>) {
    if tags.is_empty() {
        return;
    }
    if let Some(kind) = tags.point_kind() {
        out.push(PointRow {
            cell: grid::cell(lat, lon),
            kind: family(kind),
            osm_type: "node",
            osm_id: id,
            lat,
            lon,
            tags: tags.point_json(),
        });
    }
}

/// The mean of the vertices (the closing vertex of a ring counted once).
fn centroid(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let ring = match points {
        [first, .., last] if first == last => &points[..points.len() - 1],
        _ => points,
    };
    if ring.is_empty() {
        return None;
    }
    let n = ring.len() as f64;
    let (lat, lon) = ring
        .iter()
        .fold((0.0, 0.0), |(a, b), (lat, lon)| (a + lat, b + lon));
    Some((lat / n, lon / n))
}

fn way_row(way_id: i64, class: &'static str, tags: String, geometry: &[(f64, f64)]) -> WayRow {
    let mut extent = Extent::new();
    let mut cells = Vec::new();
    for pair in geometry.windows(2) {
        grid::segment_cells(pair[0], pair[1], |c| cells.push(c));
    }
    cells.sort_unstable();
    cells.dedup();
    for (lat, lon) in geometry {
        extent.add(*lat, *lon);
    }
    WayRow {
        way_id,
        class,
        tags,
        geom: encode_geometry(geometry),
        bbox: extent.get().unwrap_or(Bbox {
            south: 0.0,
            west: 0.0,
            north: 0.0,
            east: 0.0,
        }),
        cells,
    }
}

/// (lat, lon) vertices as little-endian i32 pairs in units of 1e-7°: OSM's own precision.
pub(crate) fn encode_geometry(points: &[(f64, f64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(points.len() * 8);
    for (lat, lon) in points {
        for v in [lat, lon] {
            out.extend_from_slice(&((v / COORD_SCALE).round() as i32).to_le_bytes());
        }
    }
    out
}

/// The inverse of [`encode_geometry`]; trailing bytes that make no whole vertex are ignored.
pub(crate) fn decode_geometry(bytes: &[u8]) -> Vec<(f64, f64)> {
    bytes
        .chunks_exact(8)
        .map(|c| {
            let lat = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let lon = i32::from_le_bytes([c[4], c[5], c[6], c[7]]);
            (f64::from(lat) * COORD_SCALE, f64::from(lon) * COORD_SCALE)
        })
        .collect()
}

/// A decoded block.
enum Decoded {
    Header(Option<Bbox>),
    Data(PrimitiveBlock),
}

/// The blocks of a file, in order, checked ([`framing::BlockReader`]) and decoded, with
/// errors that name the file and the block.
struct Blocks {
    reader: framing::BlockReader<BufReader<File>>,
    path: PathBuf,
}

impl Blocks {
    fn open(path: &Path) -> Result<Self, IndexError> {
        let file = File::open(path).map_err(|e| IndexError::Unreadable {
            path: path.to_owned(),
            detail: e.to_string(),
        })?;
        Ok(Self {
            reader: framing::BlockReader::new(BufReader::with_capacity(1 << 20, file), path),
            path: path.to_owned(),
        })
    }

    /// Bytes of the file read, for progress.
    fn read(&self) -> u64 {
        self.reader.offset()
    }

    fn next(&mut self) -> Result<Option<Decoded>, IndexError> {
        loop {
            let Some(block) = self.reader.next()? else {
                return Ok(None);
            };
            let decoded = block.blob.decode().map_err(|e| IndexError::Corrupt {
                path: self.path.clone(),
                at: block.at,
                detail: e.to_string(),
            })?;
            match decoded {
                BlobDecode::OsmHeader(header) => {
                    let bbox = header.bbox().map(|b| Bbox {
                        south: b.bottom,
                        west: b.left,
                        north: b.top,
                        east: b.right,
                    });
                    return Ok(Some(Decoded::Header(bbox)));
                }
                BlobDecode::OsmData(block) => return Ok(Some(Decoded::Data(block))),
                // The specification asks readers to skip block types they do not know.
                BlobDecode::Unknown(_) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_dataset_after_its_file() {
        assert_eq!(
            dataset_name(Path::new("/x/rhone-alpes.osm.pbf")),
            "rhone-alpes"
        );
        assert_eq!(dataset_name(Path::new("b.pbf")), "b");
        assert_eq!(dataset_name(Path::new("extract")), "extract");
    }

    #[test]
    fn geometry_round_trips_at_osm_precision() {
        let points = [(45.123_456_7, 5.000_000_1), (-33.9, 151.2)];
        let back = decode_geometry(&encode_geometry(&points));
        for (a, b) in points.iter().zip(&back) {
            assert!((a.0 - b.0).abs() < 1e-7 && (a.1 - b.1).abs() < 1e-7);
        }
        assert_eq!(decode_geometry(&[1, 2, 3]), Vec::new());
    }

    #[test]
    fn an_area_centroid_counts_its_closing_vertex_once() {
        let square = [(0.0, 0.0), (0.0, 2.0), (2.0, 2.0), (2.0, 0.0), (0.0, 0.0)];
        assert_eq!(centroid(&square), Some((1.0, 1.0)));
        assert_eq!(centroid(&[]), None);
    }

    #[test]
    fn progress_spreads_over_the_passes() {
        let p = |pass, bytes_read| Progress {
            pass,
            passes: 3,
            bytes_read,
            total_bytes: 100,
            kept: 0,
            elapsed: Duration::ZERO,
        };
        assert_eq!(p(1, 0).percent(), 0.0);
        assert_eq!(p(2, 50).percent(), 50.0);
        assert_eq!(p(3, 100).percent(), 100.0);
    }
}
