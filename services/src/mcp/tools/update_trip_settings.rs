//! `update_trip_settings`: change trip settings. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use etappe_app::trips::BaseVersion;
use etappe_app::views::TripDetail;
use serde_json::Value;

use crate::mcp::arguments::UPDATE_ARGS;
use crate::mcp::call::{
    Answer, Call, SETTINGS_EXAMPLE, TripRef, object, plan_of, refusal, version, written,
};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::confirm::TokenConfirmation;
use crate::mcp::refusal::ToolError;
use crate::mcp::schema::outputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "update_trip_settings",
    title: "Change trip settings",
    description: "Change settings or a plan's places; restoreVersion undoes.",
    hints: Hints {
        destructive: true,
        idempotent: false,
        ..Hints::WRITE
    },
    output: outputs::confirmed,
    args: &UPDATE_ARGS,
    help: "settings: only those to change; args types each one with its range and default. startDate and endDate: null clears one; the number of days follows them. days: that many days without dates (null clears it; the dates win when both are set). maxDistancePerDay caps a day's effort (km plus climbing over elevationPenalty). fatigueFactor: each day's limit is the previous one's times this. elevationPenalty: metres of climbing worth 1 km. enabledAccommodationTypes: in order of preference. nights: anywhere, or at_accommodation (each day ends at a place to sleep of those types near its planned end, chosen by Etappe; needs an OpenStreetMap source). A planned trip also takes from, to (a place name or lat,lon; an absent one keeps its place), via (the places to pass, replacing the old ones; [] for none) and profile: it is routed again, and a place that fails is fixed the same way. Dates, days, maxDistancePerDay, fatigueFactor, elevationPenalty, nights (and the types, with nights at_accommodation) and the plan re-cut the days: new day ids, chosen accommodations and manual splits gone (moving only the start date keeps them when no end date is set); once the user made something on the days (an edit, a detour, a night they chose, a name), such a call first writes nothing and answers the impact with a confirmationToken (single use, 5 minutes, bound to these exact arguments): call again with it. If the new route fails, the days before come back and get_trip's notice names the place. restoreVersion (alone, with version): the trip becomes what it was at that version (get_trip history lists them); a new version, undone by restoring again. The others apply at once, the days stay, what they affect is analysed again. Answers {result, version, partial, nextAction}. Guards: locked, then version, then confirmation.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
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
