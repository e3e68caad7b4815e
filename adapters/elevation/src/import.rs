//! `etappe elevation import FILE.hgt…`: every file is checked (its name gives a tile, its
//! size one of the two SRTM grids) before anything is written, so a typo in the list writes
//! nothing; then each is read and stored under its tile name, replacing the tile of that
//! name. Any byte string of an accepted size is a valid tile, so the check is complete.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde::Serialize;

use crate::db::ElevationDb;
use crate::error::ElevationError;
use crate::hgt::{Corner, HgtError, Tile, samples_for};

/// What one import stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The tiles, in the order given.
    pub tiles: Vec<ImportedTile>,
    /// The box the imported tiles cover (not necessarily all of it: tiles may be apart).
    pub coverage: Coverage,
    #[serde(skip)]
    pub elapsed: Duration,
}

/// One stored tile.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedTile {
    /// "N47E009".
    pub name: String,
    pub path: PathBuf,
    pub south: i32,
    pub west: i32,
    /// 1201 or 3601.
    pub samples: usize,
    pub bytes: u64,
    /// Samples without a measurement.
    pub voids: u64,
    /// The lowest and highest sample, metres; None when every sample is a void.
    pub lowest_m: Option<i16>,
    pub highest_m: Option<i16>,
}

/// A box of whole degrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Coverage {
    pub south: i32,
    pub west: i32,
    pub north: i32,
    pub east: i32,
}

impl Coverage {
    /// The box around `corners`' tiles; None for no corners.
    pub fn around(corners: impl IntoIterator<Item = Corner>) -> Option<Self> {
        corners.into_iter().fold(None, |acc, c| {
            let tile = Self {
                south: c.south,
                west: c.west,
                north: c.south + 1,
                east: c.west + 1,
            };
            Some(match acc {
                None => tile,
                Some(b) => Self {
                    south: b.south.min(tile.south),
                    west: b.west.min(tile.west),
                    north: b.north.max(tile.north),
                    east: b.east.max(tile.east),
                },
            })
        })
    }
}

/// A file checked for import.
struct Checked {
    path: PathBuf,
    corner: Corner,
}

fn file_size(path: &Path) -> Result<u64, ElevationError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(meta.len()),
        Ok(_) => Err(ElevationError::Unreadable {
            path: path.to_owned(),
            detail: "it is a directory, not a file".to_owned(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ElevationError::NoSuchFile {
            path: path.to_owned(),
        }),
        Err(e) => Err(ElevationError::Unreadable {
            path: path.to_owned(),
            detail: e.to_string(),
        }),
    }
}

/// The tile a file would be: its name and size checked.
fn check(path: &Path) -> Result<Checked, ElevationError> {
    let shown = path.display().to_string();
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let corner = Corner::parse(&file_name, &shown)?;
    let size = file_size(path)?;
    let bytes = usize::try_from(size).unwrap_or(usize::MAX);
    if samples_for(bytes).is_none() {
        return Err(HgtError::BadSize { file: shown, bytes }.into());
    }
    Ok(Checked {
        path: path.to_owned(),
        corner,
    })
}

/// Checks every file, then stores each tile, replacing the stored tile of the same name.
pub async fn import(db: &ElevationDb, paths: &[PathBuf]) -> Result<ImportReport, ElevationError> {
    let started = Instant::now();
    if paths.is_empty() {
        return Err(ElevationError::NothingToImport);
    }
    let mut seen: BTreeMap<Corner, PathBuf> = BTreeMap::new();
    let mut checked = Vec::with_capacity(paths.len());
    for path in paths {
        let file = check(path)?;
        if let Some(first) = seen.insert(file.corner, file.path.clone()) {
            return Err(ElevationError::Duplicate {
                name: file.corner.name(),
                first,
                second: file.path,
            });
        }
        checked.push(file);
    }
    let mut tiles = Vec::with_capacity(checked.len());
    for file in checked {
        let data = std::fs::read(&file.path).map_err(|e| ElevationError::Unreadable {
            path: file.path.clone(),
            detail: e.to_string(),
        })?;
        // Checked again: the file may have changed since its size was read.
        let tile = Tile::from_parts(file.corner, data, &file.path.display().to_string())?;
        db.upsert(&tile, Utc::now()).await?;
        let (voids, lowest_m, highest_m) = tile.statistics();
        tracing::info!(tile = %tile.name(), path = %file.path.display(), "elevation tile imported");
        tiles.push(ImportedTile {
            name: tile.name(),
            south: file.corner.south,
            west: file.corner.west,
            samples: tile.samples(),
            bytes: u64::try_from(tile.data().len()).unwrap_or(u64::MAX),
            voids,
            lowest_m,
            highest_m,
            path: file.path,
        });
    }
    let coverage = Coverage::around(seen.keys().copied()).ok_or(ElevationError::NothingToImport)?;
    Ok(ImportReport {
        tiles,
        coverage,
        elapsed: started.elapsed(),
    })
}
