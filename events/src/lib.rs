//! Etappe's core: what a trip is, what may happen to it, and how that history is kept.
//!
//! Everything here is either pure domain logic (no I/O, tested given/when/then) or the event
//! store that persists it. Transports (REST, MCP) and the worker fleet depend on this crate;
//! it depends on neither.
//!
//! # Layout
//!
//! - [`ids`]: typed identifiers for trips, users and events.
//! - [`trip`]: the trip aggregate: settings and their rules, commands, events, `decide` and
//!   `evolve`, the lock rule and the structural `version`.
//! - [`store`]: the [`store::EventStore`] port with its SQLite and PostgreSQL adapters,
//!   upcasting of old event shapes, subscriptions and the conformance suite both adapters pass.
//! - [`projection`]: the trip read model, folded from events inside the append transaction and
//!   rebuildable from the log.

pub mod ids;
pub mod projection;
pub mod store;
pub mod text;
pub mod trip;
