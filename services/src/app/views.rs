//! What readers receive: shapes built from the trip read model, shared by every transport.
//! The lock is judged here, at read time, because it depends on today's date.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use etappe_events::projection::TripView;
use etappe_events::trip::settings::AccommodationType;
use etappe_events::trip::source::SourceType;
use etappe_events::trip::{Category, ComputationStatus};
use serde::Serialize;

/// Today, in UTC: the day the lock rule compares start dates with.
pub fn today() -> NaiveDate {
    Utc::now().date_naive()
}

/// `GET /trips/{id}` and the answer to a creation: where the trip stands.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripSummary {
    pub id: String,
    pub version: u64,
    /// True until the days exist: `stages: []` then means "not computed yet", not "no days".
    pub partial: bool,
    pub is_locked: bool,
    pub computation_status: BTreeMap<Category, ComputationStatus>,
}

/// `GET /trips/{id}/detail`: the whole trip as the rider edits it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripDetail {
    pub id: String,
    pub version: u64,
    pub title: Option<String>,
    pub source_url: String,
    pub source_type: SourceType,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub fatigue_factor: f64,
    pub elevation_penalty: f64,
    pub max_distance_per_day: f64,
    pub average_speed: f64,
    pub departure_hour: u8,
    pub ebike_mode: bool,
    pub enabled_accommodation_types: Vec<AccommodationType>,
    /// `draft` until the days exist, then `ready`.
    pub status: &'static str,
    pub partial: bool,
    pub is_locked: bool,
    pub computation_status: BTreeMap<Category, ComputationStatus>,
    pub stage_count: usize,
    /// Kilometres, rest days excluded.
    pub total_distance: f64,
    pub stages: Vec<serde_json::Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One line of `GET /trips`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripListItem {
    pub id: String,
    pub title: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub status: &'static str,
    pub is_locked: bool,
    pub stage_count: usize,
    pub total_distance: f64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A page of trips.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripList {
    pub items: Vec<TripListItem>,
    pub total_items: u64,
    pub page: u32,
    pub items_per_page: u32,
}

// Days are computed by the worker pipeline (issue #3); until then every trip is a draft.
const STAGE_COUNT: usize = 0;

fn status(stage_count: usize) -> &'static str {
    if stage_count == 0 { "draft" } else { "ready" }
}

impl TripSummary {
    /// Builds the summary of a view.
    pub fn of(view: &TripView, today: NaiveDate) -> Self {
        let trip = &view.trip;
        Self {
            id: trip.id.to_string(),
            version: trip.version,
            partial: STAGE_COUNT == 0,
            is_locked: trip.is_locked(today),
            computation_status: trip.computations.clone(),
        }
    }
}

impl TripDetail {
    /// Builds the detail of a view.
    pub fn of(view: &TripView, today: NaiveDate) -> Self {
        let trip = &view.trip;
        let s = &trip.settings;
        Self {
            id: trip.id.to_string(),
            version: trip.version,
            title: s.title.clone(),
            source_url: trip.source.url.clone(),
            source_type: trip.source.source_type,
            start_date: s.start_date,
            end_date: s.end_date,
            fatigue_factor: s.fatigue_factor,
            elevation_penalty: s.elevation_penalty,
            max_distance_per_day: s.max_distance_per_day,
            average_speed: s.average_speed,
            departure_hour: s.departure_hour,
            ebike_mode: s.ebike_mode,
            enabled_accommodation_types: s.enabled_accommodation_types.clone(),
            status: status(STAGE_COUNT),
            partial: STAGE_COUNT == 0,
            is_locked: trip.is_locked(today),
            computation_status: trip.computations.clone(),
            stage_count: STAGE_COUNT,
            total_distance: 0.0,
            stages: Vec::new(),
            created_at: view.created_at,
            updated_at: view.updated_at,
        }
    }
}

impl TripListItem {
    /// Builds a list line of a view.
    pub fn of(view: &TripView, today: NaiveDate) -> Self {
        let trip = &view.trip;
        Self {
            id: trip.id.to_string(),
            title: trip.settings.title.clone(),
            start_date: trip.settings.start_date,
            end_date: trip.settings.end_date,
            status: status(STAGE_COUNT),
            is_locked: trip.is_locked(today),
            stage_count: STAGE_COUNT,
            total_distance: 0.0,
            created_at: view.created_at,
            updated_at: view.updated_at,
        }
    }
}
