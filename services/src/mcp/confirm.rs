//! Confirmation by token for the tools that cannot be undone (update_trip_settings,
//! unshare_trip, delete_trip). The guard itself is the service's (`app::confirmation`): it
//! runs after the lock, the version and the values, so nobody is sent to confirm a call that
//! would be refused anyway. This module only says how an agent confirms: a call without a
//! `confirmationToken` writes nothing and answers the impact with a token; the same call with
//! the token does it.
//!
//! What it guarantees is exactly this: an impact summary was put in the transcript, and the
//! arguments did not move between the two calls (the token is random, single use, five
//! minutes, and bound to the user, the client, the tool and the canonical arguments). The
//! same agent makes both calls: it is a guard against a mis-parameterised change, not against
//! a hostile agent.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Value, json};

use super::call::{Call, binding, without};
use super::guard::{CONFIRMATION_TTL, Guards};
use super::refusal::ToolError;
use etappe_app::AppError;
use etappe_app::confirmation::{Confirm, Verdict};

/// An agent's confirmation: the token it sent (if any), bound to this exact call.
pub(super) struct TokenConfirmation<'a> {
    guards: &'a Guards,
    token: Option<String>,
    bound: String,
    tool: &'static str,
}

impl<'a> TokenConfirmation<'a> {
    /// The confirmation `call` of `tool` carries.
    pub(super) fn of(call: &'a Call<'_>, tool: &'static str) -> Self {
        Self {
            guards: call.guards,
            token: call
                .args
                .get("confirmationToken")
                .and_then(Value::as_str)
                .map(str::to_owned),
            bound: binding(call, tool, &without(call.args, &["confirmationToken"])),
            tool,
        }
    }

    /// What the tool answers when the service refused: a challenge with a fresh token when it
    /// needs confirming, the refusal otherwise.
    pub(super) async fn answer(
        &self,
        error: AppError,
        trip: &str,
        action: &str,
    ) -> Result<Value, ToolError> {
        match error {
            AppError::ConfirmationRequired(impact) => Ok(json!({
                "result": "Nothing was changed: this needs confirming.",
                "confirmationRequired": true,
                "confirmationToken": self.guards.mint(&self.bound).await,
                "action": action,
                "impact": *impact,
                "expiresInSeconds": CONFIRMATION_TTL.as_secs(),
                "nextAction": format!("Show the impact to the user; if they agree, call {} again with the same arguments and this confirmationToken.", self.tool),
            })),
            AppError::ConfirmationInvalid => Err(ToolError::Refused(format!(
                "This confirmationToken is not valid for this call: it was minted for different arguments, has already been used, or has expired. Call {} again without a token to get a new one.",
                self.tool
            ))),
            other => Err(ToolError::service(other, Some(trip))),
        }
    }
}

impl Confirm for TokenConfirmation<'_> {
    fn verdict(&self) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        Box::pin(async move {
            match &self.token {
                None => Verdict::Ask,
                Some(token) if self.guards.redeem(token, &self.bound).await => Verdict::Confirmed,
                Some(_) => Verdict::Invalid,
            }
        })
    }
}
