//! The catalogue of alert codes and groups.
//!
//! Codes are a stable contract with the front end and with stored trips, so
//! they live in one place as constants; rules refer to the constants, and a
//! test checks that every emitted (code, group, severity) is listed in
//! [`CODES`].

/// Group of alerts about the ride itself (effort, light, plan continuity).
pub const GROUP_TERRAIN: &str = "terrain";
/// Group of alerts about the date (Sundays, public holidays).
pub const GROUP_CALENDAR: &str = "calendar";
/// Group of alerts about crossing a national border.
pub const GROUP_BORDER_CROSSING: &str = "border_crossing";

/// Group of alerts read off the forecast (wind, comfort, a wet ford): replaced as a whole
/// each time the weather is computed.
pub const GROUP_WEATHER: &str = "weather";

/// Stage ascent above the daily threshold.
pub const ELEVATION_GAIN: &str = "elevation_gain";
/// A sustained steep climb somewhere on the stage.
pub const STEEP_GRADIENT: &str = "steep_gradient";
/// Day longer than the estimated e-bike battery range.
pub const EBIKE_RANGE_EXCEEDED: &str = "ebike_range_exceeded";
/// Estimated arrival after the end of civil twilight.
pub const SUNSET_ARRIVAL_AFTER_TWILIGHT: &str = "sunset_arrival_after_twilight";
/// Third (sixth, …) riding day in a row.
pub const REST_DAY_SUGGESTED: &str = "rest_day_suggested";
/// Stage date is a Sunday.
pub const CALENDAR_SUNDAY: &str = "calendar_sunday";
/// Stage date is a public holiday in the start or end country.
pub const CALENDAR_PUBLIC_HOLIDAY: &str = "calendar_public_holiday";
/// 100–500 m between the previous stage's end and this stage's start, or
/// between two recorded pieces inside a day (bridged).
pub const CONTINUITY_GAP_WARNING: &str = "continuity_gap_warning";
/// More than 500 m between the previous stage's end and this stage's start,
/// or between two recorded pieces inside a day (not ridden).
pub const CONTINUITY_GAP_CRITICAL: &str = "continuity_gap_critical";
/// The day is longer than the trip's daily cap (fixed dates forced it).
pub const DAILY_DISTANCE_OVER_CAP: &str = "daily_distance_over_cap";
/// Start and end lie in different countries.
pub const BORDER_CROSSING: &str = "border_crossing";

/// Headwind of 25 km/h or more on most of the forecast days.
pub const WIND_HEADWIND: &str = "wind_headwind";
/// Comfort index of 39 or less (heat, cold, wind, humidity, rain).
pub const COMFORT_POOR_CONDITIONS: &str = "comfort_poor_conditions";
/// A ford on a day with a precipitation probability of 50 % or more.
pub const FORD_CROSSING_WET: &str = "ford_crossing_wet";

/// Every code this crate can emit, as (code, group, severity), in the order
/// in which alerts of one stage are emitted.
pub const CODES: &[(&str, &str, &str)] = &[
    (CONTINUITY_GAP_CRITICAL, GROUP_TERRAIN, "critical"),
    (CONTINUITY_GAP_WARNING, GROUP_TERRAIN, "warning"),
    (DAILY_DISTANCE_OVER_CAP, GROUP_TERRAIN, "warning"),
    (ELEVATION_GAIN, GROUP_TERRAIN, "warning"),
    (STEEP_GRADIENT, GROUP_TERRAIN, "warning"),
    (EBIKE_RANGE_EXCEEDED, GROUP_TERRAIN, "warning"),
    (SUNSET_ARRIVAL_AFTER_TWILIGHT, GROUP_TERRAIN, "warning"),
    (REST_DAY_SUGGESTED, GROUP_TERRAIN, "nudge"),
    (BORDER_CROSSING, GROUP_BORDER_CROSSING, "nudge"),
    (CALENDAR_SUNDAY, GROUP_CALENDAR, "nudge"),
    (CALENDAR_PUBLIC_HOLIDAY, GROUP_CALENDAR, "nudge"),
    (WIND_HEADWIND, GROUP_WEATHER, "warning"),
    (COMFORT_POOR_CONDITIONS, GROUP_WEATHER, "warning"),
    (FORD_CROSSING_WET, GROUP_WEATHER, "warning"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        for (i, (code, group, severity)) in CODES.iter().enumerate() {
            assert!(
                code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{code}"
            );
            assert!(
                [
                    GROUP_TERRAIN,
                    GROUP_CALENDAR,
                    GROUP_BORDER_CROSSING,
                    GROUP_WEATHER
                ]
                .contains(group)
            );
            assert!(["critical", "warning", "nudge"].contains(severity));
            assert!(
                CODES.iter().skip(i + 1).all(|(other, _, _)| other != code),
                "duplicate {code}"
            );
        }
        assert_eq!(CODES.len(), 14);
    }
}
