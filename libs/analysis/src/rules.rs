//! The individual rules: each turns one stage (plus the little context it
//! needs from neighbouring stages) into at most a few alerts.
//!
//! Rules are plain functions returning `Option<Alert>` / `Vec<Alert>` so
//! that each one can be tested alone and the order of alerts in a stage is
//! fixed by [`crate::analyse`], not by the rules. Every numeric input is
//! checked for finiteness here, because the caller's data comes from GPX
//! files and gazetteers that can be wrong, and a wrong number must cost an
//! alert, never a panic.

use chrono::{Datelike, NaiveDate, Weekday};
use serde_json::json;

use crate::catalogue::{
    BORDER_CROSSING, CALENDAR_PUBLIC_HOLIDAY, CALENDAR_SUNDAY, CONTINUITY_GAP_CRITICAL,
    CONTINUITY_GAP_WARNING, EBIKE_RANGE_EXCEEDED, ELEVATION_GAIN, ELEVATION_UNKNOWN,
    GROUP_BORDER_CROSSING, GROUP_CALENDAR, GROUP_TERRAIN, REST_DAY_SUGGESTED, STEEP_GRADIENT,
    SUNSET_ARRIVAL_AFTER_TWILIGHT,
};
use crate::format::{clock, clock_with_day, int_sep, one_decimal, ordinal, round1};
use crate::geo::haversine_m;
use crate::gradient::{self, MIN_GRADE, MIN_WINDOW_M};
use crate::holidays::holidays_on;
use crate::model::{Alert, Severity, StageInput};
use crate::solar::{self, CivilDusk};

/// Daily ascent above which a stage is flagged, in metres (strictly above).
pub const ELEVATION_GAIN_THRESHOLD_M: f64 = 1_200.0;
/// E-bike range on the flat, in kilometres.
pub const EBIKE_BASE_RANGE_KM: f64 = 80.0;
/// Metres of ascent that cost one kilometre of e-bike range.
pub const EBIKE_ASCENT_M_PER_KM: f64 = 25.0;
/// Riding days in a row after which a rest day is suggested.
pub const REST_DAY_EVERY: u32 = 3;
/// Gap between stages from which a warning is raised, in metres (inclusive).
pub const CONTINUITY_WARNING_M: f64 = 100.0;
/// Gap between stages above which the alert becomes critical, in metres.
pub const CONTINUITY_CRITICAL_M: f64 = 500.0;
/// Slowest average speed the product allows, in km/h.
pub const MIN_AVERAGE_SPEED_KMH: f64 = 5.0;
/// Largest UTC offset accepted from the caller (±18 h, as in ISO 8601 and
/// chrono's `FixedOffset`); anything beyond is treated as unknown.
pub const MAX_UTC_OFFSET_MINUTES: i32 = 18 * 60;

/// Settings after clamping to the ranges the rules are defined on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sanitized {
    /// 0–23.
    pub departure_hour: u8,
    /// ≥ 5 km/h, finite.
    pub average_speed_kmh: f64,
    /// Whether the e-bike rule runs.
    pub ebike_mode: bool,
    /// Metres of climbing worth one flat km (non-positive: climbing adds no time).
    pub climb_m_per_flat_km: f64,
}

impl Sanitized {
    /// Clamps the caller's settings (see [`crate::AnalysisSettings`]).
    pub fn new(settings: &crate::AnalysisSettings) -> Self {
        let speed = settings.average_speed_kmh;
        Self {
            departure_hour: settings.departure_hour.min(23),
            average_speed_kmh: if speed.is_finite() {
                speed.max(MIN_AVERAGE_SPEED_KMH)
            } else {
                MIN_AVERAGE_SPEED_KMH
            },
            ebike_mode: settings.ebike_mode,
            climb_m_per_flat_km: settings.climb_m_per_flat_km,
        }
    }
}

pub(crate) fn alert(
    code: &'static str,
    severity: Severity,
    group: &'static str,
    message: String,
    parameters: serde_json::Value,
    at: Option<(f64, f64)>,
) -> Alert {
    // Only finite coordinates are worth sending to a map.
    let at = at.filter(|(lat, lon)| lat.is_finite() && lon.is_finite());
    Alert {
        code,
        severity,
        group,
        message,
        parameters,
        lat: at.map(|p| p.0),
        lon: at.map(|p| p.1),
    }
}

/// `elevation_unknown`: the day's climbing is not known, so the climbing rules could not judge
/// it (they stay silent rather than judge a mountain day as flat).
pub fn elevation_unknown(stage: &StageInput<'_>) -> Option<Alert> {
    if stage.ascent_m.is_some() {
        return None;
    }
    Some(alert(
        ELEVATION_UNKNOWN,
        Severity::Nudge,
        GROUP_TERRAIN,
        format!(
            "Day {}'s climbing is unknown: its route has no elevation, so climbs and steep ramps could not be checked.",
            stage.day_number
        ),
        json!({
            "howToFix": "configure an elevation source: ETAPPE_ELEVATION_URL (Open-Meteo), SRTM tiles imported with `etappe elevation import`, or ETAPPE_ONLINE=1; or use a route file with elevation",
            "skipped": [ELEVATION_GAIN, STEEP_GRADIENT, EBIKE_RANGE_EXCEEDED],
        }),
        None,
    ))
}

/// `elevation_gain`: ascent strictly above 1,200 m.
pub fn elevation_gain(stage: &StageInput<'_>) -> Option<Alert> {
    let ascent = stage.ascent_m?;
    if !(ascent.is_finite() && ascent > ELEVATION_GAIN_THRESHOLD_M) {
        return None;
    }
    Some(alert(
        ELEVATION_GAIN,
        Severity::Warning,
        GROUP_TERRAIN,
        format!(
            "Day {} climbs {} m, more than {} m.",
            stage.day_number,
            int_sep(ascent),
            int_sep(ELEVATION_GAIN_THRESHOLD_M)
        ),
        json!({
            "ascentM": round1(ascent),
            "thresholdM": ELEVATION_GAIN_THRESHOLD_M,
        }),
        None,
    ))
}

/// `steep_gradient`: the worst sustained ≥ 8 % climb over ≥ 500 m, see
/// [`crate::gradient`] for the exact definition.
pub fn steep_gradient(stage: &StageInput<'_>) -> Option<Alert> {
    let run = gradient::worst_steep_run(stage.points)?;
    let avg_pct = run.average_grade * 100.0;
    let max_pct = run.max_window_grade * 100.0;
    Some(alert(
        STEEP_GRADIENT,
        Severity::Warning,
        GROUP_TERRAIN,
        format!(
            "Day {} has a {} km climb averaging {} % (steepest 500 m: {} %), starting at km {}.",
            stage.day_number,
            one_decimal(run.length_m / 1_000.0),
            one_decimal(avg_pct),
            one_decimal(max_pct),
            one_decimal(run.start_distance_m / 1_000.0),
        ),
        json!({
            "startDistanceKm": round1(run.start_distance_m / 1_000.0),
            "lengthM": run.length_m.round(),
            "riseM": run.rise_m.round(),
            "averageGradePct": round1(avg_pct),
            "maxGradePct": round1(max_pct),
            "thresholdPct": MIN_GRADE * 100.0,
            "minLengthM": MIN_WINDOW_M,
            "runCount": run.run_count,
        }),
        Some((run.start_lat, run.start_lon)),
    ))
}

/// E-bike range for a day with `ascent_m` of climbing: 80 km − D+/25,
/// never below 0 km (a negative range has no meaning; with the floor a
/// 0 km day is never "beyond range").
pub fn ebike_range_km(ascent_m: f64) -> f64 {
    (EBIKE_BASE_RANGE_KM - ascent_m.max(0.0) / EBIKE_ASCENT_M_PER_KM).max(0.0)
}

/// `ebike_range_exceeded`: distance strictly above [`ebike_range_km`].
pub fn ebike_range(stage: &StageInput<'_>, settings: &Sanitized) -> Option<Alert> {
    let ascent = stage.ascent_m?;
    if !settings.ebike_mode || !stage.distance_km.is_finite() || !ascent.is_finite() {
        return None;
    }
    let range = ebike_range_km(ascent);
    if stage.distance_km <= range {
        return None;
    }
    Some(alert(
        EBIKE_RANGE_EXCEEDED,
        Severity::Warning,
        GROUP_TERRAIN,
        format!(
            "Day {} covers {} km, beyond the estimated e-bike range of {} km with {} m of climbing.",
            stage.day_number,
            one_decimal(stage.distance_km),
            one_decimal(range),
            int_sep(ascent),
        ),
        json!({
            "distanceKm": round1(stage.distance_km),
            "rangeKm": round1(range),
            "ascentM": round1(ascent),
            "baseRangeKm": EBIKE_BASE_RANGE_KM,
            "ascentMPerKm": EBIKE_ASCENT_M_PER_KM,
        }),
        None,
    ))
}

/// The UTC offset used for local times and where it came from.
fn utc_offset(stage: &StageInput<'_>) -> Option<(i32, &'static str)> {
    if let Some(given) = stage.utc_offset_minutes
        && (-MAX_UTC_OFFSET_MINUTES..=MAX_UTC_OFFSET_MINUTES).contains(&given)
    {
        return Some((given, "given"));
    }
    let lon = stage.end.1;
    if !lon.is_finite() {
        return None;
    }
    // Wrap first so that 190° E estimates like 170° W.
    let lon = (lon + 180.0).rem_euclid(360.0) - 180.0;
    // |lon / 15| ≤ 12, so the cast cannot saturate.
    let hours = (lon / 15.0).round() as i32;
    Some((hours * 60, "estimated"))
}

/// When a day's ride ends, as the sunset rule reckons it: leaving at the departure hour and
/// riding the day's effort (its distance plus its climbing in flat km, `etappe_geo::effort`)
/// at the average speed, without stops; the rider's page shows it beside the day so the two
/// agree.
#[derive(Debug, Clone, PartialEq)]
pub struct RideTiming {
    /// Hours in the saddle.
    pub riding_hours: f64,
    /// Minutes after the start day's local midnight at arrival.
    pub arrival_minutes: f64,
    /// The arrival's local clock, "HH:MM".
    pub arrival_local: String,
    /// 0 on the day itself, 1 when the ride ends after midnight.
    pub arrival_day_offset: i64,
}

/// The ride timing of a day of `distance_km` climbing `ascent_m` (unknown: none counted)
/// under `settings`.
pub fn ride_timing(distance_km: f64, ascent_m: Option<f64>, settings: &Sanitized) -> RideTiming {
    let riding_hours = etappe_geo::effort::riding_hours(
        distance_km,
        ascent_m,
        settings.climb_m_per_flat_km,
        settings.average_speed_kmh,
    );
    let arrival_minutes = f64::from(settings.departure_hour) * 60.0 + riding_hours * 60.0;
    let (arrival_local, arrival_day_offset) = clock(arrival_minutes);
    RideTiming {
        riding_hours,
        arrival_minutes,
        arrival_local,
        arrival_day_offset,
    }
}

/// `sunset_arrival_after_twilight`.
///
/// Arrival (local) = departure hour + riding hours ([`ride_timing`]: effort / speed). The alert
/// fires when arrival is strictly later than civil dusk at the end point on
/// the stage date. No dusk because the Sun stays above −6° all night (white
/// nights, polar day): no alert. No civil daylight at all (civil polar
/// night): the alert fires for every riding day with a positive distance,
/// since the whole ride is in the dark; `polarNight: true` marks it.
pub fn sunset(stage: &StageInput<'_>, settings: &Sanitized) -> Option<Alert> {
    let date = stage.date?;
    let (lat, lon) = stage.end;
    if !stage.distance_km.is_finite() {
        return None;
    }
    let distance = stage.distance_km.max(0.0);
    let (offset, offset_source) = utc_offset(stage)?;
    let RideTiming {
        riding_hours,
        arrival_minutes: arrival_min,
        arrival_local: arrival_clock,
        arrival_day_offset: arrival_day,
    } = ride_timing(distance, stage.ascent_m, settings);
    let date_text = date.format("%Y-%m-%d").to_string();

    match solar::civil_dusk(date, lat, lon)? {
        CivilDusk::NeverDark => None,
        CivilDusk::NeverLight => {
            if distance <= 0.0 {
                return None;
            }
            Some(alert(
                SUNSET_ARRIVAL_AFTER_TWILIGHT,
                Severity::Warning,
                GROUP_TERRAIN,
                format!(
                    "Day {}: the sun stays more than 6° below the horizon all day at the end point, so the whole ride is in the dark.",
                    stage.day_number
                ),
                json!({
                    "date": date_text,
                    "polarNight": true,
                    "arrivalLocal": arrival_clock,
                    "arrivalDayOffset": arrival_day,
                    "civilDuskLocal": null,
                    "utcOffsetMinutes": offset,
                    "offsetSource": offset_source,
                    "departureHour": settings.departure_hour,
                    "averageSpeedKmh": round1(settings.average_speed_kmh),
                    "ridingHours": round1(riding_hours),
                }),
                Some((lat, lon)),
            ))
        }
        CivilDusk::At { utc_minutes } => {
            let dusk_min = utc_minutes + f64::from(offset);
            if arrival_min <= dusk_min {
                return None;
            }
            let (dusk_clock, dusk_day) = clock(dusk_min);
            let offset_note = if offset_source == "given" {
                "local time"
            } else {
                "local time estimated from longitude"
            };
            Some(alert(
                SUNSET_ARRIVAL_AFTER_TWILIGHT,
                Severity::Warning,
                GROUP_TERRAIN,
                format!(
                    "Day {} arrives around {}, after civil dusk at {} ({}).",
                    stage.day_number,
                    clock_with_day(arrival_min),
                    clock_with_day(dusk_min),
                    offset_note,
                ),
                json!({
                    "date": date_text,
                    "polarNight": false,
                    "arrivalLocal": arrival_clock,
                    "arrivalDayOffset": arrival_day,
                    "civilDuskLocal": dusk_clock,
                    "civilDuskDayOffset": dusk_day,
                    "minutesAfterDusk": (arrival_min - dusk_min).round(),
                    "utcOffsetMinutes": offset,
                    "offsetSource": offset_source,
                    "departureHour": settings.departure_hour,
                    "averageSpeedKmh": round1(settings.average_speed_kmh),
                    "ridingHours": round1(riding_hours),
                }),
                Some((lat, lon)),
            ))
        }
    }
}

/// `rest_day_suggested`: on the 3rd, 6th, … riding day in a row.
/// `consecutive` is this stage's position in the current streak (1-based).
pub fn rest_day(stage: &StageInput<'_>, consecutive: u32) -> Option<Alert> {
    if consecutive == 0 || !consecutive.is_multiple_of(REST_DAY_EVERY) {
        return None;
    }
    Some(alert(
        REST_DAY_SUGGESTED,
        Severity::Nudge,
        GROUP_TERRAIN,
        format!(
            "Day {} is the {} riding day in a row; consider a rest day.",
            stage.day_number,
            ordinal(consecutive)
        ),
        json!({
            "consecutiveRidingDays": consecutive,
            "everyDays": REST_DAY_EVERY,
        }),
        None,
    ))
}

/// `continuity_gap_warning` / `continuity_gap_critical`: the haversine gap
/// from `previous`'s end to this stage's start is in [100, 500] m (warning)
/// or above 500 m (critical). Reported at this stage's start.
pub fn continuity(stage: &StageInput<'_>, previous: &StageInput<'_>) -> Option<Alert> {
    let gap = haversine_m(previous.end, stage.start);
    if !gap.is_finite() || gap < CONTINUITY_WARNING_M {
        return None;
    }
    let (code, severity) = if gap > CONTINUITY_CRITICAL_M {
        (CONTINUITY_GAP_CRITICAL, Severity::Critical)
    } else {
        (CONTINUITY_GAP_WARNING, Severity::Warning)
    };
    Some(alert(
        code,
        severity,
        GROUP_TERRAIN,
        format!(
            "Day {} starts {} m from where day {} ends.",
            stage.day_number,
            int_sep(gap),
            previous.day_number
        ),
        json!({
            "gapM": gap.round(),
            "previousDayNumber": previous.day_number,
            "fromLat": previous.end.0,
            "fromLon": previous.end.1,
            "toLat": stage.start.0,
            "toLon": stage.start.1,
            "warningM": CONTINUITY_WARNING_M,
            "criticalM": CONTINUITY_CRITICAL_M,
        }),
        Some(stage.start),
    ))
}

/// A caller's country code, accepted only as two ASCII letters (then
/// upper-cased). Anything else is treated as unknown, which is also what
/// keeps caller text out of messages.
pub fn country_code(raw: Option<&str>) -> Option<String> {
    let code = raw?.trim();
    (code.len() == 2 && code.bytes().all(|b| b.is_ascii_alphabetic()))
        .then(|| code.to_ascii_uppercase())
}

/// `border_crossing`: both countries known and different.
pub fn border_crossing(stage: &StageInput<'_>) -> Option<Alert> {
    let from = country_code(stage.start_country.as_deref())?;
    let to = country_code(stage.end_country.as_deref())?;
    if from == to {
        return None;
    }
    let message = format!("Day {} crosses from {from} to {to}.", stage.day_number);
    Some(alert(
        BORDER_CROSSING,
        Severity::Nudge,
        GROUP_BORDER_CROSSING,
        message,
        json!({ "fromCountry": from, "toCountry": to }),
        None,
    ))
}

fn iso_date(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// `calendar_sunday`.
pub fn sunday(stage: &StageInput<'_>) -> Option<Alert> {
    let date = stage.date?;
    if date.weekday() != Weekday::Sun {
        return None;
    }
    Some(alert(
        CALENDAR_SUNDAY,
        Severity::Nudge,
        GROUP_CALENDAR,
        format!(
            "Day {} ({}) is a Sunday; many shops are closed.",
            stage.day_number,
            iso_date(date)
        ),
        json!({ "date": iso_date(date) }),
        None,
    ))
}

/// `calendar_public_holiday`: one alert per distinct known country (start,
/// then end) for which the date is a public holiday.
pub fn public_holidays(stage: &StageInput<'_>) -> Vec<Alert> {
    let Some(date) = stage.date else {
        return Vec::new();
    };
    let mut countries: Vec<String> = Vec::with_capacity(2);
    for raw in [stage.start_country.as_deref(), stage.end_country.as_deref()] {
        if let Some(code) = country_code(raw)
            && !countries.contains(&code)
        {
            countries.push(code);
        }
    }
    countries
        .into_iter()
        .filter_map(|country| {
            let names = holidays_on(&country, date);
            if names.is_empty() {
                return None;
            }
            let joined = names.join(" and ");
            Some(alert(
                CALENDAR_PUBLIC_HOLIDAY,
                Severity::Nudge,
                GROUP_CALENDAR,
                format!(
                    "Day {} ({}) is {} in {}; shops may be closed.",
                    stage.day_number,
                    iso_date(date),
                    joined,
                    country
                ),
                json!({
                    "date": iso_date(date),
                    "country": country,
                    "holiday": joined,
                    "holidays": names,
                }),
                None,
            ))
        })
        .collect()
}
