//! Builders shared by the integration tests.
//!
//! Stages borrow their points, so tests keep the point vectors alive in
//! locals and build stages from them with these helpers.

use chrono::NaiveDate;
use etappe_analysis::{AnalysisSettings, StageInput, StagePoint};

pub(crate) fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("valid test date")
}

/// A riding stage with no points, no date and no countries.
pub(crate) fn stage(day: u32) -> StageInput<'static> {
    StageInput {
        day_number: day,
        is_rest_day: false,
        distance_km: 50.0,
        ascent_m: Some(300.0),
        points: &[],
        start: (47.0, 6.0),
        end: (47.0, 6.0),
        date: None,
        start_country: None,
        end_country: None,
        utc_offset_minutes: None,
    }
}

pub(crate) fn rest(day: u32) -> StageInput<'static> {
    StageInput {
        is_rest_day: true,
        distance_km: 0.0,
        ascent_m: Some(0.0),
        ..stage(day)
    }
}

pub(crate) fn settings() -> AnalysisSettings {
    AnalysisSettings {
        departure_hour: 8,
        average_speed_kmh: 15.0,
        ebike_mode: false,
        climb_m_per_flat_km: 50.0,
    }
}

/// Points every `step` metres northwards from `start`, elevation from
/// `profile(distance)`.
pub(crate) fn track(
    start: (f64, f64),
    total_m: f64,
    step: f64,
    profile: impl Fn(f64) -> f64,
) -> Vec<StagePoint> {
    let n = (total_m / step).round() as usize;
    (0..=n)
        .map(|k| {
            let d = k as f64 * step;
            StagePoint {
                lat: start.0 + d / 111_195.0,
                lon: start.1,
                ele: Some(profile(d)),
                distance_m: d,
            }
        })
        .collect()
}

/// Latitude offset in degrees for `metres` northwards (haversine sphere).
pub(crate) fn north(metres: f64) -> f64 {
    metres / 111_195.08
}

pub(crate) fn codes(alerts: &[etappe_analysis::Alert]) -> Vec<&'static str> {
    alerts.iter().map(|a| a.code).collect()
}
