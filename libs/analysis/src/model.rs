//! Input and output types of the analysis.
//!
//! The inputs are plain borrowed data so that the caller (the planner) can
//! hand over its already-parsed track without copying; the output type is
//! the only thing that crosses a serialisation boundary, so it alone derives
//! `Serialize`.

use chrono::NaiveDate;
use serde::Serialize;

/// One track point of a stage, at full resolution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StagePoint {
    /// Latitude in degrees (WGS 84).
    pub lat: f64,
    /// Longitude in degrees (WGS 84), positive east.
    pub lon: f64,
    /// Elevation in metres, when the track has it.
    pub ele: Option<f64>,
    /// Cumulative horizontal distance from the stage start, in metres.
    pub distance_m: f64,
}

/// Everything the rules need to know about one day of the trip.
#[derive(Debug, Clone, PartialEq)]
pub struct StageInput<'a> {
    /// 1-based day number as shown to the user; only used in messages.
    pub day_number: u32,
    /// A rest day gets no riding alerts (see the crate docs).
    pub is_rest_day: bool,
    /// Day distance in kilometres.
    pub distance_km: f64,
    /// Day cumulative ascent (D+) in metres; `None` when the route's heights are unknown
    /// (the climbing rules then stay silent and `elevation_unknown` says so).
    pub ascent_m: Option<f64>,
    /// The stage's full-resolution points (empty for a rest day).
    pub points: &'a [StagePoint],
    /// Stage start as (lat, lon) in degrees.
    pub start: (f64, f64),
    /// Stage end as (lat, lon) in degrees.
    pub end: (f64, f64),
    /// Calendar date of the stage; `None` when the trip has no start date.
    pub date: Option<NaiveDate>,
    /// ISO 3166-1 alpha-2 code of the start point, from a gazetteer.
    pub start_country: Option<String>,
    /// ISO 3166-1 alpha-2 code of the end point, from a gazetteer.
    pub end_country: Option<String>,
    /// Local UTC offset at the end point on that date, when the caller knows it.
    pub utc_offset_minutes: Option<i32>,
}

/// A jump between two recorded pieces of the route file inside a day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackGap {
    /// Straight-line length of the jump, metres.
    pub length_m: f64,
    /// Where it starts, km from the start of the whole route.
    pub at_km: f64,
    /// Bridged (counted as riding) or a break (not counted, not drawn).
    pub bridged: bool,
    /// Where the jump starts (the last recorded point before it).
    pub lat: f64,
    /// Where the jump starts.
    pub lon: f64,
}

/// What the planner knows about a day beyond its geometry.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DayFacts<'a> {
    /// Gaps between recorded pieces inside the day.
    pub gaps: &'a [TrackGap],
    /// The trip's daily cap, km, when it has one.
    pub max_distance_per_day_km: Option<f64>,
    /// With nights at accommodation, a night the pacer found no bed for.
    pub night_gap: Option<NightGap<'a>>,
}

/// A night with no place to sleep within the tolerance of the day's planned end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NightGap<'a> {
    /// Kilometres from the day's start where the plan ends it.
    pub target_km: f64,
    /// The stretch searched, kilometres from the day's start.
    pub window_km: [f64; 2],
    /// False when no bed could be looked for at all (no source when the days were cut).
    pub looked_for: bool,
    /// The pacer's own words for it (names the nearest beds either side).
    pub why: &'a str,
    /// The nearest beds before and after the window.
    pub nearest_before: Option<NearBed<'a>>,
    pub nearest_after: Option<NearBed<'a>>,
}

/// A place to sleep near a night's window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NearBed<'a> {
    pub name: Option<&'a str>,
    /// The OpenStreetMap type (`camp_site`, `hotel`…).
    pub kind: &'a str,
    /// Kilometres from the day's start.
    pub km: f64,
    pub lat: f64,
    pub lon: f64,
}

/// User settings that change how a day is judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisSettings {
    /// Local hour of departure (0–23); values above 23 are clamped to 23.
    pub departure_hour: u8,
    /// Average moving speed in km/h; values below 5 km/h (or non-finite)
    /// are raised to 5 km/h, the product's minimum.
    pub average_speed_kmh: f64,
    /// Enables the e-bike range rule.
    pub ebike_mode: bool,
    /// Metres of climbing that cost as much as one flat km (`elevationPenalty`): a day's
    /// riding time is its effort at the average speed (`etappe_geo::effort`).
    pub climb_m_per_flat_km: f64,
}

impl Default for AnalysisSettings {
    /// A touring cyclist leaving at 08:00 and averaging 15 km/h on a
    /// non-assisted bike: the values the planner shows before the user
    /// changes anything.
    fn default() -> Self {
        Self {
            departure_hour: 8,
            average_speed_kmh: 15.0,
            ebike_mode: false,
            climb_m_per_flat_km: etappe_geo::effort::DEFAULT_CLIMB_M_PER_FLAT_KM,
        }
    }
}

/// How urgent an alert is. Serialised in lowercase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The plan is probably broken (e.g. a large gap between stages).
    Critical,
    /// The day is feasible but harder or riskier than usual.
    Warning,
    /// Useful information, no action required.
    Nudge,
}

impl Severity {
    /// The serialised spelling, also used in [`crate::CODES`].
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Critical => "critical",
            Self::Warning => "warning",
            Self::Nudge => "nudge",
        }
    }
}

/// One finding about one stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    /// Stable machine code, one of [`crate::CODES`].
    pub code: &'static str,
    /// Urgency.
    pub severity: Severity,
    /// UI grouping: `terrain`, `calendar`, `border_crossing` or `weather`.
    pub group: &'static str,
    /// Short English sentence built only from numbers, dates, fixed text and
    /// validated country codes (never caller free text).
    pub message: String,
    /// Machine-readable values behind the message (camelCase keys).
    pub parameters: serde_json::Value,
    /// Where the issue is, when it has a place.
    pub lat: Option<f64>,
    /// Where the issue is, when it has a place.
    pub lon: Option<f64>,
}
