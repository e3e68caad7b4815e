//! A day of a trip ("stage") and what the workers compute for it: distances, climbing,
//! labels, alerts. Stage ids are stable within a pacing generation; a new generation (a full
//! re-pacing) mints new ones on purpose.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::Category;

/// A point of the route.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    pub id: Uuid,
    pub day_number: u32,
    pub distance_km: f64,
    pub ascent_m: f64,
    pub descent_m: f64,
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
    /// Why the last detour asked for this day could not be computed (its job was given up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detour_failure: Option<String>,
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
}

/// What the route job learned about the whole route.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteSummary {
    /// The route's own name, from its source (third-party text).
    pub title: Option<String>,
    pub total_distance_km: f64,
    pub ascent_m: f64,
    pub descent_m: f64,
    pub point_count: usize,
    /// Where the full-resolution track of this generation is stored.
    pub track_key: String,
}

/// The alerts computed for one day.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageAlerts {
    pub stage_id: Uuid,
    pub alerts: Vec<Alert>,
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
