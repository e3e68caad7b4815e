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

/// The categories an analysis computes (everything after the route itself).
pub const ANALYSIS_CATEGORIES: [Category; 5] = [
    Category::PointsOfInterest,
    Category::Accommodations,
    Category::TerrainSecurity,
    Category::Weather,
    Category::Context,
];
