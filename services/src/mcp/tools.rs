//! Each tool in its own module: its declaration (`SPEC`: name, title, description, hints,
//! scope, arguments, help, output schema) and its handler, side by side, so a tool is added
//! or changed in one file and the catalogue only lists it. Each handler is a thin wrapper
//! over the application service its REST twin calls: it reads its typed arguments (ids,
//! version, counts: each refusal names the argument), hands the body of the change to the
//! service's own parser, and answers with `version` and `nextAction`; every refusal is a
//! [`ToolError`](super::refusal::ToolError), mapped once (`refusal`).
//!
//! A spec's handler boxes its tool's future (`|call| Box::pin(handle(call))`): futures of
//! different tools differ in type and size, and a box keeps the catalogue one type.

mod day;

pub(super) mod add_waypoint;
pub(super) mod analyze_trip;
pub(super) mod choose_accommodation;
pub(super) mod create_trip;
pub(super) mod delete_trip;
pub(super) mod edit_stages;
pub(super) mod get_stage;
pub(super) mod get_trip;
pub(super) mod list_trips;
pub(super) mod search_places;
pub(super) mod share_trip;
pub(super) mod unshare_trip;
pub(super) mod update_trip_settings;

pub use self::day::{DEFAULT_PER_CATEGORY, MAX_PER_CATEGORY};
pub use self::get_trip::digest;
