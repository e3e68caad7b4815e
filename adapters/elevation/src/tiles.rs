//! The port answered from the stored tiles: [`LocalTiles`] implements [`Elevations`].
//!
//! A point is looked up in the tile of floor(lat), floor(lon); a point exactly on a tile's
//! north or east border (a whole degree) is also answered by the tile on the other side when
//! its own is not imported, since both hold that edge. Tiles are read from the database on
//! demand and the last few used are kept decoded in memory (a 1 arc-second tile is 26 MB);
//! one call reads each tile it needs once, grouping its points by tile, so a long route holds
//! one tile at a time beyond the cache. Two calls missing the same tile at once may both read
//! it: harmless, and cheaper than a lock held across the database. A tile re-imported while
//! the process runs is seen once the cached copy is evicted (or at the next start).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use etappe_upstream::{Elevations, UpstreamError};

use crate::db::{ElevationDb, TileInfo};
use crate::error::ElevationError;
use crate::hgt::{Corner, Tile};

/// Decoded tiles kept in memory by default: up to 208 MB of 1 arc-second tiles, 23 MB of
/// 3 arc-second ones; a day's ride crosses two or three.
pub const DEFAULT_CACHED_TILES: usize = 8;

/// The stored SRTM tiles, read through the [`Elevations`] port.
#[derive(Debug)]
pub struct LocalTiles {
    db: ElevationDb,
    capacity: usize,
    /// Least recently used first.
    cached: Mutex<VecDeque<Arc<Tile>>>,
    reads: AtomicU64,
}

/// The tiles that may answer for (`lat`, `lon`), best first: its own, then across a border
/// it lies exactly on.
fn candidates(lat: f64, lon: f64) -> Vec<Corner> {
    if !(lat.is_finite() && lon.is_finite()) {
        return Vec::new();
    }
    #[allow(clippy::cast_possible_truncation)]
    let (south, west) = (lat.floor() as i32, lon.floor() as i32);
    let on_parallel = lat.fract() == 0.0;
    let on_meridian = lon.fract() == 0.0;
    let mut corners = vec![(south, west)];
    if on_parallel {
        corners.push((south - 1, west));
    }
    if on_meridian {
        corners.push((south, west - 1));
    }
    if on_parallel && on_meridian {
        corners.push((south - 1, west - 1));
    }
    corners
        .into_iter()
        .filter_map(|(s, w)| Corner::new(s, w))
        .collect()
}

impl LocalTiles {
    pub fn new(db: ElevationDb) -> Self {
        Self::with_capacity(db, DEFAULT_CACHED_TILES)
    }

    /// Keeps up to `capacity` decoded tiles in memory (0: none, each call reads its tiles).
    pub fn with_capacity(db: ElevationDb, capacity: usize) -> Self {
        Self {
            db,
            capacity,
            cached: Mutex::new(VecDeque::new()),
            reads: AtomicU64::new(0),
        }
    }

    /// The database it reads (and `import` writes).
    pub fn db(&self) -> &ElevationDb {
        &self.db
    }

    /// The stored tiles, south to north, west to east.
    pub async fn status(&self) -> Result<Vec<TileInfo>, ElevationError> {
        self.db.tiles().await
    }

    /// Whether any tile is imported.
    pub async fn is_loaded(&self) -> Result<bool, ElevationError> {
        self.db.any_tile().await
    }

    /// Tile look-ups that went to the database (found or not), for our figures.
    pub fn tile_reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// A poisoned lock only means another thread panicked mid-update; the list is still
    /// a list of whole tiles, and refusing service is worse.
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<Tile>>> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tile at `corner`: from memory, else from the database (then kept).
    async fn tile(&self, corner: Corner) -> Result<Option<Arc<Tile>>, ElevationError> {
        {
            let mut cached = self.lock();
            if let Some(at) = cached.iter().position(|t| t.corner() == corner)
                && let Some(tile) = cached.remove(at)
            {
                cached.push_back(Arc::clone(&tile));
                return Ok(Some(tile));
            }
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        let Some(tile) = self.db.tile(corner).await?.map(Arc::new) else {
            return Ok(None);
        };
        if self.capacity > 0 {
            let mut cached = self.lock();
            cached.retain(|t| t.corner() != corner);
            while cached.len() >= self.capacity {
                cached.pop_front();
            }
            cached.push_back(Arc::clone(&tile));
        }
        Ok(Some(tile))
    }

    /// [`Elevations::heights`] with the tiles' own error.
    pub async fn find_heights(
        &self,
        points: &[(f64, f64)],
    ) -> Result<Vec<Option<f64>>, ElevationError> {
        let mut found: Vec<Option<f64>> = vec![None; points.len()];
        let options: Vec<Vec<Corner>> = points
            .iter()
            .map(|&(lat, lon)| candidates(lat, lon))
            .collect();
        let mut absent: HashSet<Corner> = HashSet::new();
        // Round k asks each point still without a height its k-th candidate tile.
        for round in 0..4 {
            let mut by_tile: BTreeMap<Corner, Vec<usize>> = BTreeMap::new();
            for (i, corners) in options.iter().enumerate() {
                if found.get(i).is_some_and(Option::is_some) {
                    continue;
                }
                if let Some(corner) = corners.get(round).filter(|c| !absent.contains(c)) {
                    by_tile.entry(*corner).or_default().push(i);
                }
            }
            if by_tile.is_empty() {
                break;
            }
            for (corner, indices) in by_tile {
                let Some(tile) = self.tile(corner).await? else {
                    absent.insert(corner);
                    continue;
                };
                for i in indices {
                    if let (Some(slot), Some(&(lat, lon))) = (found.get_mut(i), points.get(i)) {
                        *slot = tile.height(lat, lon);
                    }
                }
            }
        }
        Ok(found)
    }
}

#[async_trait]
impl Elevations for LocalTiles {
    fn provider(&self) -> &'static str {
        "srtm"
    }

    /// The database answers (with or without tiles in it).
    async fn probe(&self) -> Result<(), UpstreamError> {
        self.db.any_tile().await.map(drop).map_err(Into::into)
    }

    async fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, UpstreamError> {
        Ok(self.find_heights(points).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corner(south: i32, west: i32) -> Corner {
        Corner::new(south, west).expect("a corner")
    }

    #[test]
    fn borders_also_ask_the_tile_across() {
        assert_eq!(candidates(47.5, 9.5), [corner(47, 9)]);
        assert_eq!(candidates(48.0, 9.5), [corner(48, 9), corner(47, 9)]);
        assert_eq!(candidates(47.5, 10.0), [corner(47, 10), corner(47, 9)]);
        assert_eq!(
            candidates(48.0, 10.0),
            [corner(48, 10), corner(47, 10), corner(48, 9), corner(47, 9)]
        );
        // The pole and the antimeridian have a tile on one side only.
        assert_eq!(candidates(90.0, 9.5), [corner(89, 9)]);
        assert_eq!(candidates(47.5, 180.0), [corner(47, 179)]);
        assert_eq!(candidates(-90.0, 0.5), [corner(-90, 0)]);
        assert!(candidates(f64::NAN, 9.0).is_empty());
        assert!(candidates(95.0, 9.0).is_empty());
    }
}
