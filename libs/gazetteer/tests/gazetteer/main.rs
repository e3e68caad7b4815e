//! The gazetteer's integration tests as one binary: the embedded GeoNames data and a small
//! hand-made gazetteer with exact answers, one module each.

mod embedded;
mod tiny;
