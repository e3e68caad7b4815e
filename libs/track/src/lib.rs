//! The pure track helpers both the API and the workers use, so neither borrows them from the
//! other: the stored form of a generation's track ([`stored`]), the track's geometry the
//! domain's stage edits measure against ([`geometry`]), and place labels from the embedded
//! gazetteer ([`labels`]). No I/O: callers read and write the blobs.

pub mod detour;
pub mod geometry;
pub mod labels;
pub mod stored;
