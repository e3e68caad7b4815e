//! The arguments the catalogue's tools share or nest: ids, version, the confirmation token,
//! the settings objects (from the domain crate's own ranges, so the published schema and the
//! rule that refuses a value cannot drift) and the day edit's fields.

use etappe_domain::trip::plan::MAX_VIA;
use etappe_domain::trip::settings::{SettingField, TripSettings};

use serde::Serialize;
use serde_json::{Value, json};

use super::schema::{self, Detail, Field, Kind, field};
use crate::openapi::inputs;

/// One argument of a tool: its name, its type (ranges, enums and formats as schema
/// keywords, see [`schema`]), and a description only where those do not say it all.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    pub name: &'static str,
    pub kind: Kind,
    pub description: &'static str,
    pub required: bool,
    /// Whether `null` is accepted too (it clears the value).
    pub nullable: bool,
}

impl Arg {
    /// This argument's JSON Schema, as `tools/list` publishes it.
    pub fn schema(&self) -> Value {
        schema::render(self.kind, self.description, self.nullable)
    }
}

/// An argument as `etappe_help` explains it: its whole schema (every field of a
/// [`Kind::Named`] object typed, with its range and default).
impl Serialize for Arg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut schema =
            schema::render_at(Detail::Full, self.kind, self.description, self.nullable);
        if self.name == "settings" {
            with_defaults(&mut schema);
        }
        json!({"name": self.name, "required": self.required, "schema": schema}).serialize(s)
    }
}

/// Each setting's `default`, read from the domain's own defaults (what a trip created
/// without the setting gets), and its sentence from the one catalogue, which `tools/list`
/// has no room for.
fn with_defaults(schema: &mut Value) {
    let Ok(Value::Object(defaults)) = serde_json::to_value(TripSettings::default()) else {
        return;
    };
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if let Some(default) = defaults.get(name).filter(|d| !d.is_null()) {
            property["default"] = default.clone();
        }
        let about = SettingField::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .map(|f| inputs::setting(f).about)
            .unwrap_or_default();
        if !about.is_empty() {
            property["description"] = json!(about);
        }
    }
}

pub(super) const fn arg(name: &'static str, kind: Kind, description: &'static str) -> Arg {
    Arg {
        name,
        kind,
        description,
        required: false,
        nullable: false,
    }
}

pub(super) const fn required(name: &'static str, kind: Kind, description: &'static str) -> Arg {
    Arg {
        name,
        kind,
        description,
        required: true,
        nullable: false,
    }
}

/// An optional argument of a field's kind, unit and nullability.
pub(super) const fn as_arg(field: Field) -> Arg {
    Arg {
        name: field.name,
        kind: field.kind,
        description: field.description,
        required: false,
        nullable: field.nullable,
    }
}

/// Ids are plain strings: a malformed one is answered like a missing one.
const ID: Kind = Kind::Text { min: 0, max: 0 };
pub(super) const TRIP_ID: Arg = required("id", ID, "");
pub(super) const TRIP_ID_AS_TRIP: Arg = required("tripId", ID, "");
pub(super) const STAGE_ID: Arg = required("stageId", ID, "");
pub(super) const VERSION: Arg = required("version", Kind::at_least(0), "");
/// The token of a confirmation challenge (its name says it; each tool's help says when).
pub(super) const TOKEN: Arg = arg("confirmationToken", Kind::Text { min: 0, max: 0 }, "");

/// A setting as the agent surface types it: the one description of it (`openapi::inputs`),
/// with its unit as its only words.
const fn setting(which: SettingField) -> Field {
    inputs::setting(which).field
}

/// The title where tokens are tight (`create_trip`): without length keywords, the domain
/// refuses an empty or overlong one by name; `etappe_help` and the settings tool give them.
const TITLE_UNBOUNDED: Field = field("title", Kind::Text { min: 0, max: 0 }, "");
const fn date(name: &'static str, nullable: bool) -> Field {
    field(name, Kind::Date { nullable }, "")
}

/// The settings an agent gives when it creates a trip: what most trips are planned with.
/// The others are one `update_trip_settings` call away, so `create_trip` does not carry all
/// twelve in every conversation's `tools/list`.
pub(super) const CREATE_SETTINGS: [Field; 6] = [
    TITLE_UNBOUNDED,
    date("startDate", false),
    date("endDate", false),
    setting(SettingField::MaxDistancePerDay),
    // On a creation `null` is "left out": nothing to clear, so not published.
    Field {
        nullable: false,
        ..setting(SettingField::Days)
    },
    setting(SettingField::Nights),
];

/// The order `update_trip_settings` publishes the settings in: what a rider sets first.
/// Every setting once (a test holds it to the domain's list).
const SETTINGS_ORDER: [SettingField; 12] = [
    SettingField::Title,
    SettingField::StartDate,
    SettingField::EndDate,
    SettingField::MaxDistancePerDay,
    SettingField::AverageSpeed,
    SettingField::FatigueFactor,
    SettingField::ElevationPenalty,
    SettingField::DepartureHour,
    SettingField::EbikeMode,
    SettingField::EnabledAccommodationTypes,
    SettingField::Nights,
    SettingField::Days,
];

/// Every setting, as `update_trip_settings` takes them (it asks to confirm only the changes
/// that re-cut the days: the domain's `Invalidation::repace`). Published by name in
/// `tools/list` ([`Kind::Named`]): twelve typed settings with their ranges would take about
/// 245 of the tool's 260 tokens; `etappe_help` types each one, with its range and default.
pub(super) const ALL_SETTINGS: [Field; 12] = {
    let mut all = [TITLE_UNBOUNDED; 12];
    let mut i = 0;
    while i < SETTINGS_ORDER.len() {
        all[i] = setting(SETTINGS_ORDER[i]);
        i += 1;
    }
    all
};

/// A plan's places, flat beside the other arguments: a name or `"lat,lon"` each. No length
/// keywords, and `via`'s `maxItems` in `etappe_help` only: they cost 22 tokens of
/// create_trip's 260, and the domain refuses an empty or 200+ character place, or more than
/// `MAX_VIA` via places, by name.
const PLACE: Kind = Kind::Text { min: 0, max: 0 };
const PLAN_ARGS: [Arg; 4] = [
    arg("from", PLACE, "Place name or lat,lon"),
    arg("to", PLACE, ""),
    arg(
        "via",
        Kind::List {
            max: MAX_VIA as u32,
        },
        "",
    ),
    as_arg(inputs::PLAN_PROFILE.0),
];

pub(super) const CREATE_ARGS: [Arg; 7] = [
    as_arg(inputs::SOURCE_URL.0),
    PLAN_ARGS[0],
    PLAN_ARGS[1],
    PLAN_ARGS[2],
    PLAN_ARGS[3],
    arg("settings", Kind::Object(&CREATE_SETTINGS), ""),
    arg("idempotencyKey", Kind::Text { min: 0, max: 0 }, ""),
];

/// A planned trip's places and profile change with the settings (a failed place is fixed in
/// place, not by a new trip).
pub(super) const UPDATE_ARGS: [Arg; 9] = [
    TRIP_ID,
    VERSION,
    TOKEN,
    arg("settings", Kind::Named(&ALL_SETTINGS), ""),
    arg("from", PLACE, ""),
    PLAN_ARGS[1],
    PLAN_ARGS[2],
    PLAN_ARGS[3],
    arg("restoreVersion", Kind::at_least(1), ""),
];

/// The names of the plan arguments, gathered into one `plan` for the service.
pub(super) const PLAN_FIELDS: [&str; 4] = ["from", "to", "via", "profile"];

/// The actions of `edit_stages`.
pub const EDIT_ACTIONS: &[&str] = &["add", "update", "move", "delete", "merge_next", "rest_day"];

/// The fields of a day edit, each read by some actions (the tool's description says which):
/// flat arguments beside `action` (a `oneOf` per action would cost about 120 tokens more in
/// every conversation, a nested object about 20).
pub(super) const EDIT_ARGS: [Arg; 9] = [
    TRIP_ID_AS_TRIP,
    required("action", Kind::OneOf(EDIT_ACTIONS), ""),
    VERSION,
    STAGE_ID,
    as_arg(inputs::DAY_END_FIELDS[0].0),
    as_arg(inputs::DAY_END_FIELDS[1].0),
    as_arg(inputs::DAY_END_FIELDS[2].0),
    as_arg(inputs::TO_INDEX),
    TOKEN,
];

/// The names of the edit's fields, handed to the service as the change.
pub(super) const EDIT_FIELDS: [&str; 4] = ["distance", "endPoint", "label", "toIndex"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_published_once() {
        let mut published: Vec<&str> = ALL_SETTINGS.iter().map(|f| f.name).collect();
        let mut domain: Vec<&str> = SettingField::ALL.iter().map(|f| f.name()).collect();
        published.sort_unstable();
        domain.sort_unstable();
        assert_eq!(published, domain);
    }
}
