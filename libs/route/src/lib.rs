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
//! - [`elevation`]: filling missing heights from a few looked-up samples.
//! - [`pieces`]: joining a file's pieces, with gaps that are not ridden.
//! - [`pacing`]: the product's day-cutting rule (and a balanced variant).
//! - [`synthetic`]: deterministic test routes with a known profile.
//! - [`xml`]: XML text escaping for every GPX writer.
//!
//! Decisions worth knowing before changing the code:
//!
//! - GPX is matched by local element name (GPX 1.0 and 1.1, any namespace
//!   prefix); unknown subtrees are skipped whole. `<!DOCTYPE` is refused
//!   (billion laughs, XXE) and entities are never expanded. Input that is not
//!   UTF-8 is read as ISO-8859-1, so decoding cannot fail; UTF-16 files are
//!   reported as not GPX.
//! - Climbing is smoothed over 100 m of *distance* (not a point count), then
//!   counted with a 5 m hysteresis: GPS, barometer and DEM noise is ±3–5 m
//!   between points, real ramps are higher. A noisy flat track climbs 0 m and
//!   a clean ramp keeps its full height (both tested).
//! - [`pacing::pace`] implements the product rule as written. With a cap and
//!   a fatigue factor below 1, the distance the cap removes from early days
//!   lands on the last day, which can then exceed the cap;
//!   [`pacing::pace_balanced`] scales the whole plan instead. The climbing
//!   penalty never changes the total distance: with a fatigue factor below 1
//!   it moves distance from later days to the first ones (tested).
//! - Komoot and RideWithGPS shapes follow their documented payloads; skipping
//!   `highlight*` items in a collection and accepting a top-level RideWithGPS
//!   route object are assumptions no real page has confirmed.
//! - `route-bench` (std only) measures parsing, distances, climbing and
//!   pacing on generated files: `cargo run --release -p etappe-route --bin
//!   route-bench -- [--runs N] [--out DIR]`.

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

pub mod detour;
pub mod elevation;
mod error;
pub mod geometry;
pub mod gpx;
pub mod pacing;
pub mod pieces;
pub mod sources;
pub mod synthetic;
pub mod xml;

pub use error::{RouteError, RouteOrigin};
pub use gpx::{ParsedRoute, TrackPoint, parse_gpx};
