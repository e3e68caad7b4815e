//! Reading Open-Meteo's answers: an object for one location, an array of them for several;
//! `hourly.time` in local time ("2026-07-01T08:00", with `timezone=auto`) beside one array
//! per variable, `null` where the model has no value.

use std::collections::BTreeMap;

use chrono::{NaiveDate, NaiveDateTime, Timelike};
use serde::Deserialize;

use super::{DaySeries, HourSample, UPSTREAM};
use crate::error::UpstreamError;
use crate::http::parse_json;

#[derive(Deserialize)]
#[serde(untagged)]
enum Answer {
    Many(Vec<Location>),
    One(Box<Location>),
}

#[derive(Deserialize)]
struct Location {
    hourly: Option<Hourly>,
}

#[derive(Deserialize)]
struct Hourly {
    time: Vec<String>,
    #[serde(default)]
    temperature_2m: Vec<Option<f64>>,
    #[serde(default)]
    precipitation_probability: Vec<Option<f64>>,
    #[serde(default)]
    wind_speed_10m: Vec<Option<f64>>,
    #[serde(default)]
    wind_direction_10m: Vec<Option<f64>>,
    #[serde(default)]
    relative_humidity_2m: Vec<Option<f64>>,
}

#[derive(Deserialize)]
struct ErrorBody {
    reason: Option<String>,
}

/// The `reason` of a `{"error": true, "reason": "…"}` body, cleaned for display.
pub(super) fn error_reason(body: &str) -> Option<String> {
    let parsed: ErrorBody = serde_json::from_str(body).ok()?;
    crate::text::printable(parsed.reason.as_deref()?, 200)
}

/// Each location's series by local date, in the order asked; `expected` locations exactly.
pub(super) fn parse_answer(
    body: &str,
    expected: usize,
) -> Result<Vec<BTreeMap<NaiveDate, DaySeries>>, UpstreamError> {
    let locations = match parse_json::<Answer>(UPSTREAM, body)? {
        Answer::Many(list) => list,
        Answer::One(one) => vec![*one],
    };
    if locations.len() != expected {
        return Err(UpstreamError::unexpected(
            UPSTREAM,
            format!(
                "{} locations answered for {expected} asked",
                locations.len()
            ),
        ));
    }
    Ok(locations.into_iter().map(by_date).collect())
}

/// A finite value in a plausible range; anything else is "not provided".
fn value(list: &[Option<f64>], i: usize, range: std::ops::RangeInclusive<f64>) -> Option<f64> {
    list.get(i)
        .copied()
        .flatten()
        .filter(|v| v.is_finite() && range.contains(v))
}

fn by_date(location: Location) -> BTreeMap<NaiveDate, DaySeries> {
    let mut days: BTreeMap<NaiveDate, DaySeries> = BTreeMap::new();
    let Some(hourly) = location.hourly else {
        return days;
    };
    for (i, time) in hourly.time.iter().enumerate() {
        // Times without a zone are local (timezone=auto); an unreadable one is skipped.
        let Ok(at) = NaiveDateTime::parse_from_str(time, "%Y-%m-%dT%H:%M") else {
            continue;
        };
        let Ok(hour) = u8::try_from(at.hour()) else {
            continue;
        };
        let sample = HourSample {
            hour,
            temperature_c: value(&hourly.temperature_2m, i, -90.0..=70.0),
            precipitation_probability: value(&hourly.precipitation_probability, i, 0.0..=100.0),
            wind_speed_kmh: value(&hourly.wind_speed_10m, i, 0.0..=500.0),
            wind_direction_deg: value(&hourly.wind_direction_10m, i, 0.0..=360.0),
            relative_humidity: value(&hourly.relative_humidity_2m, i, 0.0..=100.0),
        };
        let day = days
            .entry(at.date())
            .or_insert_with(|| DaySeries { hours: Vec::new() });
        // A repeated hour (the autumn clock change) keeps its first reading.
        if day.at(hour).is_none() {
            day.hours.push(sample);
        }
    }
    days
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"latitude":52.52,"longitude":13.419,"utc_offset_seconds":7200,
        "timezone":"Europe/Berlin","hourly_units":{"wind_speed_10m":"km/h"},
        "hourly":{"time":["2026-07-01T07:00","2026-07-01T08:00","2026-07-02T08:00","garbage"],
        "temperature_2m":[14.2,15.0,null,1.0],"precipitation_probability":[10,20,30,40],
        "wind_speed_10m":[9.4,8.1,900,2.0],"wind_direction_10m":[270,280,290,300],
        "relative_humidity_2m":[80,70,60,50]}}"#;

    #[test]
    fn a_single_location_is_an_object() {
        let days = parse_answer(ONE, 1).expect("parses");
        let first = &days[0][&"2026-07-01".parse::<NaiveDate>().expect("date")];
        assert_eq!(first.hours.len(), 2);
        let eight = first.at(8).expect("08:00");
        assert_eq!(eight.temperature_c, Some(15.0));
        assert_eq!(eight.wind_direction_deg, Some(280.0));
        let second = &days[0][&"2026-07-02".parse::<NaiveDate>().expect("date")];
        assert_eq!(second.at(8).and_then(|h| h.temperature_c), None);
    }

    #[test]
    fn several_locations_are_an_array_and_must_all_answer() {
        let many = format!("[{ONE},{ONE}]");
        assert_eq!(parse_answer(&many, 2).expect("parses").len(), 2);
        let short = parse_answer(&many, 3).expect_err("one missing");
        assert!(
            short.failure.contains("2 locations answered for 3"),
            "{short}"
        );
        assert!(parse_answer("{\"elements\": [", 1).is_err());
    }

    #[test]
    fn an_error_body_gives_its_reason() {
        assert_eq!(
            error_reason(
                r#"{"error":true,"reason":"Parameter 'start_date' is out of allowed range"}"#
            )
            .as_deref(),
            Some("Parameter 'start_date' is out of allowed range")
        );
        assert_eq!(error_reason("<html>"), None);
    }
}
