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
/// With nights at accommodation: no place to sleep of the rider's types within the tolerance
/// of the day's planned end (or none could be looked for); the planned cut stands.
pub const NO_BED_NEAR_TARGET: &str = "no_bed_near_target";
/// The day's climbing is unknown: its route has no heights and no source filled them.
pub const ELEVATION_UNKNOWN: &str = "elevation_unknown";
/// Start and end lie in different countries.
pub const BORDER_CROSSING: &str = "border_crossing";

/// Group of the road alerts read off OpenStreetMap (surface, traffic): replaced as a whole
/// each time the OpenStreetMap analysis runs (kept apart from `terrain`, which the geometry
/// rules own).
pub const GROUP_ROAD: &str = "road";
/// Group of the food alerts.
pub const GROUP_POIS: &str = "pois";
/// Group of the accommodation alerts.
pub const GROUP_ACCOMMODATIONS: &str = "accommodations";
/// Group of the bike-shop alert.
pub const GROUP_BIKE_SHOP: &str = "bike_shop";
/// Group of the water alert.
pub const GROUP_WATER_POINT: &str = "water_point";
/// Group of the health-service alert.
pub const GROUP_HEALTH_SERVICE: &str = "health_service";
/// Group of the cultural suggestions.
pub const GROUP_CULTURAL_POI: &str = "cultural_poi";
/// Group of the railway-station alert.
pub const GROUP_RAILWAY_STATION: &str = "railway_station";
/// Group of the ferry alert.
pub const GROUP_FERRY: &str = "ferry";
/// Group of the dry-ford alert (the wet one belongs to `weather`).
pub const GROUP_FORD: &str = "ford";

/// 500 m or more of rough surface on the day.
pub const SURFACE_ROUGH: &str = "surface_rough";
/// 500 m or more of a primary or trunk way without cycle infrastructure.
pub const TRAFFIC_MAIN_ROAD: &str = "traffic_main_road";
/// The same on a secondary road limited above 50 km/h.
pub const TRAFFIC_SECONDARY_ROAD_FAST: &str = "traffic_secondary_road_fast";
/// The same on a secondary road limited to 50 km/h or unknown.
pub const TRAFFIC_SECONDARY_ROAD_SLOW: &str = "traffic_secondary_road_slow";
/// A day of 40 km or more with no food within 2 km of the route.
pub const RESUPPLY_NONE_ON_STAGE: &str = "resupply_none_on_stage";
/// Every food point on the way is known closed at the passage time.
pub const RESUPPLY_CLOSED_AT_PASSAGE: &str = "resupply_closed_at_passage";
/// The places to sleep near the end all look closed for the season.
pub const ACCOMMODATION_SEASONAL_CLOSURE: &str = "accommodation_seasonal_closure";
/// Trips over 5 stages: no bike repair within 2 km of the day's middle.
pub const BIKE_SHOP_NONE_NEARBY: &str = "bike_shop_none_nearby";
/// More than 30 km without drinking water.
pub const WATER_POINT_GAP: &str = "water_point_gap";
/// No pharmacy, hospital or clinic within 15 km of the day's middle.
pub const HEALTH_SERVICE_NONE_NEARBY: &str = "health_service_none_nearby";
/// A museum, castle, viewpoint… within 500 m of the route.
pub const CULTURAL_POI_SUGGESTION: &str = "cultural_poi_suggestion";
/// No railway station within 10 km of the start or the end.
pub const RAILWAY_STATION_NONE_NEARBY: &str = "railway_station_none_nearby";
/// A ferry line within 100 m of the route.
pub const FERRY_CROSSING: &str = "ferry_crossing";
/// A ford within 25 m of the route.
pub const FORD_CROSSING_DRY: &str = "ford_crossing_dry";

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
    (NO_BED_NEAR_TARGET, GROUP_TERRAIN, "warning"),
    (ELEVATION_UNKNOWN, GROUP_TERRAIN, "nudge"),
    (ELEVATION_GAIN, GROUP_TERRAIN, "warning"),
    (STEEP_GRADIENT, GROUP_TERRAIN, "warning"),
    (EBIKE_RANGE_EXCEEDED, GROUP_TERRAIN, "warning"),
    (SUNSET_ARRIVAL_AFTER_TWILIGHT, GROUP_TERRAIN, "warning"),
    (REST_DAY_SUGGESTED, GROUP_TERRAIN, "nudge"),
    (BORDER_CROSSING, GROUP_BORDER_CROSSING, "nudge"),
    (CALENDAR_SUNDAY, GROUP_CALENDAR, "nudge"),
    (CALENDAR_PUBLIC_HOLIDAY, GROUP_CALENDAR, "nudge"),
    (SURFACE_ROUGH, GROUP_ROAD, "warning"),
    (TRAFFIC_MAIN_ROAD, GROUP_ROAD, "critical"),
    (TRAFFIC_SECONDARY_ROAD_FAST, GROUP_ROAD, "warning"),
    (TRAFFIC_SECONDARY_ROAD_SLOW, GROUP_ROAD, "nudge"),
    (RESUPPLY_NONE_ON_STAGE, GROUP_POIS, "nudge"),
    (RESUPPLY_CLOSED_AT_PASSAGE, GROUP_POIS, "warning"),
    (
        ACCOMMODATION_SEASONAL_CLOSURE,
        GROUP_ACCOMMODATIONS,
        "warning",
    ),
    (BIKE_SHOP_NONE_NEARBY, GROUP_BIKE_SHOP, "nudge"),
    (WATER_POINT_GAP, GROUP_WATER_POINT, "nudge"),
    (HEALTH_SERVICE_NONE_NEARBY, GROUP_HEALTH_SERVICE, "nudge"),
    (CULTURAL_POI_SUGGESTION, GROUP_CULTURAL_POI, "nudge"),
    (RAILWAY_STATION_NONE_NEARBY, GROUP_RAILWAY_STATION, "nudge"),
    (FERRY_CROSSING, GROUP_FERRY, "warning"),
    (FORD_CROSSING_DRY, GROUP_FORD, "nudge"),
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
            // The groups the route's own analysis produces, then those OpenStreetMap's does.
            assert!(
                [
                    GROUP_TERRAIN,
                    GROUP_CALENDAR,
                    GROUP_BORDER_CROSSING,
                    GROUP_WEATHER,
                ]
                .iter()
                .chain(crate::osm::OSM_GROUPS)
                .any(|g| g == group),
                "{group}"
            );
            assert!(["critical", "warning", "nudge"].contains(severity));
            assert!(
                CODES.iter().skip(i + 1).all(|(other, _, _)| other != code),
                "duplicate {code}"
            );
        }
        // The upstream system's 27 codes, plus Etappe's daily cap and unknown climbing.
        assert_eq!(CODES.len(), 30);
    }
}
