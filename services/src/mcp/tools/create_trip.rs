//! `create_trip`: create a trip. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use chrono::Utc;
use etappe_app::trips::canonical_digest;
use serde_json::{Value, json};

use crate::mcp::arguments::CREATE_ARGS;
use crate::mcp::call::{Answer, Call, SETTINGS_EXAMPLE, object, plan_of, refusal};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "create_trip",
    title: "Create a trip",
    description: "Trip from a route link or places.",
    hints: Hints {
        open_world: true,
        ..Hints::WRITE
    },
    output: outputs::created,
    args: &CREATE_ARGS,
    help: "Either sourceUrl (a Komoot tour or collection, Strava route, RideWithGPS route or GPX link; map pages such as Google Maps are refused) or a plan: from and to (a place name, resolved to its clear best match, e.g. \"Basel\"; or \"lat,lon\"), via (places to pass, in order) and profile (touring, road, gravel, mountain; default touring), routed by the server's routing engine (refused at once when none is configured). An ambiguous name (\"Springfield\") is refused listing the candidates: pass one as lat,lon. settings (args types each with its range and default): startDate and endDate set the number of days (6 days from 1 to 6 June); without dates, days asks for that many; else maxDistancePerDay (km of effort: climbing over elevationPenalty counts, so hilly days are shorter) decides; the settings not given take their defaults, and update_trip_settings changes any of them afterwards (etappe_help on it lists them all). idempotencyKey: only to create a deliberate second copy. Answers {id, partial: true, nextAction}. The same arguments within 5 minutes answer the same trip (no duplicate); pass a new idempotencyKey to create a deliberate second one.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let mut input = object(call.args, "settings", SETTINGS_EXAMPLE, "create_trip")?;
    if let Some(url) = call.args.get("sourceUrl") {
        input.insert("sourceUrl".into(), url.clone());
    }
    if let Some(plan) = plan_of(call) {
        input.insert("plan".into(), plan);
    }
    // Derived idempotency: the same user, tool and canonical arguments within one 5-minute
    // window answer the same trip, so an agent's retry never creates a duplicate.
    let window = Utc::now().timestamp() / 300;
    let deliberate = call
        .args
        .get("idempotencyKey")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let key = canonical_digest(&[
        &json!(call.caller.principal.user_id.to_string()),
        &json!("create_trip"),
        &Value::Object(input.clone()),
        &json!(window),
        &json!(deliberate),
    ]);
    let created = call
        .state
        .trips()
        .create(call.caller, &input, Some(&key[..32]))
        .await
        .map_err(refusal(None))?;
    Ok(json!({
        "id": created.trip.id,
        "partial": created.trip.partial,
        "result": if created.replayed { "This trip was already created by the same call moments ago." } else { "Trip created; its days are being computed." },
        "nextAction": format!("Call get_trip with id {}. The days appear once the route is fetched and paced, usually within seconds; until then partial is true. Tell the user you are waiting rather than polling in a tight loop.", created.trip.id),
    }))
}
