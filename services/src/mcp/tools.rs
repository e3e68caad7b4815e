//! Each tool in its own module: its declaration (`SPEC`: name, title, description, hints,
//! scope, arguments, help, output schema) and its handler, side by side, so a tool is added
//! or changed in one file and listed once, in [`CATALOGUE`] below. Each handler is a thin wrapper
//! over the application service its REST twin calls: it reads its typed arguments (ids,
//! version, counts: each refusal names the argument), hands the body of the change to the
//! service's own parser, and answers with `version` and `nextAction`; every refusal is a
//! [`ToolError`](super::refusal::ToolError), mapped once (`refusal`).
//!
//! A spec's handler boxes its tool's future (`|call| Box::pin(handle(call))`): futures of
//! different tools differ in type and size, and a box keeps the catalogue one type.

mod day;

mod add_waypoint;
mod analyze_trip;
mod choose_accommodation;
mod create_trip;
mod delete_trip;
mod edit_stages;
mod get_stage;
mod get_trip;
mod list_trips;
mod search_places;
mod share_trip;
mod unshare_trip;
mod update_trip_settings;

use super::catalogue::{HELP, ToolSpec};

/// Every tool, in the order `tools/list` serves them; `etappe_help` last.
pub const CATALOGUE: &[ToolSpec] = &[
    list_trips::SPEC,
    get_trip::SPEC,
    get_stage::SPEC,
    search_places::SPEC,
    create_trip::SPEC,
    update_trip_settings::SPEC,
    edit_stages::SPEC,
    add_waypoint::SPEC,
    choose_accommodation::SPEC,
    analyze_trip::SPEC,
    share_trip::SPEC,
    unshare_trip::SPEC,
    delete_trip::SPEC,
    HELP,
];

pub use self::day::{DEFAULT_PER_CATEGORY, MAX_PER_CATEGORY};
pub use self::get_trip::digest;
