//! `unshare_trip`: revoke a share link. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use serde_json::json;

use crate::mcp::arguments::{TOKEN, TRIP_ID_AS_TRIP};
use crate::mcp::call::{Answer, Call, TripRef};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::confirm::TokenConfirmation;
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "unshare_trip",
    title: "Revoke a share link",
    description: "Revoke the public link; asks to confirm first.",
    hints: Hints {
        destructive: true,
        ..Hints::WRITE
    },
    output: outputs::confirmed,
    args: &[TRIP_ID_AS_TRIP, TOKEN],
    help: "The first call answers the impact and a confirmationToken; the second (same arguments + token) revokes: the address stops resolving for everyone.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "tripId")?;
    let confirmation = TokenConfirmation::of(call, "unshare_trip");
    if let Err(error) = call
        .state
        .trips()
        .unshare(call.caller, trip.id, &confirmation)
        .await
    {
        return confirmation
            .answer(error, &trip.raw, "Revoke the public link.")
            .await;
    }
    Ok(json!({
        "result": "The share link is revoked. The address no longer resolves, for anyone who kept it.",
        "nextAction": "Nothing to do; share_trip makes a new link if one is wanted.",
    }))
}
