//! The weather of each day, from forecasts the caller fetched: where the day stands against
//! the forecast horizon, when the rider is on the road (departure hour + the day's riding
//! time), what the forecast says at the day's start, middle and end at those hours, the wind
//! relative to the day's heading, a comfort index, and the weather alerts.
//!
//! Pure like the rest of the crate: forecasts and "today" come in as values. The thresholds
//! are the upstream planner's: headwind 25 km/h on at least 60 % of the days with a forecast,
//! comfort 39 or less, a ford on a day with a precipitation probability of 50 % or more.

use chrono::{Days, NaiveDate};
use serde::Serialize;
use serde_json::json;

use crate::catalogue::{COMFORT_POOR_CONDITIONS, FORD_CROSSING_WET, GROUP_WEATHER, WIND_HEADWIND};
use crate::model::{Alert, Severity};

/// Days of forecast from today: the last one is today + 15.
pub const HORIZON_DAYS: u64 = 16;
/// Wind at or above this speed against the rider counts as a headwind day, km/h.
pub const HEADWIND_KMH: f64 = 25.0;
/// Share of the days with a forecast that must be headwind days to raise the alert, %.
pub const HEADWIND_SHARE_PERCENT: f64 = 60.0;
/// A comfort index at or below this is poor.
pub const POOR_COMFORT: u8 = 39;
/// A ford on a day at least this likely to see rain is a wet ford, %.
pub const WET_FORD_PERCENT: f64 = 50.0;
/// A day whose start and end are closer than this has no meaningful heading, metres.
const MIN_BEARING_DISTANCE_M: f64 = 100.0;
/// An angle between wind and heading up to this is a headwind, degrees.
const HEADWIND_MAX_ANGLE: f64 = 60.0;
/// An angle from this on is a tailwind, degrees.
const TAILWIND_MIN_ANGLE: f64 = 120.0;

/// Where a day stands against the forecast horizon, seen from a given day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Horizon {
    /// The trip has no dates: no forecast can be asked for.
    Undated,
    /// Before today.
    Past,
    /// Today to today + 15: a forecast exists.
    Within,
    /// After today + 15: not forecast yet.
    Beyond,
}

/// The horizon state of `date` seen from `today`.
pub fn horizon(date: Option<NaiveDate>, today: NaiveDate) -> Horizon {
    let Some(date) = date else {
        return Horizon::Undated;
    };
    if date < today {
        return Horizon::Past;
    }
    match today.checked_add_days(Days::new(HORIZON_DAYS - 1)) {
        Some(last) if date <= last => Horizon::Within,
        _ => Horizon::Beyond,
    }
}

/// The local hours at which the rider passes the day's start, middle and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RidingWindow {
    pub start_hour: u8,
    pub middle_hour: u8,
    pub end_hour: u8,
}

/// Departure at `departure_hour`, then `distance_km` at `average_speed_kmh` (at least
/// 5 km/h, the product's minimum). A ride past midnight is read at 23:00: the forecast is
/// per date, and a rider still out then has bigger worries than the wind.
pub fn riding_window(departure_hour: u8, distance_km: f64, average_speed_kmh: f64) -> RidingWindow {
    let departure = f64::from(departure_hour.min(23));
    let speed = if average_speed_kmh.is_finite() {
        average_speed_kmh.max(5.0)
    } else {
        5.0
    };
    let hours = if distance_km.is_finite() {
        distance_km.max(0.0) / speed
    } else {
        0.0
    };
    let at = |share: f64| (departure + hours * share).round().clamp(0.0, 23.0) as u8;
    RidingWindow {
        start_hour: at(0.0),
        middle_hour: at(0.5),
        end_hour: at(1.0),
    }
}

/// One forecast hour at one place; `None` where the model gives no value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sample {
    pub temperature_c: Option<f64>,
    pub precipitation_probability: Option<f64>,
    pub wind_speed_kmh: Option<f64>,
    /// Where the wind comes from, degrees clockwise from north (meteorological).
    pub wind_direction_deg: Option<f64>,
    pub relative_humidity: Option<f64>,
}

/// The wind against the day's heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RelativeWind {
    Headwind,
    Tailwind,
    Crosswind,
    /// No heading (a rest day, a day that ends where it starts) or no wind direction.
    Unknown,
}

impl RelativeWind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Headwind => "headwind",
            Self::Tailwind => "tailwind",
            Self::Crosswind => "crosswind",
            Self::Unknown => "unknown",
        }
    }
}

/// Initial great-circle bearing from `from` to `to`, degrees in [0, 360); `None` when the
/// two are too close for a heading to mean anything.
pub fn initial_bearing(from: (f64, f64), to: (f64, f64)) -> Option<f64> {
    if etappe_geo::haversine_m(from.0, from.1, to.0, to.1) < MIN_BEARING_DISTANCE_M {
        return None;
    }
    let (lat1, lat2) = (from.0.to_radians(), to.0.to_radians());
    let dlon = (to.1 - from.1).to_radians();
    let y = dlon.sin() * lat2.cos();
    let x = lat1.cos() * lat2.sin() - lat1.sin() * lat2.cos() * dlon.cos();
    let bearing = y.atan2(x).to_degrees().rem_euclid(360.0);
    bearing.is_finite().then_some(bearing)
}

/// The wind (coming from `wind_from_deg`, snapped to the 8 compass points) against a day
/// heading `bearing`: a wind from where the rider is going is a headwind. Angles up to 60°
/// are headwind, from 120° tailwind, between them crosswind.
pub fn relative_wind(wind_from_deg: Option<f64>, bearing: Option<f64>) -> RelativeWind {
    let (Some(wind), Some(bearing)) = (wind_from_deg, bearing) else {
        return RelativeWind::Unknown;
    };
    if !wind.is_finite() || !bearing.is_finite() {
        return RelativeWind::Unknown;
    }
    let snapped = ((wind.rem_euclid(360.0) / 45.0).round() * 45.0).rem_euclid(360.0);
    let angle = (snapped - bearing).rem_euclid(360.0);
    let folded = if angle > 180.0 { 360.0 - angle } else { angle };
    if folded <= HEADWIND_MAX_ANGLE {
        RelativeWind::Headwind
    } else if folded >= TAILWIND_MIN_ANGLE {
        RelativeWind::Tailwind
    } else {
        RelativeWind::Crosswind
    }
}

/// The comfort index, 0–100: 100 less a penalty for heat above 30 °C or cold below 5 °C
/// (2 a degree, at most 20), wind above 20 km/h (1.5 a km/h, at most 30), humidity above
/// 80 % (0.5 a point, at most 20) and rain chance above 20 % (0.5 a point, at most 30);
/// each penalty truncated to a whole number. Missing values cost nothing.
pub fn comfort_index(
    temperature_max_c: Option<f64>,
    wind_speed_kmh: Option<f64>,
    relative_humidity: Option<f64>,
    precipitation_probability: Option<f64>,
) -> u8 {
    let penalty = |value: Option<f64>, over: fn(f64) -> f64, per: f64, cap: f64| -> i64 {
        value
            .filter(|v| v.is_finite())
            .map(over)
            .filter(|excess| *excess > 0.0)
            .map_or(0, |excess| (excess * per).min(cap).trunc() as i64)
    };
    let heat = penalty(temperature_max_c, |t| t - 30.0, 2.0, 20.0);
    let cold = penalty(temperature_max_c, |t| 5.0 - t, 2.0, 20.0);
    let wind = penalty(wind_speed_kmh, |w| w - 20.0, 1.5, 30.0);
    let humid = penalty(relative_humidity, |h| h - 80.0, 0.5, 20.0);
    let rain = penalty(precipitation_probability, |p| p - 20.0, 0.5, 30.0);
    (100 - heat - cold - wind - humid - rain).clamp(0, 100) as u8
}

/// What the forecast says about a day's ride.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DaySummary {
    pub temperature_min_c: Option<f64>,
    pub temperature_max_c: Option<f64>,
    pub precipitation_probability_max: Option<f64>,
    pub wind_speed_max_kmh: Option<f64>,
    /// The direction of the strongest wind sampled, degrees (where it comes from).
    pub wind_direction_deg: Option<f64>,
    pub relative_wind: RelativeWind,
    pub relative_humidity: Option<f64>,
    pub comfort: u8,
}

fn fold(values: impl Iterator<Item = Option<f64>>, pick: fn(f64, f64) -> f64) -> Option<f64> {
    values.flatten().filter(|v| v.is_finite()).reduce(pick)
}

/// Summarises the samples at the day's start, middle and end (each at the hour the rider
/// passes there; `None` where the forecast has no such hour) against the day's heading.
/// No sample at all: no summary (the day reads `unavailable`).
pub fn summarise(samples: &[Option<Sample>], bearing: Option<f64>) -> Option<DaySummary> {
    let present: Vec<&Sample> = samples.iter().flatten().collect();
    if present.is_empty() {
        return None;
    }
    let temperature_min_c = fold(present.iter().map(|s| s.temperature_c), f64::min);
    let temperature_max_c = fold(present.iter().map(|s| s.temperature_c), f64::max);
    let precipitation_probability_max = fold(
        present.iter().map(|s| s.precipitation_probability),
        f64::max,
    );
    let strongest = present
        .iter()
        .filter(|s| s.wind_speed_kmh.is_some_and(f64::is_finite))
        .max_by(|a, b| {
            a.wind_speed_kmh
                .partial_cmp(&b.wind_speed_kmh)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    let wind_speed_max_kmh = strongest.and_then(|s| s.wind_speed_kmh);
    let wind_direction_deg = strongest.and_then(|s| s.wind_direction_deg);
    // The humidity of the middle of the day when sampled (the day's typical hour).
    let relative_humidity = samples
        .get(samples.len() / 2)
        .copied()
        .flatten()
        .and_then(|s| s.relative_humidity)
        .or_else(|| present.iter().find_map(|s| s.relative_humidity));
    Some(DaySummary {
        temperature_min_c,
        temperature_max_c,
        precipitation_probability_max,
        wind_speed_max_kmh,
        wind_direction_deg,
        relative_wind: relative_wind(wind_direction_deg, bearing),
        relative_humidity,
        comfort: comfort_index(
            temperature_max_c,
            wind_speed_max_kmh,
            relative_humidity,
            precipitation_probability_max,
        ),
    })
}

/// One day as the weather rules see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeatherDay {
    pub day_number: u32,
    /// The summary, when the day has a forecast.
    pub summary: Option<DaySummary>,
    /// Fords on the day's roads (from the OpenStreetMap analysis; 0 when unknown).
    pub fords: usize,
    /// Where the day starts: where its alerts are placed.
    pub start: (f64, f64),
}

fn alert(
    code: &'static str,
    message: String,
    parameters: serde_json::Value,
    at: (f64, f64),
) -> Alert {
    Alert {
        code,
        severity: Severity::Warning,
        group: GROUP_WEATHER,
        message,
        parameters,
        lat: Some(at.0),
        lon: Some(at.1),
    }
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Whether a day is a headwind day: wind of at least 25 km/h against the rider.
pub fn is_headwind_day(summary: &DaySummary) -> bool {
    summary.relative_wind == RelativeWind::Headwind
        && summary
            .wind_speed_max_kmh
            .is_some_and(|w| w >= HEADWIND_KMH)
}

/// `wind_headwind` on each headwind day, raised only when headwind days are at least 60 %
/// of the days with a forecast (the upstream rule: a single windy day is weather, most of
/// a trip against the wind is a route chosen the wrong way round).
pub fn headwind(days: &[WeatherDay]) -> Vec<Option<Alert>> {
    let forecast = days.iter().filter(|d| d.summary.is_some()).count();
    let windy = days
        .iter()
        .filter(|d| d.summary.as_ref().is_some_and(is_headwind_day))
        .count();
    let raised = windy > 0 && (windy as f64) * 100.0 >= HEADWIND_SHARE_PERCENT * (forecast as f64);
    days.iter()
        .map(|day| {
            let summary = day.summary.as_ref().filter(|s| raised && is_headwind_day(s))?;
            let speed = summary.wind_speed_max_kmh?;
            Some(alert(
                WIND_HEADWIND,
                format!(
                    "Day {}: headwind up to {} km/h ({windy} of {forecast} forecast days ride into the wind).",
                    day.day_number,
                    speed.round()
                ),
                json!({
                    "windSpeedKmh": round1(speed),
                    "windDirectionDeg": summary.wind_direction_deg.map(round1),
                    "thresholdKmh": HEADWIND_KMH,
                    "headwindDays": windy,
                    "forecastDays": forecast,
                    "sharePercentRequired": HEADWIND_SHARE_PERCENT,
                }),
                day.start,
            ))
        })
        .collect()
}

/// `comfort_poor_conditions` when the day's comfort index is 39 or less.
pub fn poor_comfort(day: &WeatherDay) -> Option<Alert> {
    let summary = day.summary.as_ref()?;
    (summary.comfort <= POOR_COMFORT).then(|| {
        alert(
            COMFORT_POOR_CONDITIONS,
            format!(
                "Day {}: poor riding conditions forecast (comfort {} of 100).",
                day.day_number, summary.comfort
            ),
            json!({
                "comfort": summary.comfort,
                "threshold": POOR_COMFORT,
                "temperatureMaxC": summary.temperature_max_c.map(round1),
                "windSpeedKmh": summary.wind_speed_max_kmh.map(round1),
                "relativeHumidity": summary.relative_humidity.map(round1),
                "precipitationProbability": summary.precipitation_probability_max.map(round1),
            }),
            day.start,
        )
    })
}

/// `ford_crossing_wet` when the day crosses at least one ford and rain is at least 50 %
/// likely: a ford that is a splash when dry can be impassable after rain.
pub fn wet_ford(day: &WeatherDay) -> Option<Alert> {
    let chance = day.summary.as_ref()?.precipitation_probability_max?;
    (day.fords > 0 && chance >= WET_FORD_PERCENT).then(|| {
        alert(
            FORD_CROSSING_WET,
            format!(
                "Day {}: {} ford(s) on the way with a {}% chance of rain; the water may be high.",
                day.day_number,
                day.fords,
                chance.round()
            ),
            json!({
                "fords": day.fords,
                "precipitationProbability": round1(chance),
                "thresholdPercent": WET_FORD_PERCENT,
            }),
            day.start,
        )
    })
}

/// Every weather alert of every day, in the order of `days` (and of the catalogue within a
/// day): the weather group, replaced as a whole each time the weather is computed.
pub fn weather_alerts(days: &[WeatherDay]) -> Vec<Vec<Alert>> {
    headwind(days)
        .into_iter()
        .zip(days)
        .map(|(wind, day)| {
            let mut alerts: Vec<Alert> = wind.into_iter().collect();
            alerts.extend(poor_comfort(day));
            alerts.extend(wet_ford(day));
            alerts
        })
        .collect()
}

#[cfg(test)]
mod tests;
