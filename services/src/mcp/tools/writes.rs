//! The tools that change a trip: each reads its typed arguments, calls the service its REST
//! twin calls, and answers the new `version` with a `nextAction`.

use chrono::Utc;
use etappe_domain::text::quote;
use etappe_domain::trip::edits::input::parse_action;
use serde_json::{Map, Value, json};

use crate::mcp::arguments::{EDIT_FIELDS, PLAN_FIELDS};
use crate::mcp::call::{
    Answer, Call, StageRef, TripRef, object, refusal, string, version, without, written,
};
use crate::mcp::confirm::TokenConfirmation;
use crate::mcp::refusal::ToolError;
use etappe_app::trips::{BaseVersion, canonical_digest};
use etappe_app::views::TripDetail;

const SETTINGS_EXAMPLE: &str = "{\"maxDistancePerDay\": 60}";

/// The plan arguments (`from`, `to`, `via`, `profile`) gathered into the service's one
/// `plan` object, when any is given.
fn plan_of(call: &Call<'_>) -> Option<Value> {
    let plan: Map<String, Value> = PLAN_FIELDS
        .iter()
        .filter_map(|&name| call.args.get(name).map(|v| (name.to_owned(), v.clone())))
        .filter(|(_, v)| !v.is_null())
        .collect();
    (!plan.is_empty()).then_some(Value::Object(plan))
}

pub(super) async fn create_trip(call: &Call<'_>) -> Answer {
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

pub(super) async fn update_trip_settings(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "id")?;
    let expected = version(call.args)?;
    if let Some(past) = call.args.get("restoreVersion").filter(|v| !v.is_null()) {
        return restore_version(call, &trip, expected, past).await;
    }
    let mut patch = object(
        call.args,
        "settings",
        SETTINGS_EXAMPLE,
        "update_trip_settings",
    )?;
    if let Some(plan) = plan_of(call) {
        patch.insert("plan".into(), plan);
    }
    let confirmation = TokenConfirmation::of(call, "update_trip_settings");
    let updated = call
        .state
        .trips()
        .update_settings(
            call.caller,
            trip.id,
            &patch,
            Some(BaseVersion::Exact(expected)),
            &confirmation,
        )
        .await;
    match updated {
        Ok((detail, changed)) => Ok(settings_changed(&detail, changed, &trip.raw)),
        Err(error) => {
            confirmation
                .answer(
                    error,
                    &trip.raw,
                    "Change the trip's settings; this re-cuts the days (new day ids; chosen accommodations and manual splits are gone).",
                )
                .await
        }
    }
}

/// Undo: the trip made what it was at version `past` (a new version; restoring the one
/// before undoes it again). Alone: settings or a plan beside it are refused.
async fn restore_version(call: &Call<'_>, trip: &TripRef, expected: u64, past: &Value) -> Answer {
    let Some(past) = past.as_u64() else {
        return Err(ToolError::Argument(
            "restoreVersion must be a version number (get_trip with history lists them).".into(),
        ));
    };
    if ["settings", "from", "to", "via", "profile"]
        .iter()
        .any(|name| call.args.get(*name).is_some_and(|v| !v.is_null()))
    {
        return Err(ToolError::Argument(
            "restoreVersion goes alone: restore first, then change settings with the version it answers.".into(),
        ));
    }
    let detail = call
        .state
        .trips()
        .restore(
            call.caller,
            trip.id,
            past,
            Some(BaseVersion::Exact(expected)),
        )
        .await
        .map_err(refusal(Some(&trip.raw)))?;
    if detail.version == expected {
        return Ok(written(
            &detail,
            "Nothing changed: that version is the current one (or a later one).",
            "The version did not move; keep using it.",
        ));
    }
    Ok(written(
        &detail,
        &format!(
            "Version {past} restored: its days, settings and plan are back, as version {}.",
            detail.version
        ),
        &format!(
            "Tell the user. To undo this, call update_trip_settings with restoreVersion {expected}. The analysis runs again (partial until it ends)."
        ),
    ))
}

/// What a settings change did: nothing, a re-analysis, or new days.
fn settings_changed(detail: &TripDetail, changed: bool, trip: &str) -> Value {
    if !changed {
        written(
            detail,
            "Nothing changed: the settings already had these values.",
            "The version did not move; keep using it.",
        )
    } else if !detail.stages.is_empty() {
        // The days are still there: only what the change affects is analysed again (partial
        // stays true until that analysis has ended).
        written(
            detail,
            "Settings changed: the days stay as they are; what the change affects, if anything, is analysed again.",
            "Pass the version above to the next write; get_trip shows the analysis in categoryStatus (partial until it has ended).",
        )
    } else {
        written(
            detail,
            "Settings changed: the days are being recomputed (new day ids; chosen accommodations are gone).",
            &format!(
                "Call get_trip with id {trip} shortly; partial is true until the new days exist. If the new route fails, the days you had come back and get_trip's notice says which place failed. The version above stays good for your next write."
            ),
        )
    }
}

pub(super) async fn edit_stages(call: &Call<'_>) -> Answer {
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

pub(super) async fn add_waypoint(call: &Call<'_>) -> Answer {
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

pub(super) async fn choose_accommodation(call: &Call<'_>) -> Answer {
    let day = StageRef::read(call.args)?;
    let expected = version(call.args)?;
    let input = without(
        call.args,
        &["tripId", "stageId", "version", "confirmationToken"],
    );
    let clearing = input.is_empty();
    let confirmation = TokenConfirmation::of(call, "choose_accommodation");
    let chosen = call
        .state
        .trips()
        .choose_accommodation(
            call.caller,
            day.trip.id,
            day.stage,
            &input,
            Some(BaseVersion::Exact(expected)),
            &confirmation,
        )
        .await;
    let detail = match chosen {
        Ok(detail) => detail,
        Err(error) => {
            return confirmation
                .answer(
                    error,
                    &day.trip.raw,
                    "Choose where to sleep; this removes something the user made (see impact.change).",
                )
                .await;
        }
    };
    Ok(written(
        &detail,
        if clearing {
            "Accommodation cleared."
        } else {
            "Accommodation chosen: the day now ends near it and the next day starts there."
        },
        "Call get_stage for this day to see the distances after the move.",
    ))
}

pub(super) async fn analyze_trip(call: &Call<'_>) -> Answer {
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

pub(super) async fn share_trip(call: &Call<'_>) -> Answer {
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

pub(super) async fn unshare_trip(call: &Call<'_>) -> Answer {
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

pub(super) async fn delete_trip(call: &Call<'_>) -> Answer {
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
