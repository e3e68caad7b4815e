//! The local OpenStreetMap index: `etappe osm import region.osm.pbf` streams an extract into
//! tables of Etappe's own database (SQLite or PostgreSQL, no spatial extension), keeping only
//! what the route analysis reads, and [`LocalIndex`] answers the
//! [`etappe_upstream::OsmFeatures`] port from them, so the analysis runs offline with no third
//! party at run time.
//!
//! - [`import()`](import::import): three streaming passes, a new dataset made active in one
//!   transaction at the end (a failed import leaves the previous one answering); every
//!   block checked against the format's limits (`framing.rs`) and an empty region refused
//!   unless [`ImportOptions::allow_empty`];
//! - the named places of the extract (`places.rs`): villages, stations, huts… by every name
//!   they carry, for [`etappe_upstream::OsmFeatures::places_named`];
//! - [`LocalIndex`]: the port, plus [`LocalIndex::status`] for `etappe osm status`;
//! - [`IndexDb`]: the pool it uses, the same database as the rest of Etappe.

mod db;
mod decoded;
mod error;
mod framing;
mod grid;
mod import;
mod places;
mod query;
mod tags;

pub use db::{Bbox, DatasetInfo, IndexDb};
pub use error::IndexError;
pub use import::{ImportOptions, ImportReport, Progress, dataset_name, import, import_with};
pub use query::LocalIndex;
