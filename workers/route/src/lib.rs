//! Etappe route core: turns route files and route-service payloads into
//! point lists, measures them and cuts them into cycling days.
//!
//! Everything here is a pure function over bytes or slices: no I/O, no
//! network, no global state, so the web layer decides about fetching,
//! size caps and timeouts, and this crate can be tested exhaustively.
//!
//! - [`gpx`]: streaming GPX parser (quick-xml events, no DOM).
//! - [`sources`]: Komoot page and RideWithGPS JSON payloads.
//! - [`geometry`]: distances, smoothed climbing, Douglas–Peucker.
//! - [`pieces`]: joining a file's pieces, with gaps that are not ridden.
//! - [`pacing`]: the product's day-cutting rule (and a balanced variant).
//! - [`synthetic`]: deterministic test routes with a known profile.

#![forbid(unsafe_code)]
// Library code must never bring the server down on hostile input; tests may
// still use `expect` to keep their failure messages short.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod error;
pub mod geometry;
pub mod gpx;
pub mod pacing;
pub mod pieces;
pub mod sources;
pub mod synthetic;

pub use error::RouteError;
pub use gpx::{ParsedRoute, TrackPoint, parse_gpx};
