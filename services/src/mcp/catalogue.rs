//! The catalogue of the agent surface: what a tool declares ([`ToolSpec`], with its four
//! annotation [`Hints`]) and what is generated from the declarations — input schemas, the
//! server instructions and `etappe_help`. Each tool declares itself in its own module of
//! `tools`, which lists them ([`CATALOGUE`]); `tools/list`, `etappe_help`, the
//! `etappe://tools` resource and the instructions are all read off that list.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::arguments::arg;
pub use super::arguments::{Arg, EDIT_ACTIONS};
use super::call::{Call, Handler, Run};
use super::refusal::ToolError;
use super::schema::{Kind, outputs};
use etappe_app::identity::Scope;

/// One tool. Every hint is a plain `bool`: a tool cannot be declared without all four.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    /// What the model reads in `tools/list`: short, it is paid for in every conversation.
    pub description: &'static str,
    /// The annotation hints, from which the scope and the mutation budget follow.
    #[serde(flatten)]
    pub hints: Hints,
    /// What it answers when it succeeds (its `outputSchema`), one of [`outputs`]'s shapes.
    #[serde(skip)]
    pub output: fn() -> Value,
    pub args: &'static [Arg],
    /// The longer semantics, served by `etappe_help {topic}` only.
    pub help: &'static str,
    /// The handler: the catalogue is the dispatch table.
    #[serde(skip)]
    pub run: Handler,
}

/// MCP's four annotation hints of a tool. A tool that reads needs `trips:read` and spends
/// no mutation budget; any other needs `trips:write` and spends it: both follow from
/// `read_only`, so neither can disagree with it.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    /// Reads what the caller has, asks nothing outside.
    pub const READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Changes a trip; the same call twice leaves it as once; removes nothing; asks nothing
    /// outside. Tools that differ say how (`Hints { destructive: true, ..Hints::WRITE }`).
    pub const WRITE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// The scope a call needs.
    pub fn scope(&self) -> Scope {
        if self.read_only {
            Scope::TripsRead
        } else {
            Scope::TripsWrite
        }
    }

    /// Whether a call changes a trip (counted against the mutation budget).
    pub fn mutates(&self) -> bool {
        !self.read_only
    }
}

impl Serialize for Hints {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(6))?;
        map.serialize_entry("readOnly", &self.read_only)?;
        map.serialize_entry("destructive", &self.destructive)?;
        map.serialize_entry("idempotent", &self.idempotent)?;
        map.serialize_entry("openWorld", &self.open_world)?;
        map.serialize_entry("scope", self.scope().as_str())?;
        map.serialize_entry("mutates", &self.mutates())?;
        map.end()
    }
}

/// Every tool, in the order `tools/list` serves them: listed where the tools are.
pub use super::tools::CATALOGUE;

/// `etappe_help`: the catalogue's own tool.
pub(super) const HELP: ToolSpec = ToolSpec {
    name: "etappe_help",
    title: "Help",
    description: "The operation index, or one tool's values and semantics.",
    hints: Hints::READ,
    output: outputs::help,
    args: &[arg("topic", Kind::Text { min: 1, max: 64 }, "A tool name")],
    help: "No topic: every tool with its title. topic: that tool's arguments, accepted values and semantics.",
    run: etappe_help,
};

/// The entry of `name`.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    CATALOGUE.iter().find(|s| s.name == name)
}

/// A tool's input schema, generated from its arguments.
pub fn input_schema(spec: &ToolSpec) -> Map<String, Value> {
    let mut properties = Map::new();
    for a in spec.args {
        properties.insert(a.name.to_owned(), a.schema());
    }
    let required: Vec<&str> = spec
        .args
        .iter()
        .filter(|a| a.required)
        .map(|a| a.name)
        .collect();
    // No `additionalProperties: false`: an unknown argument is refused by name with the
    // accepted list (see `schema::object` for the tokens it saves).
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The server instructions: the workflow the descriptions do not carry.
pub fn instructions() -> String {
    let names = |read_only: bool| {
        CATALOGUE
            .iter()
            .filter(|s| s.hints.read_only == read_only)
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "Etappe plans multi-day bicycle trips, from a route link or from places (create_trip with from and to). create_trip returns at once: poll get_trip (after retryAfterMs) until partial is false, then get_stage for one day. Writes that change the days need the trip's version and answer the new one. delete_trip, unshare_trip and update_trip_settings when it re-cuts the days answer a confirmation token first. Read: {}. Write: {}. Unsure of a value: etappe_help.",
        names(true),
        names(false)
    )
}

/// `etappe_help`: the index, or one tool's entry.
pub fn help(topic: Option<&str>) -> Result<Value, String> {
    match topic.filter(|t| !t.trim().is_empty()) {
        None => Ok(json!({
            "topic": "index",
            "tools": CATALOGUE.iter().map(|s| json!({"name": s.name, "title": s.title, "readOnly": s.hints.read_only})).collect::<Vec<_>>(),
            "instructions": instructions(),
        })),
        Some(topic) => match spec(topic) {
            Some(s) => Ok(json!({
                "topic": s.name,
                "title": s.title,
                "scope": s.hints.scope().as_str(),
                "args": s.args,
                "semantics": s.help,
            })),
            None => Err(format!(
                "Unknown topic {}. Valid topics: {}.",
                etappe_domain::text::quote(topic),
                CATALOGUE
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
    }
}

/// `etappe_help`: the catalogue's own tool, so the handlers need not read the catalogue.
fn etappe_help<'a>(call: &'a Call<'_>) -> Run<'a> {
    let answer = help(call.args.get("topic").and_then(Value::as_str)).map_err(ToolError::Argument);
    Box::pin(std::future::ready(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_edit_actions_are_the_domains() {
        use etappe_domain::trip::edits::input::EDIT_ACTIONS as DOMAIN;
        let domain: Vec<&str> = DOMAIN.iter().map(|a| a.as_str()).collect();
        assert_eq!(domain, EDIT_ACTIONS);
    }
}
