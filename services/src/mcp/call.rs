//! One tool call as the handlers see it: the caller, the arguments and the request, and the
//! readers that turn an argument into a value or a refusal naming it. Shared by the handlers
//! (`tools`) and the confirmation guard (`confirm`), so neither imports the other.

use std::future::Future;
use std::pin::Pin;

use etappe_domain::ids::TripId;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::arguments::PLAN_FIELDS;
use super::guard::Guards;
use super::refusal::ToolError;
use etappe_app::trips::canonical_digest;
use etappe_app::views::TripDetail;
use etappe_app::{App, AppError, Caller};

/// One call's inputs.
#[derive(Debug)]
pub struct Call<'a> {
    pub(crate) state: &'a App,
    pub(crate) guards: &'a Guards,
    /// Who calls (the token's principal) and the request's id and trace, as the edge
    /// middleware set them for every transport.
    pub(crate) caller: &'a Caller,
    pub(crate) client: &'a str,
    pub(crate) args: &'a Map<String, Value>,
    /// The HTTP request's headers (the Host that share links are built on).
    pub(crate) headers: &'a axum::http::HeaderMap,
}

/// What a tool answers: its `structuredContent`, or why it did nothing.
pub type Answer = Result<Value, ToolError>;
/// A running tool call.
pub type Run<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;
/// A tool's handler, as the catalogue names it.
pub type Handler = for<'a, 'b> fn(&'a Call<'b>) -> Run<'a>;

/// A refusal of a service about trip `trip`, for `map_err`.
pub(super) fn refusal(trip: Option<&str>) -> impl FnOnce(AppError) -> ToolError + '_ {
    move |error| ToolError::service(error, trip)
}

pub(super) fn string<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, ToolError> {
    args.get(name).and_then(Value::as_str).ok_or_else(|| {
        ToolError::Argument(format!("{name} is required (a string). See etappe_help."))
    })
}

/// An optional whole number in `1..=max`, `default` when absent.
pub(super) fn count(
    args: &Map<String, Value>,
    name: &str,
    default: u32,
    max: u32,
) -> Result<u32, ToolError> {
    match args.get(name) {
        None => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                ToolError::Argument(format!("{name} must be a whole number from 1 to {max}."))
            }),
    }
}

/// A trip named by the caller: the parsed id, and the text it sent (quoted back).
pub(super) struct TripRef {
    pub(super) id: TripId,
    pub(super) raw: String,
}

impl TripRef {
    pub(super) fn read(args: &Map<String, Value>, name: &str) -> Result<Self, ToolError> {
        let raw = string(args, name)?;
        match raw.parse::<TripId>() {
            Ok(id) => Ok(Self {
                id,
                raw: raw.to_owned(),
            }),
            // A malformed id is a missing trip, like any other.
            Err(_) => Err(ToolError::service(AppError::NotFound, Some(raw))),
        }
    }
}

/// A day of a trip.
pub(super) struct StageRef {
    pub(super) trip: TripRef,
    pub(super) stage: Uuid,
}

impl StageRef {
    pub(super) fn read(args: &Map<String, Value>) -> Result<Self, ToolError> {
        let trip = TripRef::read(args, "tripId")?;
        let stage = Uuid::parse_str(string(args, "stageId")?)
            .map_err(|_| ToolError::service(AppError::StageNotFound, Some(&trip.raw)))?;
        Ok(Self { trip, stage })
    }
}

/// `version`: required, a number; `*` and anything else refused.
pub(super) fn version(args: &Map<String, Value>) -> Result<u64, ToolError> {
    match args.get("version") {
        Some(v) if v.is_u64() => Ok(v.as_u64().unwrap_or_default()),
        Some(Value::String(s)) if s.trim() == "*" => Err(ToolError::Argument(
            "version \"*\" is not accepted: pass the number read from get_trip, so a change made meanwhile is not overwritten.".to_owned(),
        )),
        Some(other) => Err(ToolError::Argument(format!(
            "version must be the whole number read from get_trip; got {}.",
            etappe_domain::trip::input::describe(other)
        ))),
        None => Err(ToolError::Argument(
            "This tool requires a \"version\" argument: the trip's version from get_trip."
                .to_owned(),
        )),
    }
}

/// An object argument's entries (none when absent or null).
pub(super) fn object(
    args: &Map<String, Value>,
    name: &str,
    example: &str,
    tool: &str,
) -> Result<Map<String, Value>, ToolError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(_) => Err(ToolError::Argument(format!(
            "{name} must be an object such as {example}. See etappe_help {{\"topic\":\"{tool}\"}}."
        ))),
    }
}

/// The arguments without the named control arguments, for binding and service input.
pub(super) fn without(args: &Map<String, Value>, names: &[&str]) -> Map<String, Value> {
    args.iter()
        .filter(|(k, _)| !names.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

pub(super) fn written(detail: &TripDetail, result: &str, next: &str) -> Value {
    if detail.also_changed.is_empty() {
        return json!({"result": result, "version": detail.version, "partial": detail.partial, "nextAction": next});
    }
    // What the change did beyond what was asked: the person must hear it, not only the agent.
    let said: Vec<&str> = detail
        .also_changed
        .iter()
        .map(|c| c.message.as_str())
        .collect();
    json!({
        "result": result,
        "version": detail.version,
        "partial": detail.partial,
        "alsoChanged": said,
        "nextAction": format!("Tell the user what else changed: {}. Then: {next}", said.join("; ")),
    })
}

/// The binding of a call: user, client, tool and canonical arguments.
pub(super) fn binding(call: &Call<'_>, tool: &str, args: &Map<String, Value>) -> String {
    canonical_digest(&[
        &json!(call.caller.principal.user_id.to_string()),
        &json!(call.client),
        &json!(tool),
        &Value::Object(args.clone()),
    ])
}

/// The example a refused `settings` argument shows.
pub(super) const SETTINGS_EXAMPLE: &str = "{\"maxDistancePerDay\": 60}";

/// The plan arguments (`from`, `to`, `via`, `profile`) gathered into the service's one
/// `plan` object, when any is given.
pub(super) fn plan_of(call: &Call<'_>) -> Option<Value> {
    let plan: Map<String, Value> = PLAN_FIELDS
        .iter()
        .filter_map(|&name| call.args.get(name).map(|v| (name.to_owned(), v.clone())))
        .filter(|(_, v)| !v.is_null())
        .collect();
    (!plan.is_empty()).then_some(Value::Object(plan))
}
