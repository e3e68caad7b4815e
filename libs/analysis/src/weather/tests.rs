//! The weather rules at and around their thresholds.

use super::*;

fn d(s: &str) -> NaiveDate {
    s.parse().expect("date")
}

fn summary(wind: f64, relative: RelativeWind, rain: f64) -> DaySummary {
    DaySummary {
        temperature_min_c: Some(12.0),
        temperature_max_c: Some(19.0),
        precipitation_probability_max: Some(rain),
        wind_speed_max_kmh: Some(wind),
        wind_direction_deg: Some(0.0),
        relative_wind: relative,
        relative_humidity: Some(60.0),
        comfort: comfort_index(Some(19.0), Some(wind), Some(60.0), Some(rain)),
    }
}

fn day(n: u32, summary: Option<DaySummary>, fords: usize) -> WeatherDay {
    WeatherDay {
        day_number: n,
        summary,
        fords,
        start: (47.0, 7.0),
    }
}

#[test]
fn the_horizon_holds_today_to_today_plus_fifteen() {
    let today = d("2026-07-01");
    assert_eq!(horizon(None, today), Horizon::Undated);
    assert_eq!(horizon(Some(d("2026-06-30")), today), Horizon::Past);
    assert_eq!(horizon(Some(today), today), Horizon::Within);
    assert_eq!(horizon(Some(d("2026-07-16")), today), Horizon::Within);
    assert_eq!(horizon(Some(d("2026-07-17")), today), Horizon::Beyond);
}

#[test]
fn the_riding_window_follows_the_pace() {
    // 90 km at 15 km/h from 08:00: 6 h, so 08, 11, 14.
    assert_eq!(
        riding_window(8, 90.0, 15.0),
        RidingWindow {
            start_hour: 8,
            middle_hour: 11,
            end_hour: 14
        }
    );
    // Faster: 90 km at 30 km/h, 3 h: 08, 10 (9.5 rounds up), 11.
    assert_eq!(riding_window(8, 90.0, 30.0).middle_hour, 10);
    assert_eq!(riding_window(8, 90.0, 30.0).end_hour, 11);
    // A rest day (0 km) is read at the departure hour; a ride past midnight at 23:00.
    assert_eq!(riding_window(9, 0.0, 15.0).end_hour, 9);
    assert_eq!(riding_window(20, 200.0, 10.0).end_hour, 23);
    // Nonsense speeds are raised to 5 km/h rather than dividing by zero.
    assert_eq!(riding_window(8, 10.0, 0.0).end_hour, 10);
    assert_eq!(riding_window(8, f64::NAN, f64::NAN).end_hour, 8);
}

#[test]
fn samples_at_start_middle_and_end_are_summarised() {
    let at = |t: f64, rain: f64, wind: f64, dir: f64| Sample {
        temperature_c: Some(t),
        precipitation_probability: Some(rain),
        wind_speed_kmh: Some(wind),
        wind_direction_deg: Some(dir),
        relative_humidity: Some(t * 4.0),
    };
    // Heading north; the strongest wind (28 km/h) comes from the north.
    let s = summarise(
        &[
            Some(at(12.0, 10.0, 10.0, 180.0)),
            Some(at(19.0, 40.0, 28.0, 10.0)),
            Some(at(15.0, 30.0, 20.0, 90.0)),
        ],
        Some(0.0),
    )
    .expect("a summary");
    assert_eq!(s.temperature_min_c, Some(12.0));
    assert_eq!(s.temperature_max_c, Some(19.0));
    assert_eq!(s.precipitation_probability_max, Some(40.0));
    assert_eq!(s.wind_speed_max_kmh, Some(28.0));
    assert_eq!(s.wind_direction_deg, Some(10.0));
    assert_eq!(s.relative_wind, RelativeWind::Headwind);
    assert_eq!(s.relative_humidity, Some(76.0), "the middle sample's");
    // Missing samples are skipped; none at all is no summary.
    assert!(summarise(&[None, Some(at(5.0, 0.0, 0.0, 0.0)), None], None).is_some());
    assert_eq!(summarise(&[None, None, None], Some(0.0)), None);
}

#[test]
fn relative_wind_turns_at_60_and_120_degrees() {
    let heading = Some(0.0);
    // Wind directions already on compass points, so snapping keeps them.
    assert_eq!(relative_wind(Some(0.0), heading), RelativeWind::Headwind);
    assert_eq!(relative_wind(Some(45.0), heading), RelativeWind::Headwind);
    assert_eq!(relative_wind(Some(90.0), heading), RelativeWind::Crosswind);
    assert_eq!(relative_wind(Some(135.0), heading), RelativeWind::Tailwind);
    assert_eq!(relative_wind(Some(180.0), heading), RelativeWind::Tailwind);
    // Exactly 60° and 120° off the heading (wind from 0°, heading 300° and 240°).
    assert_eq!(
        relative_wind(Some(0.0), Some(300.0)),
        RelativeWind::Headwind
    );
    assert_eq!(
        relative_wind(Some(0.0), Some(299.0)),
        RelativeWind::Crosswind
    );
    assert_eq!(
        relative_wind(Some(0.0), Some(240.0)),
        RelativeWind::Tailwind
    );
    assert_eq!(
        relative_wind(Some(0.0), Some(241.0)),
        RelativeWind::Crosswind
    );
    // 20° snaps to north (0°): a headwind for a rider going north.
    assert_eq!(relative_wind(Some(20.0), heading), RelativeWind::Headwind);
    assert_eq!(relative_wind(None, heading), RelativeWind::Unknown);
    assert_eq!(relative_wind(Some(0.0), None), RelativeWind::Unknown);
}

#[test]
fn a_tiny_day_has_no_heading() {
    assert_eq!(initial_bearing((47.0, 7.0), (47.0, 7.0005)), None);
    let north = initial_bearing((47.0, 7.0), (47.1, 7.0)).expect("heading");
    assert!(
        north.abs() < 0.01 || (north - 360.0).abs() < 0.01,
        "{north}"
    );
    let east = initial_bearing((0.0, 7.0), (0.0, 7.1)).expect("heading");
    assert!((east - 90.0).abs() < 0.01, "{east}");
}

#[test]
fn comfort_is_poor_from_39_down() {
    assert_eq!(
        comfort_index(Some(20.0), Some(10.0), Some(50.0), Some(0.0)),
        100
    );
    // Rain 100 % (−30) and wind 40 km/h (−30): 40, not poor.
    assert_eq!(
        comfort_index(Some(20.0), Some(40.0), Some(50.0), Some(100.0)),
        40
    );
    // Humidity 82 % (−1) more: 39, poor.
    assert_eq!(
        comfort_index(Some(20.0), Some(40.0), Some(82.0), Some(100.0)),
        39
    );
    // Each penalty is capped and truncated; heat and cold use the day's maximum.
    assert_eq!(comfort_index(Some(45.0), None, None, None), 80);
    assert_eq!(
        comfort_index(Some(4.6), None, None, None),
        100,
        "0.8 truncates to 0"
    );
    // Every penalty at its cap but humidity (100 % costs 10): 100 − 20 − 30 − 10 − 30.
    assert_eq!(
        comfort_index(Some(-20.0), Some(200.0), Some(100.0), Some(100.0)),
        10
    );

    let at = |comfort: u8| {
        let mut s = summary(10.0, RelativeWind::Crosswind, 0.0);
        s.comfort = comfort;
        poor_comfort(&day(3, Some(s), 0))
    };
    let poor = at(39).expect("39 is poor");
    assert_eq!(poor.code, COMFORT_POOR_CONDITIONS);
    assert_eq!(poor.group, GROUP_WEATHER);
    assert_eq!(poor.parameters["comfort"], 39);
    assert_eq!((poor.lat, poor.lon), (Some(47.0), Some(7.0)));
    assert!(at(40).is_none());
}

#[test]
fn headwind_needs_25_kmh_on_60_percent_of_forecast_days() {
    let windy = |kmh: f64| Some(summary(kmh, RelativeWind::Headwind, 0.0));
    // 3 of 5 forecast days (60 %) at 25 km/h: raised on those three.
    let days = [
        day(1, windy(25.0), 0),
        day(2, windy(30.0), 0),
        day(3, windy(26.0), 0),
        day(4, Some(summary(40.0, RelativeWind::Tailwind, 0.0)), 0),
        day(5, windy(24.9), 0),
        // Beyond the horizon: not a forecast day, not counted.
        day(6, None, 0),
    ];
    let raised: Vec<bool> = headwind(&days).iter().map(Option::is_some).collect();
    assert_eq!(raised, [true, true, true, false, false, false]);
    let first = headwind(&days)[0].clone().expect("alert");
    assert_eq!(first.code, WIND_HEADWIND);
    assert_eq!(first.parameters["headwindDays"], 3);
    assert_eq!(first.parameters["forecastDays"], 5);
    assert_eq!(first.parameters["windSpeedKmh"], 25.0);

    // 2 of 4 (50 %): below the share, nothing.
    let fewer = [
        day(1, windy(30.0), 0),
        day(2, windy(30.0), 0),
        day(3, windy(10.0), 0),
        day(4, windy(10.0), 0),
    ];
    assert!(headwind(&fewer).iter().all(Option::is_none));
    // 24.9 km/h on every day: below the speed, nothing.
    assert!(
        headwind(&[day(1, windy(24.9), 0)])
            .iter()
            .all(Option::is_none)
    );
    // A crosswind never counts, however strong.
    let cross = [day(1, Some(summary(50.0, RelativeWind::Crosswind, 0.0)), 0)];
    assert!(headwind(&cross)[0].is_none());
}

#[test]
fn a_ford_is_wet_from_50_percent_rain() {
    let rain = |percent: f64, fords: usize| {
        wet_ford(&day(
            2,
            Some(summary(5.0, RelativeWind::Unknown, percent)),
            fords,
        ))
    };
    let wet = rain(50.0, 1).expect("50 % is wet");
    assert_eq!(wet.code, FORD_CROSSING_WET);
    assert_eq!(wet.parameters["fords"], 1);
    assert!(rain(49.0, 1).is_none());
    assert!(rain(90.0, 0).is_none(), "no ford, no alert");
    assert!(
        wet_ford(&day(2, None, 3)).is_none(),
        "no forecast, no alert"
    );
}

#[test]
fn alerts_of_a_day_come_in_catalogue_order() {
    let mut s = summary(40.0, RelativeWind::Headwind, 100.0);
    s.comfort = 10;
    let alerts = weather_alerts(&[day(1, Some(s), 2)]);
    let codes: Vec<&str> = alerts[0].iter().map(|a| a.code).collect();
    assert_eq!(
        codes,
        [WIND_HEADWIND, COMFORT_POOR_CONDITIONS, FORD_CROSSING_WET]
    );
    assert!(alerts[0].iter().all(|a| crate::CODES.contains(&(
        a.code,
        a.group,
        a.severity.as_str()
    ))));
}
