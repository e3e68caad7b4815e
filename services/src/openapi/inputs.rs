//! What each input field is, declared once for every transport: its kind (with the domain's
//! own range, limit or words), whether `null` is accepted, and its words at two lengths: the
//! unit an agent's `tools/list` carries in every conversation, and the sentence the OpenAPI
//! document and `etappe_help` give. The REST document renders a field strictly (patterns,
//! defaults, `null` in the type); the agent surface renders it lean (see `mcp::schema`). A
//! new setting does not compile until it is described here, once.

use etappe_domain::text::NAME_MAX_CHARS;
use etappe_domain::trip::edits::LABEL_MAX_CHARS;
use etappe_domain::trip::settings::{
    AVERAGE_SPEED, DAYS, DEPARTURE_HOUR, ELEVATION_PENALTY, FATIGUE_FACTOR, MAX_DISTANCE_PER_DAY,
    Range, SettingField, TITLE_MAX_CHARS,
};
use etappe_domain::trip::source::SOURCE_URL_MAX_CHARS;
use serde_json::{Value, json};

/// The type of an input field (or of a field of an object input).
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A string of `min..=max` characters (`max` 0: no maximum). With `min` 1 or more it must
    /// keep a visible character once control characters are removed and it is trimmed.
    Text {
        min: u32,
        max: u32,
    },
    /// A route's source link of at most `max` characters: `tools/list` gives its format
    /// (`uri`), the document the form every deployment accepts (https, a host name).
    SourceLink {
        max: u32,
    },
    /// A `YYYY-MM-DD` date; `nullable` where `null` clears it.
    Date {
        nullable: bool,
    },
    /// A whole number in `min..=max`.
    Integer {
        min: i64,
        max: i64,
    },
    /// A number in a domain range.
    Number(Range),
    Boolean,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// Any of these strings, each at most once.
    AnyOf(&'static [&'static str]),
    /// A list of at most `max` non-empty strings (`max` published by `etappe_help` only).
    List {
        max: u32,
    },
    /// `{lat, lon}`.
    Point,
    /// An object of exactly these fields (none required).
    Object(&'static [Field]),
    /// The same object, published by name only: `tools/list` names the fields (with the
    /// accepted values where they are words) and `etappe_help` gives each its full schema.
    /// For the one object too large to type in every conversation (`update_trip_settings`'
    /// twelve settings); the handler refuses a bad value by name and range all the same.
    Named(&'static [Field]),
}

impl Kind {
    /// A whole number in a domain range whose bounds are whole.
    pub const fn whole(range: Range) -> Self {
        Kind::Integer {
            min: range.min as i64,
            max: range.max as i64,
        }
    }

    /// A whole number of at least `min`, with no maximum of its own.
    pub const fn at_least(min: i64) -> Self {
        Kind::Integer { min, max: i64::MAX }
    }

    /// The fields of an object argument, however it is published.
    pub fn fields(self) -> Option<&'static [Field]> {
        match self {
            Kind::Object(fields) | Kind::Named(fields) => Some(fields),
            _ => None,
        }
    }
}

/// A field of an object input.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    /// Only where the name and the keywords do not say it all (a unit): what an agent's
    /// `tools/list` carries.
    pub description: &'static str,
    /// Whether `null` is accepted too (it clears the value).
    pub nullable: bool,
}

/// A field that is not nullable.
pub const fn field(name: &'static str, kind: Kind, description: &'static str) -> Field {
    Field {
        name,
        kind,
        description,
        nullable: false,
    }
}

/// Latitude, degrees.
pub const LAT: Range = Range {
    min: -90.0,
    max: 90.0,
    min_inclusive: true,
};
/// Longitude, degrees.
pub const LON: Range = Range {
    min: -180.0,
    max: 180.0,
    min_inclusive: true,
};
/// A positive number (no upper bound).
pub const POSITIVE: Range = Range {
    min: 0.0,
    max: f64::MAX,
    min_inclusive: false,
};

/// `{"type": "integer"}` with its bounds (`i64::MAX` is no upper bound worth publishing).
pub fn integer_keywords(min: i64, max: i64) -> Value {
    let mut s = json!({"type": "integer", "minimum": min});
    if max < i64::MAX {
        s["maximum"] = json!(max);
    }
    s
}

/// `{"type": "number"}` with `range`'s bounds, each written by `number` (the document keeps
/// the domain's decimals; the agent surface prints whole bounds as integers, fewer tokens).
pub fn number_keywords(range: Range, number: fn(f64) -> Value) -> Value {
    let mut s = json!({"type": "number"});
    let bound = if range.min_inclusive {
        "minimum"
    } else {
        "exclusiveMinimum"
    };
    s[bound] = number(range.min);
    if range.max < f64::MAX {
        s["maximum"] = number(range.max);
    }
    s
}

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

/// The wire names of the domain's `NightsMode::ALL` (a test holds them equal).
pub const NIGHTS_MODES: [&str; 2] = ["anywhere", "at_accommodation"];

/// The link a trip is made from (`create_trip`, `POST /trips`).
pub const SOURCE_URL: (Field, &str) = (
    field(
        "sourceUrl",
        Kind::SourceLink {
            max: SOURCE_URL_MAX_CHARS as u32,
        },
        "",
    ),
    "https link to a Komoot tour or collection, a Strava route, a RideWithGPS route or a GPX file (http only for hosts the operator allowed). Fixed for the trip's life.",
);

/// The wire names of the domain's `RideProfile::ALL` (a test holds them equal).
pub const PROFILES: [&str; 4] = ["touring", "road", "gravel", "mountain"];

/// How a plan's route is ridden.
pub const PLAN_PROFILE: (Field, &str) = (
    field("profile", Kind::OneOf(&PROFILES), ""),
    "How the route is ridden (default touring)",
);

/// One setting, as every transport describes it.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// Its wire name, kind, unit and whether `null` clears it on an update.
    pub field: Field,
    /// The sentence the OpenAPI document and `etappe_help` give it.
    pub about: &'static str,
}

/// A setting, by the domain's field list: the one place its kind and words are declared.
pub const fn setting(which: SettingField) -> Setting {
    let (kind, unit, nullable, about) = match which {
        SettingField::Title => (
            Kind::Text {
                min: 1,
                max: TITLE_MAX_CHARS as u32,
            },
            "",
            false,
            "The trip's name. Control characters are removed; it must keep one visible character.",
        ),
        SettingField::StartDate => (
            Kind::Date { nullable: true },
            "",
            false,
            "First day (YYYY-MM-DD), at most a year ago and at most ten years ahead. A trip whose start date is today or earlier (UTC) is locked.",
        ),
        SettingField::EndDate => (
            Kind::Date { nullable: true },
            "",
            false,
            "Last day (YYYY-MM-DD), after startDate. With both dates the trip has endDate − startDate + 1 days.",
        ),
        SettingField::FatigueFactor => (
            Kind::Number(FATIGUE_FACTOR),
            "",
            false,
            "Each day is this fraction of the day before.",
        ),
        SettingField::ElevationPenalty => (
            Kind::Number(ELEVATION_PENALTY),
            "m climbed = 1 km",
            false,
            "Metres of climbing that count as one kilometre.",
        ),
        SettingField::MaxDistancePerDay => (
            Kind::Number(MAX_DISTANCE_PER_DAY),
            "km",
            false,
            "Kilometres of effort, a hard cap per day: a day's distance plus its climbing over elevationPenalty (flat days ride exactly this far, hilly ones less).",
        ),
        SettingField::AverageSpeed => (
            Kind::Number(AVERAGE_SPEED),
            "km/h",
            false,
            "km/h, for arrival times.",
        ),
        SettingField::DepartureHour => (
            Kind::whole(DEPARTURE_HOUR),
            "",
            false,
            "Local hour the rider sets off.",
        ),
        SettingField::EbikeMode => (Kind::Boolean, "", false, ""),
        SettingField::EnabledAccommodationTypes => (
            Kind::AnyOf(&ACCOMMODATION_TYPES),
            "",
            false,
            "Which kinds of places to sleep a scan looks for, in order of preference (with nights at_accommodation the first type wins a tie). Default: all.",
        ),
        SettingField::Nights => (
            Kind::OneOf(&NIGHTS_MODES),
            "",
            false,
            "Where each day ends: anywhere (by distance and climbing), or at_accommodation (at a place to sleep of the enabled types near each day's planned end, chosen by Etappe; needs an OpenStreetMap source).",
        ),
        SettingField::Days => (
            Kind::whole(DAYS),
            "",
            true,
            "How many days, without dates (\"in 6 days\"): the route is cut into exactly that many. With both dates set, the dates decide; null lets maxDistancePerDay decide.",
        ),
    };
    Setting {
        field: Field {
            name: which.name(),
            kind,
            description: unit,
            nullable,
        },
        about,
    }
}

/// Where a rest day moves to (`edit_stages` move, `PATCH …/move`): a 0-based position.
pub const TO_INDEX: Field = field("toIndex", Kind::at_least(0), "");

/// The point a detour goes through (`add_waypoint`, `POST …/poi-waypoint`).
pub const WAYPOINT_FIELDS: [Field; 2] = [
    field("waypointLat", Kind::Number(LAT), ""),
    field("waypointLon", Kind::Number(LON), ""),
];

/// The name of a place to sleep the rider gives of their own (with its coordinates).
pub const OWN_PLACE_NAME: Field = field(
    "name",
    Kind::Text {
        min: 1,
        max: NAME_MAX_CHARS as u32,
    },
    "Your own place",
);

/// The fields of a day edit that say where a day ends and what it is called, each read by
/// some edits: `distance` km from the day's start, or the route point nearest `endPoint` (one
/// of them, not both), and the rider's `label` (empty or `null` clears it).
pub const DAY_END_FIELDS: [(Field, &str); 3] = [
    (
        field("distance", Kind::Number(POSITIVE), ""),
        "km from the day's start where it (or its first half) ends",
    ),
    (
        field("endPoint", Kind::Point, ""),
        "The route point nearest this one becomes the day's end",
    ),
    (
        Field {
            name: "label",
            kind: Kind::Text {
                min: 0,
                max: LABEL_MAX_CHARS as u32,
            },
            description: "",
            nullable: true,
        },
        "The rider's name for the day; null or blank clears it",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use etappe_domain::trip::plan::RideProfile;
    use etappe_domain::trip::settings::{AccommodationType, NightsMode};

    #[test]
    fn the_word_lists_are_the_domains() {
        let types: Vec<&str> = AccommodationType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(types, ACCOMMODATION_TYPES);
        let modes: Vec<&str> = NightsMode::ALL.iter().map(|m| m.as_str()).collect();
        assert_eq!(modes, NIGHTS_MODES);
        let profiles: Vec<&str> = RideProfile::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(profiles, PROFILES);
    }

    #[test]
    fn each_setting_is_described_under_its_own_name() {
        for which in SettingField::ALL {
            assert_eq!(setting(which).field.name, which.name());
        }
    }
}
