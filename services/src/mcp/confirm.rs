//! Confirmation by token, as a guard behind the lock and the version: a call to a tool that
//! cannot be undone (update_trip_settings, unshare_trip, delete_trip) without a
//! `confirmationToken` writes nothing and answers the impact with a token; the same call with
//! the token does it. The order is lock, then version, then confirmation, so nobody is sent
//! to confirm a call that would be refused anyway.
//!
//! What it guarantees is exactly this: an impact summary was put in the transcript, and the
//! arguments did not move between the two calls (the token is random, single use, five
//! minutes, and bound to the user, the client, the tool and the canonical arguments). The
//! same agent makes both calls: it is a guard against a mis-parameterised change, not against
//! a hostile agent.

use serde_json::{Value, json};

use super::call::{Call, TripRef, binding, without};
use super::guard::CONFIRMATION_TTL;
use super::refusal::ToolError;
use crate::app::AppError;

/// What the guard decided.
#[derive(Debug)]
pub(super) enum Confirmation {
    /// The token holds: go ahead.
    Confirmed,
    /// No token: answer this challenge, and write nothing.
    Challenge(Value),
}

/// Lock (for `update_trip_settings`), then `expected` version, then the token.
pub(super) async fn confirm_or_challenge(
    call: &Call<'_>,
    tool: &str,
    trip: &TripRef,
    expected: Option<u64>,
    action: &str,
) -> Result<Confirmation, ToolError> {
    let refused = |error| ToolError::service(error, Some(&trip.raw));
    // One read serves the three checks and the impact summary (its share link included).
    let view = call
        .state
        .trips
        .detail_with_share(call.principal, trip.id)
        .await
        .map_err(refused)?;
    let (detail, shared) = (view.0, view.1.is_some());
    if tool == "update_trip_settings" && detail.is_locked {
        return Err(refused(AppError::Locked));
    }
    if let Some(expected) = expected
        && expected != detail.version
    {
        return Err(refused(AppError::StaleVersion {
            expected,
            current: detail.version,
        }));
    }
    let bound = binding(call, tool, &without(call.args, &["confirmationToken"]));
    match call.args.get("confirmationToken").and_then(Value::as_str) {
        Some(token) if call.guards.redeem(token, &bound).await => Ok(Confirmation::Confirmed),
        Some(_) => Err(ToolError::Refused(format!(
            "This confirmationToken is not valid for this call: it was minted for different arguments, has already been used, or has expired. Call {tool} again without a token to get a new one."
        ))),
        None => Ok(Confirmation::Challenge(json!({
            "result": "Nothing was changed: this needs confirming.",
            "confirmationRequired": true,
            "confirmationToken": call.guards.mint(&bound).await,
            "action": action,
            "impact": {
                "tripId": detail.id,
                "title": detail.title,
                "stageCount": detail.stage_count,
                "startDate": detail.start_date,
                "endDate": detail.end_date,
                "hasActiveShareLink": shared,
            },
            "expiresInSeconds": CONFIRMATION_TTL.as_secs(),
            "nextAction": format!("Show the impact to the user; if they agree, call {tool} again with the same arguments and this confirmationToken."),
        }))),
    }
}
