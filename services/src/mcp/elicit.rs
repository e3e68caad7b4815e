//! Confirmations asked of the human, where the client can ask: a client of 2026-07-28 that
//! declares form elicitation gets the confirmation challenge as an `input_required` result
//! (MRTR) carrying a yes/no form, instead of a token for the agent to pass back. Its client
//! shows the form to the person, then retries the same call with the answer.
//!
//! The `requestState` is the confirmation token itself: random, single use, five minutes,
//! kept server-side (Redis when configured) and bound to the user, the client and the exact
//! arguments, so an echoed state proves nothing the guards do not check again. Older
//! clients, and clients that cannot elicit, keep the token flow: a stateless server cannot
//! send them a request in the middle of a call.

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest, InputRequests, InputRequiredResult,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// The key of the confirmation form in `inputRequests` / `inputResponses`.
pub(super) const CONFIRM_KEY: &str = "confirm";

/// Whether this call's client takes an `input_required` result with a form.
pub(super) fn client_can_elicit(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    // An empty elicitation capability means form mode (the only mode before URL mode).
    let form = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    modern && form
}

/// What the person answered to the confirmation form of a retried call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Answer {
    /// They confirmed: the token in `requestState` may be redeemed.
    Confirmed(String),
    /// They declined, cancelled or answered no: nothing may change.
    Refused(String),
}

/// The answer carried by a retried call, if it is one.
pub(super) fn answer(
    request_state: Option<&str>,
    responses: Option<&rmcp::model::InputResponses>,
) -> Option<Answer> {
    let token = request_state?.to_owned();
    let response = responses.and_then(|r| r.get(CONFIRM_KEY));
    let confirmed = response.is_some_and(|r| {
        r["action"] == json!("accept") && r["content"][CONFIRM_KEY] == json!(true)
    });
    Some(if confirmed {
        Answer::Confirmed(token)
    } else {
        Answer::Refused(token)
    })
}

/// The form asking the person to confirm `challenge` (a confirmation challenge answered by a
/// tool), or `None` when the challenge is not one.
pub(super) fn confirmation_form(challenge: &Value) -> Option<InputRequiredResult> {
    if challenge["confirmationRequired"] != json!(true) {
        return None;
    }
    let token = challenge["confirmationToken"].as_str()?.to_owned();
    let impact = &challenge["impact"];
    // The title is the rider's or a third party's text: quoted, control characters gone.
    let title = impact["title"]
        .as_str()
        .map(|t| format!(" {}", etappe_domain::text::quote(t)))
        .unwrap_or_default();
    let days = impact["stageCount"].as_u64().unwrap_or(0);
    let dates = match (impact["startDate"].as_str(), impact["endDate"].as_str()) {
        (Some(start), Some(end)) => format!(", {start} to {end}"),
        (Some(start), None) => format!(", from {start}"),
        _ => String::new(),
    };
    let shared = if impact["hasActiveShareLink"] == json!(true) {
        " It has an active public link."
    } else {
        ""
    };
    let message = format!(
        "{} Trip{title} ({days} days{dates}).{shared} Go ahead?",
        challenge["action"].as_str().unwrap_or("Change the trip.")
    );
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            CONFIRM_KEY: {"type": "boolean", "title": "Go ahead", "description": "Yes to do it, no to leave the trip as it is"}
        },
        "required": [CONFIRM_KEY]
    }))
    .ok()?;
    let mut requests = InputRequests::new();
    requests.insert(
        CONFIRM_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            },
        )),
    );
    Some(InputRequiredResult::new(Some(requests), Some(token)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_becomes_a_yes_no_form_whose_state_is_the_token() {
        let challenge = json!({
            "confirmationRequired": true,
            "confirmationToken": "abc123",
            "action": "Delete the trip for good.",
            "impact": {"title": "Alps\u{7}", "stageCount": 5, "startDate": "2031-06-01",
                       "endDate": "2031-06-05", "hasActiveShareLink": true}
        });
        let form = confirmation_form(&challenge).expect("a form");
        assert_eq!(form.request_state.as_deref(), Some("abc123"));
        let wire = serde_json::to_value(&form).expect("json");
        let message = wire["inputRequests"][CONFIRM_KEY]["params"]["message"]
            .as_str()
            .expect("message");
        assert_eq!(
            message,
            "Delete the trip for good. Trip \"Alps\" (5 days, 2031-06-01 to 2031-06-05). It has an active public link. Go ahead?"
        );
        assert!(confirmation_form(&json!({"result": "done"})).is_none());
    }

    #[test]
    fn only_an_accepted_yes_confirms() {
        let yes = rmcp::model::InputResponses::from([(
            CONFIRM_KEY.to_owned(),
            json!({"action": "accept", "content": {"confirm": true}}),
        )]);
        let no = rmcp::model::InputResponses::from([(
            CONFIRM_KEY.to_owned(),
            json!({"action": "accept", "content": {"confirm": false}}),
        )]);
        let declined = rmcp::model::InputResponses::from([(
            CONFIRM_KEY.to_owned(),
            json!({"action": "decline"}),
        )]);
        assert_eq!(
            answer(Some("t"), Some(&yes)),
            Some(Answer::Confirmed("t".into()))
        );
        assert_eq!(
            answer(Some("t"), Some(&no)),
            Some(Answer::Refused("t".into()))
        );
        assert_eq!(
            answer(Some("t"), Some(&declined)),
            Some(Answer::Refused("t".into()))
        );
        assert_eq!(answer(Some("t"), None), Some(Answer::Refused("t".into())));
        assert_eq!(answer(None, Some(&yes)), None);
    }
}
