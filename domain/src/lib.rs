//! Etappe's domain: what a trip is, what may happen to it, and how its history reads.
//!
//! Pure: no database, no runtime, no I/O; every rule is tested given/when/then. The storage
//! crate (`etappe-events`) keeps these events and folds the projection defined here; the
//! transports and the worker fleet depend on both.
//!
//! # Layout
//!
//! - [`ids`]: typed identifiers for trips, users and events.
//! - [`envelope`]: an event as appended and as recorded (ids, type, schema version, data,
//!   metadata), what the trip's events are written into and read back from.
//! - [`trip`]: the trip aggregate: settings and their rules, commands, events, the one
//!   [`trip::decide`] and [`trip::evolve`], the lock rule and the structural `version`.
//! - [`projection`]: the trip read model, the fold of recorded trip events by the same
//!   `evolve` the aggregate uses.

pub mod envelope;
pub mod ids;
pub mod projection;
pub mod text;
pub mod trip;
