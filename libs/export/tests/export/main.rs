//! The export's integration tests as one binary: FIT and GPX files read back and checked
//! against their schemas (and the Garmin FIT SDK where installed), one module each, with the
//! synthetic trip in `common`.

mod common;
mod fit;
mod fit_sdk;
mod gpx;
