//! Turning a caller's JSON object into settings, with errors that name the field and what it
//! accepts. REST bodies and MCP arguments both go through here, so a value is judged the same
//! way whichever door it came through.

use chrono::{Datelike, NaiveDate};
use serde::Serialize;
use serde_json::{Map, Value};

use super::settings::{
    AVERAGE_SPEED, AccommodationType, DAYS, DEPARTURE_HOUR, ELEVATION_PENALTY, FATIGUE_FACTOR,
    MAX_DISTANCE_PER_DAY, NightsMode, Range, SettingField, SettingsPatch, TITLE_MAX_CHARS,
};
use crate::text::{quote, strip_controls};

/// One problem with one input field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The field's wire name (`maxDistancePerDay`), or `body` for the whole input.
    pub field: String,
    /// What is wrong and what is accepted, written to be acted on.
    pub message: String,
}

impl FieldError {
    /// A problem with `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why an input object was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Names the caller used that the operation does not accept: refused, never dropped.
    #[error("{}; accepted: {}", named_unknown(.unknown), .accepted.join(", "))]
    UnknownFields {
        unknown: Vec<String>,
        accepted: Vec<String>,
    },
    /// Known fields with values out of their type or range.
    #[error("invalid value(s): {}", .0.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<FieldError>),
}

impl InputError {
    /// The field errors, one per unknown field or invalid value.
    pub fn field_errors(&self) -> Vec<FieldError> {
        match self {
            // A few unknown names are enough to act on; a body of thousands must not make
            // an answer of thousands.
            Self::UnknownFields { unknown, accepted } => unknown
                .iter()
                .take(UNKNOWN_NAMED)
                .map(|name| {
                    FieldError::new(
                        strip_controls(name).chars().take(40).collect::<String>(),
                        format!(
                            "unknown field {}; accepted: {}",
                            quote(name),
                            accepted.join(", ")
                        ),
                    )
                })
                .collect(),
            Self::Invalid(errors) => errors.clone(),
        }
    }
}

/// How many unknown names a refusal names (the rest are counted).
pub const UNKNOWN_NAMED: usize = 3;

fn named_unknown(unknown: &[String]) -> String {
    let named: Vec<String> = unknown
        .iter()
        .take(UNKNOWN_NAMED)
        .map(|n| quote(n))
        .collect();
    match unknown.len().saturating_sub(UNKNOWN_NAMED) {
        0 => format!("unknown field(s): {}", named.join(", ")),
        more => format!("unknown field(s): {} and {more} more", named.join(", ")),
    }
}

/// Refuses any name of `object` that is not in `accepted`, naming each.
pub fn refuse_unknown(object: &Map<String, Value>, accepted: &[&str]) -> Result<(), InputError> {
    let mut unknown: Vec<String> = object
        .keys()
        .filter(|k| !accepted.contains(&k.as_str()))
        .cloned()
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort();
    Err(InputError::UnknownFields {
        unknown,
        accepted: accepted.iter().map(|s| (*s).to_owned()).collect(),
    })
}

/// How `null` is read for a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullMeans {
    /// On creation: `null` is the same as leaving the field out.
    Absent,
    /// On an update: `null` clears a date; elsewhere it is refused.
    Clear,
}

/// Parses the settings present in `object` (other names are ignored here: call
/// [`refuse_unknown`] first). Collects every error rather than stopping at the first.
pub fn parse_settings(
    object: &Map<String, Value>,
    nulls: NullMeans,
) -> Result<SettingsPatch, InputError> {
    let mut patch = SettingsPatch::default();
    let mut errors = Vec::new();
    for field in SettingField::ALL {
        let Some(value) = object.get(field.name()) else {
            continue;
        };
        if value.is_null() && nulls == NullMeans::Absent {
            continue;
        }
        let name = field.name();
        let result = match field {
            SettingField::Title => parse_title(value).map(|v| patch.title = Some(v)),
            SettingField::StartDate => {
                parse_optional_date(name, value).map(|v| patch.start_date = Some(v))
            }
            SettingField::EndDate => {
                parse_optional_date(name, value).map(|v| patch.end_date = Some(v))
            }
            SettingField::FatigueFactor => {
                parse_number(name, value, FATIGUE_FACTOR).map(|v| patch.fatigue_factor = Some(v))
            }
            SettingField::ElevationPenalty => parse_number(name, value, ELEVATION_PENALTY)
                .map(|v| patch.elevation_penalty = Some(v)),
            SettingField::MaxDistancePerDay => parse_number(name, value, MAX_DISTANCE_PER_DAY)
                .map(|v| patch.max_distance_per_day = Some(v)),
            SettingField::AverageSpeed => {
                parse_number(name, value, AVERAGE_SPEED).map(|v| patch.average_speed = Some(v))
            }
            SettingField::DepartureHour => {
                parse_hour(name, value).map(|v| patch.departure_hour = Some(v))
            }
            SettingField::EbikeMode => match value {
                Value::Bool(b) => {
                    patch.ebike_mode = Some(*b);
                    Ok(())
                }
                other => Err(FieldError::new(
                    name,
                    format!("{name} must be true or false; got {}", describe(other)),
                )),
            },
            SettingField::EnabledAccommodationTypes => parse_accommodation_types(name, value)
                .map(|v| patch.enabled_accommodation_types = Some(v)),
            SettingField::Days => parse_days(name, value).map(|v| patch.days = Some(v)),
            SettingField::Nights => match value.as_str().and_then(NightsMode::parse) {
                Some(mode) => {
                    patch.nights = Some(mode);
                    Ok(())
                }
                None => Err(FieldError::new(
                    name,
                    format!(
                        "{name} must be anywhere or at_accommodation (each day ends at a place to sleep of your types); got {}",
                        describe(value)
                    ),
                )),
            },
        };
        if let Err(e) = result {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(patch)
    } else {
        Err(InputError::Invalid(errors))
    }
}

fn parse_title(value: &Value) -> Result<String, FieldError> {
    let Value::String(raw) = value else {
        return Err(FieldError::new(
            "title",
            format!(
                "title must be a string of 1 to {TITLE_MAX_CHARS} characters; got {}",
                describe(value)
            ),
        ));
    };
    let clean = strip_controls(raw).trim().to_owned();
    let count = clean.chars().count();
    if count == 0 || count > TITLE_MAX_CHARS {
        return Err(FieldError::new(
            "title",
            format!("title must be 1 to {TITLE_MAX_CHARS} characters long; got {count}"),
        ));
    }
    Ok(clean)
}

/// Days before today a trip's date may lie (a trip ridden last summer can still be recorded).
pub const DATE_PAST_DAYS: i64 = 366;
/// Years after today a trip's date may lie.
pub const DATE_FUTURE_YEARS: i32 = 10;

/// Refuses a trip date more than a year in the past or ten years ahead: `0001-01-01` would
/// lock the trip for good, `9999-12-31` is a typo. The range is named in the refusal. The
/// clock is read here, at the edge where input is parsed, not in `decide`.
fn date_in_range(name: &str, date: NaiveDate) -> Result<NaiveDate, FieldError> {
    let today = chrono::Utc::now().date_naive();
    let earliest = today - chrono::Duration::days(DATE_PAST_DAYS);
    let latest = today
        .with_year(today.year() + DATE_FUTURE_YEARS)
        .unwrap_or(today + chrono::Duration::days(3652));
    if (earliest..=latest).contains(&date) {
        Ok(date)
    } else {
        Err(FieldError::new(
            name,
            format!(
                "{name} must be from {earliest} to {latest} (at most a year ago, at most ten years ahead); got {date}"
            ),
        ))
    }
}

/// Parses a trip's `YYYY-MM-DD` date within the accepted range, or `null` (cleared).
pub fn parse_optional_date(name: &str, value: &Value) -> Result<Option<NaiveDate>, FieldError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => parse_date(name, s)
            .and_then(|d| date_in_range(name, d))
            .map(Some),
        other => Err(FieldError::new(
            name,
            format!(
                "{name} must be a date written YYYY-MM-DD, or null; got {}",
                describe(other)
            ),
        )),
    }
}

/// Parses a `YYYY-MM-DD` date.
pub fn parse_date(name: &str, s: &str) -> Result<NaiveDate, FieldError> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == 10)
        .ok_or_else(|| {
            FieldError::new(
                name,
                format!("{name} must be a date written YYYY-MM-DD; got {}", quote(s)),
            )
        })
}

fn parse_number(name: &str, value: &Value, range: Range) -> Result<f64, FieldError> {
    let number = value.as_f64().filter(|_| value.is_number());
    match number {
        Some(v) if range.contains(v) => Ok(v),
        Some(v) => Err(FieldError::new(
            name,
            format!(
                "{name} must be a number {}; got {}",
                range.describe(),
                crate::text::number(v)
            ),
        )),
        None => Err(FieldError::new(
            name,
            format!(
                "{name} must be a number {}; got {}",
                range.describe(),
                describe(value)
            ),
        )),
    }
}

/// A whole number, written `14` or `14.0`: JSON (and JSON Schema's `integer`) does not tell
/// them apart, so neither does the parser.
pub fn whole_number(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|v| v.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(v))
            .map(|v| v as u64)
    })
}

fn parse_hour(name: &str, value: &Value) -> Result<u8, FieldError> {
    match whole_number(value) {
        Some(h) if DEPARTURE_HOUR.contains(h as f64) => Ok(h as u8),
        _ => Err(FieldError::new(
            name,
            format!(
                "{name} must be a whole hour {}; got {}",
                DEPARTURE_HOUR.describe(),
                describe(value)
            ),
        )),
    }
}

/// `days`: a whole number of days; `null` clears it (on an update).
fn parse_days(name: &str, value: &Value) -> Result<Option<u32>, FieldError> {
    if value.is_null() {
        return Ok(None);
    }
    match whole_number(value) {
        Some(n) if DAYS.contains(n as f64) => Ok(u32::try_from(n).ok()),
        _ => Err(FieldError::new(
            name,
            format!(
                "{name} must be a whole number of days {} (or null to let maxDistancePerDay decide; with both dates set, the dates decide); got {}",
                DAYS.describe(),
                describe(value)
            ),
        )),
    }
}

fn parse_accommodation_types(
    name: &str,
    value: &Value,
) -> Result<Vec<AccommodationType>, FieldError> {
    let accepted = AccommodationType::ALL
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let Value::Array(items) = value else {
        return Err(FieldError::new(
            name,
            format!(
                "{name} must be a list of one or more of: {accepted}; got {}",
                describe(value)
            ),
        ));
    };
    let mut types = Vec::new();
    for item in items {
        let parsed = item.as_str().and_then(AccommodationType::parse);
        match parsed {
            Some(t) if !types.contains(&t) => types.push(t),
            Some(_) => {}
            None => {
                return Err(FieldError::new(
                    name,
                    format!("{name} accepts only: {accepted}; got {}", describe(item)),
                ));
            }
        }
    }
    if types.is_empty() {
        return Err(FieldError::new(
            name,
            format!("{name} must name at least one of: {accepted}"),
        ));
    }
    types.sort();
    Ok(types)
}

/// A short description of a JSON value for an error message, never longer than a quote.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(v) if !n.is_u64() && !n.is_i64() => crate::text::number(v),
            _ => quote(&n.to_string()).trim_matches('"').to_owned(),
        },
        Value::String(s) => quote(s),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(map) => map,
            other => panic!("test input must be an object, got {other}"),
        }
    }

    #[test]
    fn thousands_of_unknown_fields_make_a_short_refusal() {
        let mut body = Map::new();
        for i in 0..5000 {
            body.insert(format!("field{i:05}"), json!(1));
        }
        let err = refuse_unknown(&body, &["title", "startDate"]).expect_err("unknown");
        let text = err.to_string();
        assert!(text.len() < 200, "{} bytes: {text}", text.len());
        assert!(text.contains("and 4997 more"), "{text}");
        assert_eq!(err.field_errors().len(), UNKNOWN_NAMED);
    }

    #[test]
    fn dates_far_in_the_past_or_future_are_refused_naming_the_range() {
        for bad in ["0001-01-01", "9999-12-31"] {
            let err = parse_optional_date("startDate", &json!(bad)).expect_err(bad);
            assert!(
                err.message.contains("at most a year ago"),
                "{}",
                err.message
            );
            assert!(err.message.contains(bad), "{}", err.message);
        }
        let soon = (chrono::Utc::now().date_naive() + chrono::Duration::days(30)).to_string();
        assert!(parse_optional_date("startDate", &json!(soon)).is_ok());
    }

    #[test]
    fn a_huge_number_is_quoted_short() {
        let err = parse_settings(
            &object(json!({"maxDistancePerDay": 1e308})),
            NullMeans::Absent,
        )
        .expect_err("out of range");
        let text = err.to_string();
        assert!(text.contains("got 1e308"), "{text}");
        assert!(text.len() < 120, "{text}");
    }

    #[test]
    fn unknown_fields_are_named_with_the_accepted_list() {
        let err = refuse_unknown(&object(json!({"colour": 1, "title": "x"})), &["title"])
            .expect_err("colour is unknown");
        let fields = err.field_errors();
        assert_eq!(fields[0].field, "colour");
        assert!(
            fields[0].message.contains("accepted: title"),
            "{}",
            fields[0].message
        );
    }

    #[test]
    fn an_out_of_range_value_names_the_field_and_the_range() {
        let err = parse_settings(&object(json!({"maxDistancePerDay": 500})), NullMeans::Clear)
            .expect_err("500 is out of range");
        let fields = err.field_errors();
        assert_eq!(fields[0].field, "maxDistancePerDay");
        assert_eq!(
            fields[0].message,
            "maxDistancePerDay must be a number from 10 to 300; got 500"
        );
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        let err = parse_settings(
            &object(json!({"fatigueFactor": "high", "departureHour": 24, "ebikeMode": 1})),
            NullMeans::Clear,
        )
        .expect_err("three bad values");
        assert_eq!(err.field_errors().len(), 3);
    }

    #[test]
    fn a_bad_date_is_quoted_and_cut() {
        let long = "2026-13-45".repeat(10);
        let err = parse_settings(&object(json!({"startDate": long})), NullMeans::Clear)
            .expect_err("not a date");
        let message = &err.field_errors()[0].message;
        assert!(message.contains("YYYY-MM-DD"));
        assert!(message.len() < 120, "{message}");
    }

    #[test]
    fn null_clears_a_date_on_update_and_is_absent_on_create() {
        let update = parse_settings(&object(json!({"endDate": null})), NullMeans::Clear)
            .expect("null date clears");
        assert_eq!(update.end_date, Some(None));
        let create = parse_settings(&object(json!({"endDate": null})), NullMeans::Absent)
            .expect("null is absent");
        assert_eq!(create.end_date, None);
    }

    #[test]
    fn accommodation_types_are_checked_deduplicated_and_ordered() {
        let patch = parse_settings(
            &object(json!({"enabledAccommodationTypes": ["hotel", "camp_site", "hotel"]})),
            NullMeans::Clear,
        )
        .expect("valid types");
        assert_eq!(
            patch.enabled_accommodation_types,
            Some(vec![AccommodationType::CampSite, AccommodationType::Hotel])
        );
        assert!(
            parse_settings(
                &object(json!({"enabledAccommodationTypes": []})),
                NullMeans::Clear
            )
            .is_err()
        );
        assert!(
            parse_settings(
                &object(json!({"enabledAccommodationTypes": ["motel"]})),
                NullMeans::Clear
            )
            .is_err()
        );
    }

    #[test]
    fn a_whole_hour_may_be_written_with_a_decimal_point() {
        let patch = parse_settings(&object(json!({"departureHour": 14.0})), NullMeans::Clear)
            .expect("14.0 is 14");
        assert_eq!(patch.departure_hour, Some(14));
        assert!(parse_settings(&object(json!({"departureHour": 14.5})), NullMeans::Clear).is_err());
    }

    #[test]
    fn a_title_is_trimmed_and_bounded() {
        let patch = parse_settings(
            &object(json!({"title": "  Alps\u{0007} "})),
            NullMeans::Clear,
        )
        .expect("title");
        assert_eq!(patch.title.as_deref(), Some("Alps"));
        assert!(
            parse_settings(&object(json!({"title": "x".repeat(256)})), NullMeans::Clear).is_err()
        );
        assert!(parse_settings(&object(json!({"title": "   "})), NullMeans::Clear).is_err());
    }
}
