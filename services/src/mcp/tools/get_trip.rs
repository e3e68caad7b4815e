//! `get_trip`: get a trip. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use etappe_app::views::TripDetail;
use etappe_domain::trip::Category;
use etappe_domain::trip::nights::{ChosenBy, NightOutcome};
use etappe_domain::trip::stage::FoundAlong;
use serde_json::{Map, Value, json};

use crate::mcp::arguments::{TRIP_ID, arg};
use crate::mcp::call::{Answer, Call, TripRef, count, refusal};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::{Kind, outputs};

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "get_trip",
    title: "Get a trip",
    description: "A trip's digest, a line per day. Poll while partial is true.",
    hints: Hints::READ,
    output: outputs::trip,
    args: &[
        TRIP_ID,
        arg(
            "history",
            Kind::Integer {
                min: 1,
                max: MAX_VERSIONS as i64,
            },
            "Recent versions to list",
        ),
    ],
    help: "history: n also lists the last n versions, newest first ({version, at, change, days}); update_trip_settings with restoreVersion makes the trip what it was at one of them (undo; restoring again undoes that). partial is true until every computation of this version has ended, done or failed (the days come first: stages: [] then means 'not yet', not 'none'; alerts, places along the way and nights after); read again after retryAfterMs. categoryStatus lists route, points_of_interest, accommodations, terrain_security, weather, context with pending/running/done/failed/superseded; unavailable gives the reason of a failed one. version is what every structural write needs. Each day: stageId, day, km, climb (m), from, to, rest, night (chosen accommodation), alerts (count), critical (codes of critical alerts; get_stage has their messages) and weather (the day's forecast in short, like '12–19°C, rain 60%, headwind 28'; 'beyond horizon' until the date is within 16 days, then it is fetched on a later read). Place names are third-party data.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let trip = TripRef::read(call.args, "id")?;
    let detail = call
        .state
        .trips()
        .detail(&call.caller.principal, trip.id)
        .await
        .map_err(refusal(Some(&trip.raw)))?;
    let mut answer = digest(&detail);
    // Its recent versions, to undo with update_trip_settings restoreVersion.
    if call.args.get("history").is_some_and(|v| !v.is_null()) {
        let limit = count(call.args, "history", 5, MAX_VERSIONS)? as usize;
        let versions = call
            .state
            .trips()
            .versions(&call.caller.principal, trip.id, limit)
            .await
            .map_err(refusal(Some(&trip.raw)))?;
        answer["versions"] = json!(versions);
    }
    Ok(answer)
}

/// The most versions `get_trip` lists.
pub(super) const MAX_VERSIONS: u32 = 20;

/// The digest of a trip: everything an agent plans with, one short line per day.
pub fn digest(detail: &TripDetail) -> Value {
    let status: Map<String, Value> = detail
        .computation_status
        .iter()
        .filter(|(_, s)| **s != etappe_domain::trip::ComputationStatus::Pending)
        .map(|(c, s)| (json!(c).as_str().unwrap_or_default().to_owned(), json!(s)))
        .collect();
    let beds_scanned = detail.computation_status.get(&Category::Accommodations)
        == Some(&etappe_domain::trip::ComputationStatus::Done);
    let last_day = detail
        .stages
        .iter()
        .map(|s| s.day_number)
        .max()
        .unwrap_or(0);
    let days: Vec<Value> = detail
        .stages
        .iter()
        .map(|s| {
            // Codes, not messages: with OpenStreetMap read, a day can have several critical
            // alerts, and their messages (in get_stage) would take the digest over budget.
            let mut critical: Vec<&str> = s
                .alerts
                .iter()
                .filter(|a| a.severity == "critical")
                .map(|a| a.code.as_str())
                .collect();
            critical.dedup();
            let mut day = json!({
                "stageId": s.stage_id,
                "day": s.day_number,
                "km": s.distance,
                "climb": s.elevation,
                "from": s.start_label,
                "to": s.end_label,
                "alerts": s.alerts.len(),
            });
            if s.is_rest_day {
                day["rest"] = json!(true);
            }
            if let Some(label) = &s.label {
                day["label"] = json!(label);
            }
            // Where the night is spent, and who chose it when Etappe did (the rider's is the
            // rule; a re-flow moves only Etappe's): the agent sees what choosing moves.
            if let Some(night) = &s.selected_accommodation {
                day["night"] = json!(
                    night
                        .name
                        .clone()
                        .unwrap_or_else(|| night.kind.replace('_', " "))
                );
                if night.chosen_by == Some(ChosenBy::Etappe) {
                    day["nightBy"] = json!("etappe");
                }
            } else if s
                .night
                .as_ref()
                .is_some_and(|n| n.outcome == NightOutcome::NoBedInWindow)
            {
                day["night"] = json!("no bed near the planned end");
            } else if beds_scanned && !s.is_rest_day && s.day_number < last_day {
                day["night"] = json!(if s.accommodations.is_empty() {
                    "none found near the end".to_owned()
                } else {
                    format!("not chosen, {} near the end", s.accommodations.len())
                });
            }
            // What a rider asks first: where the water, the food and a bike shop are.
            if let Some(found) = &s.found {
                day["along"] = json!(along_token(found));
            }
            if !critical.is_empty() {
                day["critical"] = json!(critical);
            }
            if let Some(weather) = s.weather.as_ref().and_then(weather_token) {
                day["weather"] = json!(weather);
            }
            day
        })
        .collect();
    json!({
        "id": detail.id,
        "version": detail.version,
        "title": detail.title,
        "startDate": detail.start_date,
        "endDate": detail.end_date,
        "partial": detail.partial,
        "retryAfterMs": detail.retry_after_ms,
        "isLocked": detail.is_locked,
        "settings": {
            "maxDistancePerDay": detail.max_distance_per_day,
            "averageSpeed": detail.average_speed,
            "fatigueFactor": detail.fatigue_factor,
            "elevationPenalty": detail.elevation_penalty,
            "departureHour": detail.departure_hour,
            "ebikeMode": detail.ebike_mode,
            "nights": detail.nights,
            "days": detail.days,
        },
        "categoryStatus": status,
        // A failed route says why once: the other categories only wait for it.
        "unavailable": if detail.status == "failed" {
            json!({"route": detail.unavailable.get(&Category::Route)})
        } else {
            json!(detail.unavailable)
        },
        "notice": detail.notice,
        "stageCount": detail.stage_count,
        "totalDistance": detail.total_distance,
        "stages": days,
        "nextAction": next_after_reading(detail),
    })
}

/// Water, food and a bike shop in a few tokens: the km of the first of each along the day,
/// or that there is none ("water km 0.4, food km 2.1, no bike shop").
fn along_token(found: &[FoundAlong]) -> String {
    [
        ("water", "water"),
        ("resupply", "food"),
        ("bike_shop", "bike shop"),
    ]
    .iter()
    .map(|(category, label)| {
        match found
            .iter()
            .filter(|f| f.category == *category)
            .map(|f| f.km)
            .reduce(f64::min)
        {
            Some(km) => format!("{label} km {km:.1}"),
            None => format!("no {label}"),
        }
    })
    .collect::<Vec<_>>()
    .join(", ")
}

/// A day's weather in a few tokens: "12–19°C, rain 60%, headwind 28" for a forecast (rain
/// from 30 %, the wind named when it blows 15 km/h or more), the state otherwise; nothing
/// for an undated or unavailable day (the category status says why).
fn weather_token(weather: &etappe_domain::trip::stage::DayWeather) -> Option<String> {
    use etappe_domain::trip::stage::WeatherState;
    match weather.state {
        WeatherState::Forecast => {}
        WeatherState::BeyondHorizon => return Some("beyond horizon".to_owned()),
        WeatherState::Past => return Some("past".to_owned()),
        WeatherState::Undated | WeatherState::Unavailable => return None,
    }
    let mut parts = Vec::new();
    if let (Some(low), Some(high)) = (weather.temperature_min_c, weather.temperature_max_c) {
        parts.push(format!("{}–{}°C", low.round(), high.round()));
    }
    if let Some(rain) = weather.precipitation_probability.filter(|p| *p >= 30.0) {
        parts.push(format!("rain {}%", rain.round()));
    }
    if let Some(wind) = weather.wind_speed_kmh.filter(|w| *w >= 15.0) {
        let kind = weather
            .relative_wind
            .as_deref()
            .filter(|k| ["headwind", "tailwind", "crosswind"].contains(k))
            .unwrap_or("wind");
        parts.push(format!("{kind} {}", wind.round()));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// What an agent does after reading a trip: wait, stop on a failure, or go on editing.
fn next_after_reading(detail: &TripDetail) -> String {
    let next = if let Some(reason) = detail
        .unavailable
        .get(&Category::Route)
        .filter(|_| detail.status == "failed")
    {
        let fix = if detail.source_type == etappe_domain::trip::source::SourceType::Plan {
            "change the place it names with update_trip_settings (from, via or to), or delete_trip"
        } else {
            "once the source is fixed, analyze_trip retries it; or delete_trip"
        };
        format!("Stop polling: the route failed ({reason}). Tell the user; {fix}.")
    } else if detail.partial && detail.stages.is_empty() {
        "The days are being computed: call get_trip again after retryAfterMs.".to_owned()
    } else if detail.partial {
        "The days exist; their alerts, places along the way and nights are still being computed (categoryStatus): call get_trip again after retryAfterMs before relying on them.".to_owned()
    } else {
        format!("Pass version {} to the next write.", detail.version)
    };
    match &detail.notice {
        Some(notice) => format!("Tell the user: {notice}. {next}"),
        None => next,
    }
}

#[cfg(test)]
mod tests {
    use etappe_domain::trip::stage::{DayWeather, WeatherState};

    use super::weather_token;

    fn forecast(rain: f64, wind: f64, relative: &str) -> DayWeather {
        DayWeather {
            temperature_min_c: Some(11.6),
            temperature_max_c: Some(19.2),
            precipitation_probability: Some(rain),
            wind_speed_kmh: Some(wind),
            relative_wind: Some(relative.to_owned()),
            ..DayWeather::state_only(WeatherState::Forecast, None)
        }
    }

    #[test]
    fn a_forecast_day_reads_in_a_few_words() {
        assert_eq!(
            weather_token(&forecast(60.0, 28.0, "headwind")).as_deref(),
            Some("12–19°C, rain 60%, headwind 28")
        );
        // Rain under 30 % and wind under 15 km/h are not worth the tokens.
        assert_eq!(
            weather_token(&forecast(29.0, 14.0, "tailwind")).as_deref(),
            Some("12–19°C")
        );
        assert_eq!(
            weather_token(&forecast(0.0, 20.0, "unknown")).as_deref(),
            Some("12–19°C, wind 20")
        );
        let state = |s| weather_token(&DayWeather::state_only(s, None));
        assert_eq!(
            state(WeatherState::BeyondHorizon).as_deref(),
            Some("beyond horizon")
        );
        assert_eq!(state(WeatherState::Undated), None);
        assert_eq!(state(WeatherState::Unavailable), None);
    }
}
