//! The one error type of the index: what went wrong reading an extract (named, with the
//! byte where it happened) or talking to the database, and the mapping to the port's
//! [`UpstreamError`] so the analysis reports a missing or broken index like a downed
//! upstream rather than as "found nothing".

use std::path::PathBuf;

use etappe_upstream::{Upstream, UpstreamError};

/// Why an import or a query failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{}: no such file", path.display())]
    NoSuchFile { path: PathBuf },
    #[error("{}: cannot read it: {detail}", path.display())]
    Unreadable { path: PathBuf, detail: String },
    #[error(
        "{}: not an OSM PBF file ({detail}); expected a .osm.pbf extract such as Geofabrik's",
        path.display()
    )]
    NotPbf { path: PathBuf, detail: String },
    #[error(
        "{}: truncated at byte {size}: the block starting at byte {block_start} needs {needed} bytes; download the file again",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        size: u64,
        block_start: u64,
        needed: u64,
    },
    #[error("{}: corrupt at byte {at}: {detail}", path.display())]
    Corrupt {
        path: PathBuf,
        at: u64,
        detail: String,
    },
    /// A block over the format's limits, lying about its size, or compressed in a way Etappe
    /// does not read: refused before it can cost memory or import as an empty region.
    /// `detail` continues the sentence: "declares no raw_size", "claims 1,073,741,824 bytes…".
    #[error("{}: the block at byte {at} {detail}", path.display())]
    BadBlock {
        path: PathBuf,
        at: u64,
        detail: String,
    },
    /// Nothing the analysis reads: activated, the region would answer "covered, nothing
    /// found" along every route inside it, which a broken or wrongly cut file also gives.
    #[error(
        "{}: holds no features Etappe reads (0 points, 0 road ways, 0 ferry lines), so it was not loaded; if the region really is empty, import it with `etappe osm import --allow-empty`",
        path.display()
    )]
    Empty { path: PathBuf },
    #[error("no OpenStreetMap index is loaded; run `etappe osm import <file.osm.pbf>`")]
    NotLoaded,
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("the OpenStreetMap index's database failed: {0}")]
    Database(#[from] sqlx::Error),
    #[error("the OpenStreetMap index holds a row it cannot read: {0}")]
    BadRow(String),
}

impl From<IndexError> for UpstreamError {
    fn from(error: IndexError) -> Self {
        let retryable = matches!(error, IndexError::Database(_));
        match error {
            IndexError::InvalidRequest(detail) => {
                UpstreamError::invalid_request(Upstream::OsmIndex, detail)
            }
            other => UpstreamError::new(Upstream::OsmIndex, other.to_string(), retryable),
        }
    }
}
