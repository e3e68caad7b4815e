//! `share_trip`: share a trip. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use serde_json::json;

use crate::mcp::arguments::TRIP_ID_AS_TRIP;
use crate::mcp::call::{Answer, Call, TripRef, refusal};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "share_trip",
    title: "Share a trip",
    description: "Public read-only link; url + \".gpx\" downloads the route.",
    hints: Hints::WRITE,
    output: outputs::link,
    args: &[TRIP_ID_AS_TRIP],
    help: "One link per trip: a repeat answers the same {url, shortCode, createdAt}. Anyone with the url reads the trip without a token; url + .gpx or .fit downloads it.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "tripId")?;
    // The same base as REST: the configured public URL, else the Host this call came to.
    let base = etappe_app::links::base_url(call.state, crate::auth::host(call.headers))
        .map_err(refusal(Some(&trip.raw)))?;
    let (link, _) = call
        .state
        .trips()
        .share(call.caller, trip.id)
        .await
        .map_err(refusal(Some(&trip.raw)))?;
    Ok(json!({
        "url": format!("{base}/s/{}", link.code),
        "shortCode": link.code,
        "createdAt": link.created_at,
        "result": "Anyone with this url reads the trip without a token; url + \".gpx\" or \".fit\" downloads it.",
    }))
}
