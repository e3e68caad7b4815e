//! The one error type of the local tiles: what is wrong with a file (named), or the
//! database failing, and the mapping to the port's [`UpstreamError`] so the analysis reports
//! broken tiles like a downed upstream rather than as "no height here".

use std::path::PathBuf;

use etappe_upstream::{Upstream, UpstreamError};

use crate::hgt::HgtError;

/// Why an import or a look-up failed.
#[derive(Debug, thiserror::Error)]
pub enum ElevationError {
    #[error("{}: no such file", path.display())]
    NoSuchFile { path: PathBuf },
    #[error("{}: cannot read it: {detail}", path.display())]
    Unreadable { path: PathBuf, detail: String },
    #[error(transparent)]
    Hgt(#[from] HgtError),
    #[error("{} and {} are both tile {name}; import one of them", first.display(), second.display())]
    Duplicate {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("no elevation tiles given; pass one or more .hgt files")]
    NothingToImport,
    #[error("the elevation tiles' database failed: {0}")]
    Database(#[from] sqlx::Error),
    #[error("the elevation tiles' database holds a row it cannot read: {0}")]
    BadRow(String),
}

impl From<ElevationError> for UpstreamError {
    fn from(error: ElevationError) -> Self {
        // Only the database may come back; a broken row stays broken until re-imported.
        let retryable = matches!(error, ElevationError::Database(_));
        UpstreamError::new(Upstream::Elevation, error.to_string(), retryable)
    }
}
