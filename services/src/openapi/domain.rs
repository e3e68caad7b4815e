//! The wire shapes of the domain values the answers carry (points, alerts, places to sleep,
//! the enumerations), as components of the document. The domain crate stays free of HTTP
//! concerns, so its types are described here: enumerations are read from the domain's own
//! `ALL` lists (or matched exhaustively, so a new variant does not compile until it is
//! described), and the end-to-end tests validate real answers against these shapes.

use etappe_domain::trip::settings::{AccommodationType, NightsMode};
use etappe_domain::trip::source::SourceType;
use etappe_domain::trip::stage::WeatherState;
use etappe_domain::trip::{Category, ComputationStatus};
use serde_json::{Value, json};

use super::build::{
    boolean, component, count, date, doc, lat_lon, list, nullable, number, number_in, object, opt,
    req, text, words,
};
use super::wire_names;

crate::openapi::shape!(
    /// A point of the route.
    pub Point = "Point",
    {
        let [lat, lon] = lat_lon();
        object(
            "A point of the route.",
            vec![lat, lon, opt("ele", doc(number(), "Metres above sea level, when known."))],
        )
    }
);

crate::openapi::shape!(
    /// An alert on a day.
    pub Alert = "Alert",
    object(
        "An alert on a day.",
        vec![
            req(
                "code",
                doc(
                    words(etappe_analysis::CODES.iter().map(|(code, _, _)| *code).collect::<Vec<_>>()),
                    ALERT_CODES
                )
            ),
            req("severity", words(["critical", "warning", "nudge"])),
            req("group", text()),
            req("message", text()),
            req(
                "parameters",
                doc(json!({"type": "object"}), "The figures the message was built from."),
            ),
            opt("lat", number()),
            opt("lon", number()),
        ],
    )
);

/// The codes themselves are the schema's `enum`, read from the analysis catalogue (the one
/// list every rule's code is in), so the document cannot miss one.
const ALERT_CODES: &str = "Stable code (the list is closed: a new code is a new version of this document). An alert pointing at something to do (a shop, water, a station, a charger, a sight to add as a waypoint) carries it as `parameters.actionPoint` {kind, name, lat, lon}.";

crate::openapi::shape!(
    /// Something found along a day by the OpenStreetMap analysis.
    pub FoundAlong = "FoundAlong",
    {
        let [lat, lon] = lat_lon();
        object(
            "Something found along a day by the OpenStreetMap analysis (third-party data).",
            vec![
                req(
                    "category",
                    doc(
                        words(["resupply", "water", "bike_shop", "railway_station"]),
                        "What it is for the rider.",
                    ),
                ),
                req(
                    "kind",
                    doc(
                        text(),
                        "The OpenStreetMap type (bakery, supermarket, drinking_water, bike_shop_repair, repair_station, railway_station…).",
                    ),
                ),
                opt("name", text()),
                req("km", doc(number(), "Km from the day's start.")),
                req("offRouteM", doc(number(), "Metres off the route.")),
                lat,
                lon,
            ],
        )
    }
);

crate::openapi::shape!(
    /// A day's weather along its ride.
    pub DayWeather = "DayWeather",
    object(
        "A day's weather along its ride, sampled at its start, middle and end at the hours the rider passes there (departure hour + riding time from the pace). Forecast data (Open-Meteo, CC BY 4.0).",
        vec![
            req(
                "state",
                doc(
                    weather_states(),
                    "`forecast`; `beyond_horizon` (after today + 15: forecast later, not a failure); `past`; `undated` (the trip has no dates); `unavailable` (no provider, or it failed: see `unavailable.weather`).",
                ),
            ),
            opt("date", date()),
            opt(
                "hours",
                doc(
                    json!({"type": "array", "items": count(0), "minItems": 3, "maxItems": 3}),
                    "Local hours of the start, middle and end samples.",
                ),
            ),
            opt("temperatureMinC", number()),
            opt("temperatureMaxC", number()),
            opt(
                "precipitationProbability",
                doc(number(), "The highest precipitation probability sampled, %."),
            ),
            opt("windSpeedKmh", doc(number(), "The strongest wind sampled, km/h.")),
            opt(
                "windDirectionDeg",
                doc(number(), "Where that wind comes from, degrees clockwise from north."),
            ),
            opt(
                "relativeWind",
                words(["headwind", "tailwind", "crosswind", "unknown"]),
            ),
            opt(
                "bearingDeg",
                doc(number(), "The day's initial heading, start to end, degrees."),
            ),
            opt("relativeHumidity", number()),
            opt(
                "comfort",
                doc(
                    json!({"type": "integer", "minimum": 0, "maximum": 100}),
                    "0–100; 39 or less raises comfort_poor_conditions.",
                ),
            ),
            opt("provider", text()),
        ],
    )
);

/// Every weather state, matched exhaustively: a new one does not compile until it is listed.
fn weather_states() -> Value {
    use WeatherState::*;
    let all = [Forecast, BeyondHorizon, Past, Undated, Unavailable];
    for s in all {
        match s {
            Forecast | BeyondHorizon | Past | Undated | Unavailable => {}
        }
    }
    words(wire_names(&all))
}

crate::openapi::shape!(
    /// A place to sleep.
    pub Accommodation = "Accommodation",
    {
        let [lat, lon] = lat_lon();
        object(
            "A place to sleep: found by a scan (OpenStreetMap) or entered by the rider.",
            vec![
                opt("name", doc(nullable(text()), "Third-party data (OpenStreetMap) or the rider's.")),
                req("type", doc(text(), "`camp_site`, `hotel`… or `other` for a place entered by hand.")),
                lat,
                lon,
                opt(
                    "distanceToEndM",
                    doc(number(), "Straight-line distance from the day's end point, metres."),
                ),
                opt("priceMinEur", nullable(number())),
                opt("priceMaxEur", nullable(number())),
                req("exactPrice", boolean()),
                opt("url", text()),
                opt("phone", text()),
                opt("address", text()),
                req("source", words(["osm", "manual"])),
                opt(
                    "chosenBy",
                    doc(
                        words(["rider", "etappe"]),
                        "On the chosen place: `rider` (the rider or their agent) or `etappe` (the pacer, with nights at accommodation: choosing another re-flows the nights Etappe chose after it).",
                    ),
                ),
            ],
        )
    }
);

crate::openapi::shape!(
    /// Why a night is where it is.
    pub NightNote = "NightNote",
    object(
        "Why a night is where it is (nights at accommodation): the pacer's target, the window it looked in and the beds it passed over.",
        vec![
            req(
                "outcome",
                doc(
                    words(["at_bed", "no_bed_in_window", "not_looked_for"]),
                    "`at_bed`: the day ends at a bed in the window; `no_bed_in_window`: none of the rider's types there, the planned cut stands; `not_looked_for`: no OpenStreetMap source when the route was paced.",
                ),
            ),
            req(
                "targetKm",
                doc(number(), "Kilometres from the day's start where the plan would have ended it."),
            ),
            req(
                "windowKm",
                doc(
                    json!({"type": "array", "items": number(), "minItems": 2, "maxItems": 2}),
                    "The stretch searched, kilometres from the day's start.",
                ),
            ),
            req(
                "tolerancePct",
                doc(count(0), "The tolerance, per cent of the day's planned length."),
            ),
            opt(
                "passedOver",
                doc(
                    list(component("NightCandidate")),
                    "Other beds that fitted, best first (at most three).",
                ),
            ),
            opt(
                "nearestBefore",
                doc(component("NightCandidate"), "With no bed in the window: the nearest before it."),
            ),
            opt(
                "nearestAfter",
                doc(component("NightCandidate"), "With no bed in the window: the nearest after it."),
            ),
            req("why", doc(text(), "The same in words.")),
        ],
    )
);

crate::openapi::shape!(
    /// A bed the pacer considered for a night.
    pub NightCandidate = "NightCandidate",
    {
        let [lat, lon] = lat_lon();
        object(
            "A bed the pacer considered for a night.",
            vec![
                opt("name", doc(nullable(text()), "Third-party data (OpenStreetMap).")),
                req("type", text()),
                req("km", doc(number(), "Kilometres from the day's start to where the route passes it.")),
                req("offRouteM", doc(number(), "Metres from the route to the bed.")),
                opt("priceMinEur", nullable(number())),
                lat,
                lon,
            ],
        )
    }
);

crate::openapi::shape!(
    /// The kinds of accommodation a rider can enable (the domain's `AccommodationType::ALL`).
    pub AccommodationKind = "AccommodationType",
    words(wire_names(&AccommodationType::ALL))
);

crate::openapi::shape!(
    /// Where one category's computation stands.
    pub ComputationState = "ComputationStatus",
    words(wire_names(&computation_statuses()))
);

/// Every computation status, matched exhaustively like [`source_types`].
fn computation_statuses() -> Vec<ComputationStatus> {
    use ComputationStatus::*;
    let all = [Pending, Running, Done, Failed, Superseded];
    for s in all {
        match s {
            Pending | Running | Done | Failed | Superseded => {}
        }
    }
    all.to_vec()
}

/// Every source type (the domain's `SourceType::ALL`).
fn source_types() -> Vec<SourceType> {
    SourceType::ALL.to_vec()
}

/// Where a trip's days end (the domain's `NightsMode::ALL`).
pub fn nights_mode() -> Value {
    words(NightsMode::ALL.map(NightsMode::as_str))
}

/// Which service a trip's route came from.
pub fn source_type() -> Value {
    words(wire_names(&source_types()))
}

/// A map keyed by the domain's categories (`Category::ALL`), each holding `value`.
fn per_category(value: &Value, description: &str) -> Value {
    let properties: serde_json::Map<String, Value> = wire_names(&Category::ALL)
        .into_iter()
        .filter_map(|name| name.as_str().map(|n| (n.to_owned(), value.clone())))
        .collect();
    json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "additionalProperties": false,
    })
}

/// `computationStatus`: the status per computation category.
pub fn computation_status_map() -> Value {
    per_category(
        &component("ComputationStatus"),
        "Status per computation category.",
    )
}

/// `unavailable`: why each failed category could not be computed.
pub fn unavailable_map() -> Value {
    per_category(
        &text(),
        "Why each failed category could not be computed (third-party data or a route failure).",
    )
}

/// `status` of a trip: `draft` until the days exist, `ready` with them, `failed` when the
/// route failed for good.
pub fn trip_status() -> Value {
    words(["draft", "ready", "failed"])
}

/// A share of a day, 0–1.
pub fn share_of_day(description: &str) -> Value {
    doc(nullable(number_in(0.0, 1.0)), description)
}
