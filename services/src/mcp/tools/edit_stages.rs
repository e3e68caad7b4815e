//! `edit_stages`: edit days. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use etappe_app::trips::BaseVersion;
use etappe_domain::text::quote;
use etappe_domain::trip::edits::input::parse_action;
use serde_json::{Map, Value};

use crate::mcp::arguments::{EDIT_ARGS, EDIT_FIELDS};
use crate::mcp::call::{Answer, Call, StageRef, TripRef, string, version, written};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::confirm::TokenConfirmation;
use crate::mcp::refusal::ToolError;
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "edit_stages",
    title: "Edit days",
    description: "Edit days: each action's fields are in etappe_help.",
    hints: Hints {
        destructive: true,
        idempotent: false,
        ..Hints::WRITE
    },
    output: outputs::edited,
    args: &EDIT_ARGS,
    help: "add: splits stageId at distance (km from the day's start) or endPoint {lat, lon} (one is required), the new day follows, with label if given. update: moves stageId's end to distance or endPoint (the next day starts there) and/or sets label (null clears). move: toIndex (0-based); riding days keep the route's order, only a rest day moves, and it is spent where the day before it ends. delete: the day's route joins the previous day (the first day's joins the next); merge_next: it joins the next day. rest_day: inserted after stageId. A field the action does not read is refused. Every other day keeps its id; a detour moves with its point to the day that rides it. Answers {result, version, partial, nextAction, alsoChanged?} (tell the user alsoChanged); pass that version to the next edit. An edit that would remove what the user made (a detour, a night they chose) answers its impact and a confirmationToken first.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "tripId")?;
    let action_name = string(call.args, "action")?;
    let Some(action) = parse_action(action_name) else {
        return Err(ToolError::Argument(format!(
            "action {} is not one of {}. See etappe_help {{\"topic\":\"edit_stages\"}}.",
            quote(action_name),
            crate::mcp::arguments::EDIT_ACTIONS.join(", ")
        )));
    };
    let expected = version(call.args)?;
    let day = StageRef::read(call.args)?;
    // The edit's fields are flat arguments; the service reads them as the change.
    let input: Map<String, Value> = EDIT_FIELDS
        .iter()
        .filter_map(|&name| Some((name.to_owned(), call.args.get(name)?.clone())))
        .collect();
    let confirmation = TokenConfirmation::of(call, "edit_stages");
    let edited = call
        .state
        .trips()
        .edit_stage(
            call.caller,
            trip.id,
            (action, day.stage),
            &input,
            Some(BaseVersion::Exact(expected)),
            &confirmation,
        )
        .await;
    let detail = match edited {
        Ok(detail) => detail,
        Err(error) => {
            return confirmation
                .answer(
                    error,
                    &trip.raw,
                    "Edit the days; this removes something the user made (see impact.change).",
                )
                .await;
        }
    };
    let result = match action_name {
        "add" => "Day inserted.",
        "update" => "Day changed.",
        "move" => "Day moved.",
        "delete" => "Day removed and merged with its neighbour.",
        _ => "Rest day inserted.",
    };
    Ok(written(
        &detail,
        result,
        "The affected days are being analysed again. Pass the version above to the next edit; there is no need to read the trip first.",
    ))
}
