//! Local terrain heights: `etappe elevation import N47E009.hgt …` stores SRTM tiles in
//! Etappe's own database (SQLite or PostgreSQL), and [`LocalTiles`] answers the
//! [`etappe_upstream::Elevations`] port from them, so routes without `<ele>` get a profile
//! offline, with no third party at run time.
//!
//! - [`hgt`]: the `.hgt` format, decoded by hand (big-endian i16, no crate needed), and the
//!   bilinear height between samples;
//! - [`import()`]: every file checked before any is written, then stored by tile name;
//! - [`LocalTiles`]: the port over the stored tiles, with a small cache of decoded ones;
//! - [`ElevationDb`]: the pool it uses, the same database as the rest of Etappe.

mod db;
mod error;
pub mod hgt;
mod import;
mod tiles;

pub use db::{ElevationDb, TileInfo};
pub use error::ElevationError;
pub use hgt::{Corner, HgtError, Tile};
pub use import::{Coverage, ImportReport, ImportedTile, import};
pub use tiles::{DEFAULT_CACHED_TILES, LocalTiles};

/// The stored tiles, south to north, west to east (`etappe elevation status`).
pub async fn status(db: &ElevationDb) -> Result<Vec<TileInfo>, ElevationError> {
    db.tiles().await
}
