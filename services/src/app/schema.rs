//! The wire shapes of the domain values the views carry (points, alerts, places to sleep, the
//! enums), for the generated OpenAPI document. The domain crate stays free of HTTP concerns,
//! so its types are described here: enumerations are read from the domain's own `ALL` lists
//! (or matched exhaustively, so a new variant does not compile until it is described), and
//! the end-to-end tests validate real answers against these shapes.

use etappe_domain::trip::settings::AccommodationType;
use etappe_domain::trip::source::SourceType;
use etappe_domain::trip::{Category, ComputationStatus};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// Where a placeholder made by [`schema`] carries its schema.
const RAW: &str = "x-etappe-schema";

/// A JSON Schema written with `json!` (so the domain's constants are interpolated, and any
/// 2020-12 keyword can be used: `not`, `anyOf`, `pattern`…), as a utoipa schema: a
/// placeholder carrying it, replaced by [`splice`] once the document is generated.
pub fn schema(value: Value) -> RefOr<Schema> {
    let carried = utoipa::openapi::extensions::ExtensionsBuilder::new()
        .add(RAW, value)
        .build();
    RefOr::T(Schema::Object(
        utoipa::openapi::ObjectBuilder::new()
            .extensions(Some(carried))
            .build(),
    ))
}

/// Replaces every placeholder made by [`schema`] in a generated document with its schema.
pub fn splice(document: &mut Value) {
    match document {
        Value::Object(map) => {
            if let Some(raw) = map.remove(RAW) {
                *document = raw;
                splice(document);
                return;
            }
            map.values_mut().for_each(splice);
        }
        Value::Array(items) => items.iter_mut().for_each(splice),
        _ => {}
    }
}

/// The wire names of `values`, as their serde form.
pub fn wire_names<T: Serialize>(values: &[T]) -> Vec<Value> {
    values
        .iter()
        .map(|v| serde_json::to_value(v).expect("an enum serializes to its name"))
        .collect()
}

/// A point of the route.
#[derive(Debug, ToSchema)]
#[schema(as = Point)]
#[allow(dead_code)]
pub struct PointSchema {
    lat: f64,
    lon: f64,
    /// Metres above sea level, when known.
    #[schema(required = false)]
    ele: f64,
}

/// An alert on a day.
#[derive(Debug, ToSchema)]
#[schema(as = Alert)]
#[allow(dead_code)]
pub struct AlertSchema {
    /// Stable code (elevation_gain, steep_gradient, ebike_range_exceeded,
    /// sunset_arrival_after_twilight, rest_day_suggested, calendar_sunday,
    /// calendar_public_holiday, continuity_gap_warning, continuity_gap_critical,
    /// border_crossing, daily_distance_over_cap, no_bed_near_target, wind_headwind, comfort_poor_conditions,
    /// ford_crossing_wet, surface_rough, traffic_main_road, traffic_secondary_road_fast,
    /// traffic_secondary_road_slow, bike_shop_none_nearby, resupply_none_on_stage,
    /// resupply_closed_at_passage, accommodation_seasonal_closure, water_point_gap,
    /// cultural_poi_suggestion, railway_station_none_nearby, health_service_none_nearby,
    /// ferry_crossing, ford_crossing_dry). An alert pointing at something to do (a shop,
    /// water, a station, a charger, a sight to add as a waypoint) carries it as
    /// `parameters.actionPoint` {kind, name, lat, lon}.
    code: String,
    #[schema(schema_with = severity)]
    severity: String,
    group: String,
    message: String,
    /// The figures the message was built from.
    #[schema(value_type = Object)]
    parameters: Value,
    #[schema(required = false)]
    lat: f64,
    #[schema(required = false)]
    lon: f64,
}

/// Something found along a day by the OpenStreetMap analysis (third-party data).
#[derive(Debug, ToSchema)]
#[schema(as = FoundAlong, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct FoundAlongSchema {
    /// What it is for the rider.
    #[schema(schema_with = found_category)]
    category: String,
    /// The OpenStreetMap type (bakery, supermarket, drinking_water, bike_shop_repair,
    /// repair_station, railway_station…).
    kind: String,
    #[schema(required = false)]
    name: String,
    /// Km from the day's start.
    km: f64,
    /// Metres off the route.
    off_route_m: f64,
    lat: f64,
    lon: f64,
}

fn found_category() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["resupply", "water", "bike_shop", "railway_station"]}))
}

/// A day's weather along its ride, sampled at its start, middle and end at the hours the
/// rider passes there (departure hour + riding time from the pace). Forecast data
/// (Open-Meteo, CC BY 4.0).
#[derive(Debug, ToSchema)]
#[schema(as = DayWeather, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct DayWeatherSchema {
    /// `forecast`; `beyond_horizon` (after today + 15: forecast later, not a failure);
    /// `past`; `undated` (the trip has no dates); `unavailable` (no provider, or it failed:
    /// see `unavailable.weather`).
    #[schema(schema_with = weather_state)]
    state: String,
    #[schema(required = false)]
    date: chrono::NaiveDate,
    /// Local hours of the start, middle and end samples.
    #[schema(required = false, min_items = 3, max_items = 3)]
    hours: Vec<u8>,
    #[schema(required = false)]
    temperature_min_c: f64,
    #[schema(required = false)]
    temperature_max_c: f64,
    /// The highest precipitation probability sampled, %.
    #[schema(required = false)]
    precipitation_probability: f64,
    /// The strongest wind sampled, km/h.
    #[schema(required = false)]
    wind_speed_kmh: f64,
    /// Where that wind comes from, degrees clockwise from north.
    #[schema(required = false)]
    wind_direction_deg: f64,
    #[schema(required = false, schema_with = relative_wind)]
    relative_wind: String,
    /// The day's initial heading, start to end, degrees.
    #[schema(required = false)]
    bearing_deg: f64,
    #[schema(required = false)]
    relative_humidity: f64,
    /// 0–100; 39 or less raises comfort_poor_conditions.
    #[schema(required = false, minimum = 0, maximum = 100)]
    comfort: u8,
    #[schema(required = false)]
    provider: String,
}

/// Every weather state, matched exhaustively: a new one does not compile until it is listed.
fn weather_state() -> RefOr<Schema> {
    use etappe_domain::trip::stage::WeatherState::*;
    let all = [Forecast, BeyondHorizon, Past, Undated, Unavailable];
    for s in all {
        match s {
            Forecast | BeyondHorizon | Past | Undated | Unavailable => {}
        }
    }
    schema(json!({"type": "string", "enum": wire_names(&all)}))
}

fn relative_wind() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["headwind", "tailwind", "crosswind", "unknown"]}))
}

fn severity() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["critical", "warning", "nudge"]}))
}

/// A place to sleep: found by a scan (OpenStreetMap) or entered by the rider.
#[derive(Debug, ToSchema)]
#[schema(as = Accommodation, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct AccommodationSchema {
    /// Third-party data (OpenStreetMap) or the rider's.
    name: Option<String>,
    /// `camp_site`, `hotel`… or `other` for a place entered by hand.
    #[schema(rename = "type")]
    kind: String,
    lat: f64,
    lon: f64,
    /// Straight-line distance from the day's end point, metres.
    #[schema(required = false)]
    distance_to_end_m: f64,
    price_min_eur: Option<f64>,
    price_max_eur: Option<f64>,
    exact_price: bool,
    #[schema(required = false)]
    url: String,
    #[schema(required = false)]
    phone: String,
    #[schema(required = false)]
    address: String,
    #[schema(schema_with = accommodation_source)]
    source: String,
    /// On the chosen place: `rider` (the rider or their agent) or `etappe` (the pacer, with
    /// nights at accommodation: choosing another re-flows the nights Etappe chose after it).
    #[schema(required = false, schema_with = chosen_by)]
    chosen_by: String,
}

fn chosen_by() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["rider", "etappe"]}))
}

/// Why a night is where it is (nights at accommodation): the pacer's target, the window it
/// looked in and the beds it passed over.
#[derive(Debug, ToSchema)]
#[schema(as = NightNote, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct NightNoteSchema {
    /// `at_bed`: the day ends at a bed in the window; `no_bed_in_window`: none of the
    /// rider's types there, the planned cut stands; `not_looked_for`: no OpenStreetMap
    /// source when the route was paced.
    #[schema(schema_with = night_outcome)]
    outcome: String,
    /// Kilometres from the day's start where the plan would have ended it.
    target_km: f64,
    /// The stretch searched, kilometres from the day's start.
    #[schema(min_items = 2, max_items = 2)]
    window_km: Vec<f64>,
    /// The tolerance, per cent of the day's planned length.
    tolerance_pct: u8,
    /// Other beds that fitted, best first (at most three).
    #[schema(required = false)]
    passed_over: Vec<NightCandidateSchema>,
    /// With no bed in the window: the nearest before it.
    #[schema(required = false)]
    nearest_before: NightCandidateSchema,
    /// With no bed in the window: the nearest after it.
    #[schema(required = false)]
    nearest_after: NightCandidateSchema,
    /// The same in words.
    why: String,
}

fn night_outcome() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["at_bed", "no_bed_in_window", "not_looked_for"]}))
}

/// A bed the pacer considered for a night.
#[derive(Debug, ToSchema)]
#[schema(as = NightCandidate, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct NightCandidateSchema {
    /// Third-party data (OpenStreetMap).
    name: Option<String>,
    #[schema(rename = "type")]
    kind: String,
    /// Kilometres from the day's start to where the route passes it.
    km: f64,
    /// Metres from the route to the bed.
    off_route_m: f64,
    price_min_eur: Option<f64>,
    lat: f64,
    lon: f64,
}

fn accommodation_source() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["osm", "manual"]}))
}

/// The kinds of accommodation a rider can enable (the domain's `AccommodationType::ALL`).
#[derive(Debug)]
pub struct AccommodationTypeSchema;

impl PartialSchema for AccommodationTypeSchema {
    fn schema() -> RefOr<Schema> {
        schema(json!({"type": "string", "enum": wire_names(&AccommodationType::ALL)}))
    }
}

impl ToSchema for AccommodationTypeSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "AccommodationType".into()
    }
}

/// Every source type, matched exhaustively: a new one does not compile until it is listed.
fn source_types() -> Vec<SourceType> {
    use SourceType::*;
    let all = [
        KomootTour,
        KomootCollection,
        StravaRoute,
        RideWithGps,
        GpxLink,
        GpxUpload,
        Plan,
    ];
    for t in all {
        match t {
            KomootTour | KomootCollection | StravaRoute | RideWithGps | GpxLink | GpxUpload
            | Plan => {}
        }
    }
    all.to_vec()
}

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

/// Where a trip's days end (the domain's `NightsMode::ALL`).
pub fn nights_mode() -> RefOr<Schema> {
    use etappe_domain::trip::settings::NightsMode;
    schema(json!({"type": "string", "enum": NightsMode::ALL.map(NightsMode::as_str)}))
}

/// Which service a trip's route came from.
pub fn source_type() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": wire_names(&source_types())}))
}

/// Where one category's computation stands.
#[derive(Debug)]
pub struct ComputationStatusSchema;

impl PartialSchema for ComputationStatusSchema {
    fn schema() -> RefOr<Schema> {
        schema(json!({"type": "string", "enum": wire_names(&computation_statuses())}))
    }
}

impl ToSchema for ComputationStatusSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "ComputationStatus".into()
    }
}

/// A map keyed by the domain's categories (`Category::ALL`), each holding `value`.
fn per_category(value: &Value, description: &str) -> RefOr<Schema> {
    let properties: serde_json::Map<String, Value> = wire_names(&Category::ALL)
        .into_iter()
        .filter_map(|name| name.as_str().map(|n| (n.to_owned(), value.clone())))
        .collect();
    schema(json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "additionalProperties": false,
    }))
}

/// `computationStatus`: the status per computation category.
pub fn computation_status_map() -> RefOr<Schema> {
    per_category(
        &json!({"$ref": "#/components/schemas/ComputationStatus"}),
        "Status per computation category.",
    )
}

/// `unavailable`: why each failed category could not be computed.
pub fn unavailable_map() -> RefOr<Schema> {
    per_category(
        &json!({"type": "string"}),
        "Why each failed category could not be computed (third-party data or a route failure).",
    )
}

/// `status` of a trip: `draft` until the days exist, `ready` with them, `failed` when the
/// route failed for good.
pub fn trip_status() -> RefOr<Schema> {
    schema(json!({"type": "string", "enum": ["draft", "ready", "failed"]}))
}
