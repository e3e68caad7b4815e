//! `add_waypoint`: detour through a point. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use serde_json::{Value, json};

use crate::mcp::arguments::{STAGE_ID, TRIP_ID_AS_TRIP, as_arg};
use crate::mcp::call::{Answer, Call, StageRef, refusal, without, written};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::outputs;
use crate::openapi::inputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "add_waypoint",
    title: "Detour through a point",
    description: "Detour a day through a point (no point: remove it); the version stays.",
    hints: Hints {
        idempotent: false,
        open_world: true,
        ..Hints::WRITE
    },
    output: outputs::started,
    args: &[
        TRIP_ID_AS_TRIP,
        STAGE_ID,
        as_arg(inputs::WAYPOINT_FIELDS[0]),
        as_arg(inputs::WAYPOINT_FIELDS[1]),
    ],
    help: "Runs as a job: a spur leaves the day's own route near the point, reaches it by the configured router (Valhalla/BRouter) and comes back, the rest of the day untouched (addedDistance is never negative); without a router, a straight out-and-back spur flagged estimated. Read get_stage later for the detour. Both coordinates absent removes the day's detour at once (the same convention as choose_accommodation: nothing given clears). The version does not move either way, so no version argument.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let day = StageRef::read(call.args)?;
    let input = without(call.args, &["tripId", "stageId"]);
    if input.values().all(Value::is_null) {
        // Nothing given clears, as with choose_accommodation: the detour is removed.
        let detail = call
            .state
            .trips()
            .remove_detour(call.caller, day.trip.id, day.stage)
            .await
            .map_err(refusal(Some(&day.trip.raw)))?;
        return Ok(written(
            &detail,
            "The detour was removed: the day rides its own roads again. The trip version has not moved.",
            "Read get_stage for the day's figures; the analysis of its roads runs again.",
        ));
    }
    let accepted = call
        .state
        .trips()
        .add_waypoint(call.caller, day.trip.id, day.stage, &input)
        .await
        .map_err(refusal(Some(&day.trip.raw)))?;
    Ok(json!({
        "result": "The day is being re-routed through the point. The trip version has not moved.",
        "version": accepted.version,
        "nextAction": format!("Call get_stage with tripId {} and stageId {} in a little while to read the detour.", day.trip.raw, accepted.stage_id),
    }))
}
