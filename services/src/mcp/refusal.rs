//! The one error type of the agent surface, and the one mapping of it to a tool result: every
//! refusal, whichever guard or service it comes from, answers `isError: true` with the same
//! `structuredContent` shape (`schema::error_schema`: a message an agent can act on, plus the
//! upstream, failure and retryability when an upstream failed) and the same text.

use etappe_domain::text::quote;
use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::{Value, json};

use etappe_app::AppError;

/// Why a tool call did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The application service refused; `trip` is the id the caller named, if any.
    #[error("{}", service_message(.error, .trip.as_deref()))]
    Service {
        error: AppError,
        trip: Option<String>,
    },
    /// An argument is missing, of the wrong type or out of range (the message names it).
    #[error("{0}")]
    Argument(String),
    /// A guard in front of the tool: an unknown argument, a missing scope, a spent budget, a
    /// confirmation that does not hold.
    #[error("{0}")]
    Refused(String),
}

impl ToolError {
    /// A service refusal about trip `trip`.
    pub fn service(error: AppError, trip: Option<&str>) -> Self {
        Self::Service {
            error,
            trip: trip.map(str::to_owned),
        }
    }

    /// The `structuredContent` of this refusal.
    pub fn structured(&self) -> Value {
        let mut value = json!({"error": self.to_string()});
        if let Self::Service {
            error: AppError::Upstream(failure),
            ..
        } = self
        {
            value["upstream"] = json!(failure.upstream);
            value["failure"] = json!(failure.failure);
            value["retryable"] = json!(failure.retryable);
        }
        value
    }

    /// The tool result answering this refusal.
    pub fn into_response(self) -> CallToolResponse {
        CallToolResult::structured_error(self.structured()).into()
    }
}

/// The messages of service refusals: what happened and what to call instead.
fn service_message(error: &AppError, trip: Option<&str>) -> String {
    let trip = trip.map(quote).unwrap_or_default();
    match error {
        AppError::NotFound => format!("Trip {trip} not found. Call list_trips for your trip ids."),
        AppError::StageNotFound => {
            format!("No day with this stageId in trip {trip}. Read the stage ids from get_trip.")
        }
        AppError::StaleVersion { expected, current } => format!(
            "Trip {trip} has moved on: you edited version {expected}, the current one is {current}. Reload it and reapply your change."
        ),
        AppError::Locked => format!(
            "Trip {trip} is locked: its start date is today or past. Days, settings and analysis can no longer change; delete and share still work."
        ),
        AppError::NotReady => {
            format!("Trip {trip} has no days yet. Call get_trip until partial is false.")
        }
        AppError::Input(input) => format!("{input}. See etappe_help."),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_has_the_same_shape() {
        for error in [
            ToolError::Refused("Unknown argument \"x\"".into()),
            ToolError::Argument("version must be a whole number".into()),
            ToolError::service(AppError::NotFound, Some("abc")),
        ] {
            let value = error.structured();
            assert!(value["error"].is_string(), "{value}");
            assert_eq!(value.as_object().map(|o| o.len()), Some(1), "{value}");
        }
        assert_eq!(
            ToolError::service(AppError::NotFound, Some("abc")).to_string(),
            "Trip \"abc\" not found. Call list_trips for your trip ids."
        );
    }
}
