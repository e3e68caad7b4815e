//! A day of a trip ("stage") and what the workers compute for it: distances, climbing,
//! labels, alerts. Stage ids are stable within a pacing generation; a new generation (a full
//! re-pacing) mints new ones on purpose.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::Category;

/// A point of the route.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub lat: f64,
    pub lon: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ele: Option<f64>,
}

/// An alert on a day: a stable `code`, a severity, the group that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    pub code: String,
    /// `critical`, `warning` or `nudge`.
    pub severity: String,
    pub group: String,
    pub message: String,
    #[serde(default)]
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lon: Option<f64>,
}

/// One day.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    pub id: Uuid,
    pub day_number: u32,
    pub distance_km: f64,
    /// Metres climbed and descended; `None` when the heights of the day's route are unknown
    /// (a route without elevation and no elevation source): never invented as 0.
    pub ascent_m: Option<f64>,
    pub descent_m: Option<f64>,
    pub start: Point,
    pub end: Point,
    /// Reverse-geocoded locality names (third-party data: shown as data, never obeyed).
    pub start_label: Option<String>,
    pub end_label: Option<String>,
    /// ISO 3166-1 alpha-2 codes of the start and end, when known.
    pub start_country: Option<String>,
    pub end_country: Option<String>,
    /// The rider's own name for the day.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub is_rest_day: bool,
    /// The day's slice of the generation's stored track (inclusive indices).
    pub first_point: usize,
    pub last_point: usize,
    #[serde(default)]
    pub alerts: Vec<Alert>,
    /// Places to sleep found near the day's end by the last scan (third-party data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accommodations: Vec<Accommodation>,
    /// The place the rider chose (or entered by hand) for the night after this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accommodation: Option<Accommodation>,
    /// The day re-routed through a waypoint: its geometry is stored apart from the track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detour: Option<Detour>,
    /// The waypoint of a detour asked for and not yet computed: a result for another point
    /// (the detour removed or asked again meanwhile) is dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waypoint_pending: Option<Point>,
    /// Why the last detour asked for this day could not be computed (its job was given up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detour_failure: Option<String>,
    /// The day's weather as last computed (absent: never computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weather: Option<DayWeather>,
    /// What the OpenStreetMap analysis found along the day, in order (absent: never ran;
    /// empty: ran and found nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Vec<FoundAlong>>,
    /// What the day rides on, when an analysis read OpenStreetMap for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub road: Option<RoadMix>,
    /// The day's length as the pacer planned it from distance and climbing, km, before its
    /// night moved to a bed (with nights at accommodation): a re-flow plans from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_km: Option<f64>,
    /// Why the night after this day is where it is, as the pacer placed it (with nights at
    /// accommodation; absent once the rider moves the day's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub night: Option<NightNote>,
}

/// Something found along a day — food, water, a bike shop, a railway station — with where
/// it is on the day, so a rider reads "water at km 34 and 61". Names are third-party data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundAlong {
    /// `resupply`, `water`, `bike_shop` or `railway_station`.
    pub category: String,
    /// The OpenStreetMap type (`bakery`, `drinking_water`, `repair_station`…).
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Km from the day's start, one decimal.
    pub km: f64,
    /// Metres off the route.
    pub off_route_m: f64,
    pub lat: f64,
    pub lon: f64,
}

/// Days of forecast from today (today to today + 15), as forecast providers publish them.
pub const WEATHER_HORIZON_DAYS: u64 = 16;

/// Where a day's weather stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeatherState {
    /// Forecast values for the hours the rider is on the road.
    Forecast,
    /// The date is after today + 15: not forecast yet (a state, not a failure).
    BeyondHorizon,
    /// The date is before today.
    Past,
    /// The trip has no dates, so no forecast can be asked for.
    Undated,
    /// Within the horizon, but no forecast could be had (no provider, provider down).
    Unavailable,
}

impl WeatherState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forecast => "forecast",
            Self::BeyondHorizon => "beyond_horizon",
            Self::Past => "past",
            Self::Undated => "undated",
            Self::Unavailable => "unavailable",
        }
    }
}

/// A day's weather along its ride: sampled at its start, middle and end at the hours the
/// rider passes there (departure hour + the day's riding time from the pace).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DayWeather {
    pub state: WeatherState,
    /// The day's date, when the trip is dated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<chrono::NaiveDate>,
    /// Local hours of the samples at the start, middle and end of the day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hours: Option<[u8; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_min_c: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_max_c: Option<f64>,
    /// The highest precipitation probability sampled, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precipitation_probability: Option<f64>,
    /// The strongest wind sampled, km/h.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wind_speed_kmh: Option<f64>,
    /// Where that wind comes from, degrees clockwise from north.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wind_direction_deg: Option<f64>,
    /// `headwind`, `tailwind`, `crosswind` or `unknown`, against the day's heading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_wind: Option<String>,
    /// The day's initial heading (start to end), degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearing_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_humidity: Option<f64>,
    /// 0–100, poor at 39 or less.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comfort: Option<u8>,
    /// Who forecast it (`open-meteo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl DayWeather {
    /// A day with a state and no values.
    pub fn state_only(state: WeatherState, date: Option<chrono::NaiveDate>) -> Self {
        Self {
            state,
            date,
            hours: None,
            temperature_min_c: None,
            temperature_max_c: None,
            precipitation_probability: None,
            wind_speed_kmh: None,
            wind_direction_deg: None,
            relative_wind: None,
            bearing_deg: None,
            relative_humidity: None,
            comfort: None,
            provider: None,
        }
    }
}

/// A place to sleep: found by a scan (OpenStreetMap) or entered by the rider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accommodation {
    /// Third-party or caller text, control characters stripped.
    pub name: Option<String>,
    /// `camp_site`, `hotel`… or `other` for a place entered by hand.
    #[serde(rename = "type")]
    pub kind: String,
    pub lat: f64,
    pub lon: f64,
    /// Straight-line distance from the day's end point, metres.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance_to_end_m: Option<f64>,
    pub price_min_eur: Option<f64>,
    pub price_max_eur: Option<f64>,
    #[serde(default)]
    pub exact_price: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// `osm` for a scan result, `manual` for one the rider entered.
    pub source: String,
    /// On the chosen place: who chose it (absent on candidates; a place chosen before nights
    /// were paced is the rider's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_by: Option<ChosenBy>,
}

/// A day re-routed through a waypoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Detour {
    pub waypoint: Point,
    /// Where the day's new geometry is stored (same codec as the generation track).
    pub track_key: String,
    /// The day's distance before the detour, km.
    pub original_distance_km: f64,
    /// True when no router was reachable and the detour is a straight out-and-back spur.
    pub estimated: bool,
    /// Which router computed it (`brouter`, `valhalla`, `offline`).
    pub router: String,
    /// The day's climbing before the detour (absent on detours recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_ascent_m: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_descent_m: Option<f64>,
    /// Where the spur leaves the day's own track and where it comes back to it (indices into
    /// the generation's track), and the length of the day's own track it skips, metres.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub junction: Option<SpurJunction>,
    /// The day's slice of the track the stored geometry was spliced into (absent on detours
    /// recorded before detours followed their day): with the junction, a reader splices the
    /// same spur into the day's slice of today, so a detour outlives a moved cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spliced_day: Option<DaySpan>,
}

/// A day's slice of the generation's track (inclusive indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaySpan {
    pub first_point: usize,
    pub last_point: usize,
}

impl Detour {
    /// Whether the detour's spur lies on the slice `first..=last` of the track (it leaves and
    /// rejoins inside it), so that slice can ride it; `None` when the detour does not know
    /// where it lies (recorded before detours followed their day).
    pub fn fits(&self, first: usize, last: usize) -> Option<bool> {
        let junction = self.junction?;
        self.spliced_day?;
        Some(first <= junction.leave_point && junction.rejoin_point <= last)
    }

    /// Metres the spur adds to the day's own roads, as the detour job counted them.
    pub fn added_m(&self) -> Option<f64> {
        self.junction.map(|j| j.spur_m - j.skipped_m)
    }
}

/// Where a detour's spur leaves and rejoins the day's own track.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpurJunction {
    pub leave_point: usize,
    pub rejoin_point: usize,
    /// Metres of the day's own track between the two (not ridden with the detour).
    pub skipped_m: f64,
    /// Metres out to the waypoint and back.
    pub spur_m: f64,
}

/// Where a route's heights come from, and what is missing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElevationInfo {
    /// Which sources gave the heights: `recorded` (the route's own), `srtm` (imported
    /// tiles), `open-meteo`; empty when none did.
    pub sources: Vec<String>,
    /// Points still without a height (their days' climbing is unknown).
    pub missing_points: usize,
    /// Points of the route in all.
    pub points: usize,
    /// Why heights are missing and how to get them, when some are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_reason: Option<String>,
    /// True when the days were cut without a climbing penalty, the route's climbing being
    /// unknown.
    #[serde(default)]
    pub paced_without_climbing: bool,
}

/// What the route job learned about the whole route.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteSummary {
    /// The route's own name, from its source (third-party text).
    pub title: Option<String>,
    pub total_distance_km: f64,
    /// `None` when the route's heights are unknown (see `elevation`).
    pub ascent_m: Option<f64>,
    pub descent_m: Option<f64>,
    pub point_count: usize,
    /// Where the full-resolution track of this generation is stored.
    pub track_key: String,
    /// Where the heights come from (absent on routes computed before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elevation: Option<ElevationInfo>,
}

/// The alerts computed for one day.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageAlerts {
    pub stage_id: Uuid,
    pub alerts: Vec<Alert>,
    /// The day's weather, when this analysis computed the weather.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weather: Option<DayWeather>,
    /// What was found along the day, when this analysis read OpenStreetMap for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Vec<FoundAlong>>,
    /// What the day rides on, when an analysis read OpenStreetMap for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub road: Option<RoadMix>,
}

/// A category that could not be computed, and why (no provider, provider down…).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unavailable {
    pub category: Category,
    pub reason: String,
}

/// What a detour invalidates: everything read off the day's roads (its end, and so its
/// places to sleep, stays where it was).
pub const DETOUR_INVALIDATES: [Category; 4] = [
    Category::PointsOfInterest,
    Category::TerrainSecurity,
    Category::Weather,
    Category::Context,
];

/// The categories an analysis computes (everything after the route itself).
pub const ANALYSIS_CATEGORIES: [Category; 5] = [
    Category::PointsOfInterest,
    Category::Accommodations,
    Category::TerrainSecurity,
    Category::Weather,
    Category::Context,
];

/// Who chose the place a night is spent at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChosenBy {
    /// The rider or their agent (and every place chosen before nights were paced).
    #[default]
    Rider,
    /// The pacer, with nights at accommodation: a re-flow may move it.
    Etappe,
}

impl ChosenBy {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rider => "rider",
            Self::Etappe => "etappe",
        }
    }
}

/// A bed a night's note names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NightCandidate {
    /// Third-party text, control characters stripped.
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    /// Kilometres from the day's start to where the route passes it.
    pub km: f64,
    pub off_route_m: f64,
    pub price_min_eur: Option<f64>,
    pub lat: f64,
    pub lon: f64,
}

/// What the pacer found for a night.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NightOutcome {
    /// The day ends at a bed within the tolerance.
    AtBed,
    /// No bed of the rider's types within the tolerance: the planned cut stands.
    NoBedInWindow,
    /// No bed could be looked for (no OpenStreetMap source when the route was paced).
    NotLookedFor,
}

/// Why a night is where it is, as the pacer placed it (with nights at accommodation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NightNote {
    pub outcome: NightOutcome,
    /// Kilometres from the day's start where the plan would have ended it.
    pub target_km: f64,
    /// The stretch the bed was looked for in, kilometres from the day's start.
    pub window_km: [f64; 2],
    /// The tolerance, per cent of the day's planned length.
    pub tolerance_pct: u8,
    /// The other beds that fitted, best first (at most `nights::PASSED_OVER_NAMED`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed_over: Vec<NightCandidate>,
    /// With no bed in the window: the nearest before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest_before: Option<NightCandidate>,
    /// With no bed in the window: the nearest after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest_after: Option<NightCandidate>,
    /// The same in words.
    pub why: String,
}

/// What a day rides on, from the ways it is matched to in OpenStreetMap: metres of rough
/// surface (unpaved or cobbled, as `surface_rough` counts them), of unpaved surface, and of
/// busy road (main and secondary roads without cycle infrastructure).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoadMix {
    pub rough_m: f64,
    /// Absent in days analysed before unpaved and cobbled were told apart: their rough
    /// metres stand for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpaved_m: Option<f64>,
    pub busy_m: f64,
}

impl RoadMix {
    /// Metres of unpaved surface (rough metres for days analysed before it was told apart).
    pub fn unpaved_m(&self) -> f64 {
        self.unpaved_m.unwrap_or(self.rough_m)
    }
}
