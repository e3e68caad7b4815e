//! The arguments the catalogue's tools share or nest: ids, version, the confirmation token,
//! the settings object (from the domain crate's own ranges, so the published schema and the
//! rule that refuses a value cannot drift) and the stage edit's `change`.

use etappe_domain::trip::settings::{
    AVERAGE_SPEED, ELEVATION_PENALTY, FATIGUE_FACTOR, MAX_DISTANCE_PER_DAY, TITLE_MAX_CHARS,
};

use serde::Serialize;
use serde_json::{Value, json};

use super::schema::{self, Field, Kind, field};

/// One argument of a tool: its name, its type (ranges, enums and formats as schema
/// keywords, see [`schema`]), and a description only where those do not say it all.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    pub name: &'static str,
    pub kind: Kind,
    pub description: &'static str,
    pub required: bool,
}

impl Arg {
    /// This argument's JSON Schema.
    pub fn schema(&self) -> Value {
        schema::render(self.kind, self.description, false)
    }
}

impl Serialize for Arg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({"name": self.name, "required": self.required, "schema": self.schema()}).serialize(s)
    }
}

pub(super) const fn arg(name: &'static str, kind: Kind, description: &'static str) -> Arg {
    Arg {
        name,
        kind,
        description,
        required: false,
    }
}

pub(super) const fn required(name: &'static str, kind: Kind, description: &'static str) -> Arg {
    Arg {
        name,
        kind,
        description,
        required: true,
    }
}

/// Ids are plain strings: a malformed one is answered like a missing one.
const ID: Kind = Kind::Text { min: 0, max: 0 };
pub(super) const TRIP_ID: Arg = required("id", ID, "");
pub(super) const TRIP_ID_AS_TRIP: Arg = required("tripId", ID, "");
pub(super) const STAGE_ID: Arg = required("stageId", ID, "");
pub(super) const VERSION: Arg = required(
    "version",
    Kind::Integer {
        min: 0,
        max: i64::MAX,
    },
    "From get_trip",
);
pub(super) const TOKEN: Arg = arg(
    "confirmationToken",
    Kind::Text { min: 0, max: 0 },
    "From the first call",
);

/// The wire names of `AccommodationType::ALL` (a test holds them equal: `as_str` is not
/// `const`).
pub const ACCOMMODATION_TYPES: [&str; 7] = [
    "camp_site",
    "hostel",
    "alpine_hut",
    "chalet",
    "guest_house",
    "hotel",
    "wilderness_hut",
];

/// The settings, with the domain's ranges; `nullable_dates` where `null` clears a date.
const fn settings_fields(nullable_dates: bool) -> [Field; 10] {
    let date = Kind::Date {
        nullable: nullable_dates,
    };
    [
        field(
            "title",
            Kind::Text {
                min: 1,
                max: TITLE_MAX_CHARS as u32,
            },
            "",
        ),
        field("startDate", date, ""),
        field("endDate", date, ""),
        field(
            "maxDistancePerDay",
            Kind::Number(MAX_DISTANCE_PER_DAY),
            "km",
        ),
        field("averageSpeed", Kind::Number(AVERAGE_SPEED), "km/h"),
        field("fatigueFactor", Kind::Number(FATIGUE_FACTOR), ""),
        field(
            "elevationPenalty",
            Kind::Number(ELEVATION_PENALTY),
            "m climbed = 1 km",
        ),
        field("departureHour", Kind::Integer { min: 0, max: 23 }, ""),
        field("ebikeMode", Kind::Boolean, ""),
        field(
            "enabledAccommodationTypes",
            Kind::AnyOf(&ACCOMMODATION_TYPES),
            "",
        ),
    ]
}

const CREATE_SETTINGS: [Field; 10] = settings_fields(false);
const UPDATE_SETTINGS: [Field; 10] = settings_fields(true);

pub(super) const CREATE_ARGS: [Arg; 3] = [
    required(
        "sourceUrl",
        Kind::Format("uri"),
        "Komoot, Strava, RideWithGPS or GPX link",
    ),
    arg("settings", Kind::Object(&CREATE_SETTINGS), ""),
    arg(
        "idempotencyKey",
        Kind::Text { min: 0, max: 0 },
        "For a deliberate copy",
    ),
];

pub(super) const UPDATE_ARGS: [Arg; 4] = [
    TRIP_ID,
    VERSION,
    TOKEN,
    arg(
        "settings",
        Kind::Object(&UPDATE_SETTINGS),
        "null clears a date",
    ),
];

/// The actions of `edit_stages`.
pub const EDIT_ACTIONS: &[&str] = &["add", "update", "move", "delete", "rest_day"];

/// The fields of `edit_stages.change`, each naming the actions that read it: one flat object
/// (a `oneOf` per action would cost about 120 tokens more in every conversation).
const CHANGE_FIELDS: [Field; 4] = [
    field(
        "distance",
        Kind::Number(schema::POSITIVE),
        "add/update: km into the day",
    ),
    field("endPoint", Kind::Point, "add/update"),
    Field {
        name: "label",
        kind: Kind::Text { min: 1, max: 255 },
        description: "add/update",
        nullable: true,
    },
    field(
        "toIndex",
        Kind::Integer {
            min: 0,
            max: i64::MAX,
        },
        "move",
    ),
];

pub(super) const EDIT_ARGS: [Arg; 5] = [
    TRIP_ID_AS_TRIP,
    required("action", Kind::OneOf(EDIT_ACTIONS), ""),
    VERSION,
    STAGE_ID,
    arg(
        "change",
        Kind::Object(&CHANGE_FIELDS),
        "delete, rest_day: none",
    ),
];
