//! `delete_trip`: delete a trip. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use serde_json::json;

use crate::mcp::arguments::{TOKEN, TRIP_ID};
use crate::mcp::call::{Answer, Call, TripRef};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::confirm::TokenConfirmation;
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "delete_trip",
    title: "Delete a trip",
    description: "Delete a trip for good; asks to confirm first.",
    hints: Hints {
        destructive: true,
        ..Hints::WRITE
    },
    output: outputs::confirmed,
    args: &[TRIP_ID, TOKEN],
    help: "The first call answers the impact (title, days, dates, share link) and a confirmationToken; the second deletes the trip, its days and its share link. Works when the trip is locked. Cannot be undone.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "id")?;
    let confirmation = TokenConfirmation::of(call, "delete_trip");
    if let Err(error) = call
        .state
        .trips()
        .delete(call.caller, trip.id, &confirmation)
        .await
    {
        return confirmation
            .answer(error, &trip.raw, "Delete the trip for good.")
            .await;
    }
    Ok(json!({
        "result": "The trip is deleted, with its days, its computations and any share link. This cannot be undone.",
        "nextAction": "Nothing to do; list_trips shows the trips left.",
    }))
}
