//! `analyze_trip`: analyse again. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use serde_json::json;

use crate::mcp::arguments::TRIP_ID;
use crate::mcp::call::{Answer, Call, TripRef, refusal};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "analyze_trip",
    title: "Analyse again",
    description: "Re-run the analysis of the days. Returns at once.",
    hints: Hints {
        idempotent: false,
        open_world: true,
        ..Hints::WRITE
    },
    output: outputs::started,
    args: &[TRIP_ID],
    help: "Refused while an analysis runs, before the days exist, and when the trip is locked. Answers {result, nextAction}; read categoryStatus in get_trip.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "id")?;
    call.state
        .trips()
        .analyze(call.caller, trip.id)
        .await
        .map_err(refusal(Some(&trip.raw)))?;
    Ok(json!({
        "result": "Analysis requested. Nothing is ready yet.",
        "nextAction": format!("Call get_trip with id {} in a little while, usually under a minute, and read categoryStatus.", trip.raw),
    }))
}
