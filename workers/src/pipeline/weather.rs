//! The weather of a trip's days: each day placed against the forecast horizon, one request
//! to the forecast provider for every day point in the horizon (start, middle and end of each
//! day), the samples at the hours the rider passes there, and the weather group's alerts.
//!
//! The category is `done` when a provider is configured and answered (an undated trip is
//! done too, every day `undated`: there is nothing to ask, and nothing is missing); `failed`
//! with a reason naming the provider when none is configured or it failed. Days beyond the
//! horizon read `beyond_horizon` either way: a state, not a failure. A provider failure does
//! not send the job back to the queue: the rest of the analysis is written at once, and the
//! failed category says why (an `analyze_trip` asks again).

use chrono::NaiveDate;
use etappe_analysis::StagePoint;
use etappe_analysis::weather::{
    Horizon, Sample, WeatherDay, horizon, initial_bearing, riding_window, summarise, weather_alerts,
};
use etappe_domain::trip::Trip;
use etappe_domain::trip::stage::{Alert, DayWeather, WeatherState};
use etappe_upstream::{DaySeries, ForecastQuery, Forecasts, HourSample};

use super::domain_alert;

/// Why the weather is unavailable without a provider.
pub(crate) const NO_WEATHER_PROVIDER: &str = "no weather provider is configured: not configured; set ETAPPE_WEATHER_URL (Open-Meteo) or start Etappe with ETAPPE_ONLINE=1; nothing is invented";

/// The weather of every day, in the order of the trip's days.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TripWeather {
    pub days: Vec<DayWeather>,
    pub alerts: Vec<Vec<Alert>>,
    /// Why the category failed, when it did.
    pub failure: Option<String>,
    /// Requests sent to the provider (0 or 1).
    pub requests: usize,
}

/// The point of `slice` halfway along the day, or `fallback` for a day without geometry.
fn middle_of(slice: &[StagePoint], fallback: (f64, f64)) -> (f64, f64) {
    let Some(last) = slice.last() else {
        return fallback;
    };
    let half = last.distance_m / 2.0;
    slice
        .iter()
        .min_by(|a, b| {
            (a.distance_m - half)
                .abs()
                .partial_cmp(&(b.distance_m - half).abs())
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map_or(fallback, |p| (p.lat, p.lon))
}

fn sample(hour: Option<&HourSample>) -> Option<Sample> {
    hour.map(|h| Sample {
        temperature_c: h.temperature_c,
        precipitation_probability: h.precipitation_probability,
        wind_speed_kmh: h.wind_speed_kmh,
        wind_direction_deg: h.wind_direction_deg,
        relative_humidity: h.relative_humidity,
    })
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// One day's plan: where it is sampled, when, and which way it heads.
struct DayPlan {
    date: Option<NaiveDate>,
    horizon: Horizon,
    points: [(f64, f64); 3],
    hours: [u8; 3],
    bearing: Option<f64>,
}

/// Computes the weather of `trip`'s days (`slices[i]` is day `i`'s geometry, `fords[i]` the
/// fords it crosses) as seen on `today`, asking `forecasts` once for every day in the
/// horizon.
pub(crate) async fn trip_weather(
    trip: &Trip,
    slices: &[Vec<StagePoint>],
    fords: &[usize],
    forecasts: Option<&dyn Forecasts>,
    today: NaiveDate,
) -> TripWeather {
    let settings = &trip.settings;
    let plans: Vec<DayPlan> = trip
        .stages
        .iter()
        .enumerate()
        .map(|(i, stage)| {
            let date = settings
                .start_date
                .and_then(|d| d.checked_add_days(chrono::Days::new(i as u64)));
            let start = (stage.start.lat, stage.start.lon);
            let end = (stage.end.lat, stage.end.lon);
            let (points, distance, bearing) = if stage.is_rest_day {
                // A day off is read where the rider stays; it has no heading.
                ([start; 3], 0.0, None)
            } else {
                let middle = middle_of(slices.get(i).map_or(&[][..], Vec::as_slice), start);
                (
                    [start, middle, end],
                    stage.distance_km,
                    initial_bearing(start, end),
                )
            };
            let window = riding_window(settings.departure_hour, distance, settings.average_speed);
            DayPlan {
                date,
                horizon: horizon(date, today),
                points,
                hours: [window.start_hour, window.middle_hour, window.end_hour],
                bearing,
            }
        })
        .collect();

    let wanted: Vec<usize> = plans
        .iter()
        .enumerate()
        .filter(|(_, p)| p.horizon == Horizon::Within)
        .map(|(i, _)| i)
        .collect();
    let mut requests = 0;
    let (series, failure): (Vec<Option<DaySeries>>, Option<String>) = match forecasts {
        None => (Vec::new(), Some(NO_WEATHER_PROVIDER.to_owned())),
        Some(_) if wanted.is_empty() => (Vec::new(), None),
        Some(provider) => {
            let queries: Vec<ForecastQuery> = wanted
                .iter()
                .flat_map(|&i| {
                    let plan = &plans[i];
                    plan.points.map(|(lat, lon)| ForecastQuery {
                        lat,
                        lon,
                        date: plan.date.unwrap_or(today),
                    })
                })
                .collect();
            requests = 1;
            match provider.days(&queries, today).await {
                Ok(series) => (series, None),
                Err(error) => (
                    Vec::new(),
                    Some(format!("Open-Meteo (weather) could not be read: {error}")),
                ),
            }
        }
    };
    let provider = forecasts.map(|f| f.provider().to_owned());

    let mut days = Vec::with_capacity(plans.len());
    let mut weather_days = Vec::with_capacity(plans.len());
    for (i, (plan, stage)) in plans.iter().zip(&trip.stages).enumerate() {
        let state_only = |state| DayWeather::state_only(state, plan.date);
        let (day, summary) = match plan.horizon {
            Horizon::Undated => (state_only(WeatherState::Undated), None),
            Horizon::Past => (state_only(WeatherState::Past), None),
            Horizon::Beyond => (state_only(WeatherState::BeyondHorizon), None),
            Horizon::Within => {
                let at = wanted.iter().position(|&w| w == i).map(|k| k * 3);
                let samples: Vec<Option<Sample>> = (0..3)
                    .map(|j| {
                        let series = at.and_then(|k| series.get(k + j)).and_then(Option::as_ref);
                        sample(series.and_then(|s| s.at(plan.hours[j])))
                    })
                    .collect();
                match summarise(&samples, plan.bearing) {
                    Some(s) => (
                        DayWeather {
                            state: WeatherState::Forecast,
                            date: plan.date,
                            hours: Some(plan.hours),
                            temperature_min_c: s.temperature_min_c.map(round1),
                            temperature_max_c: s.temperature_max_c.map(round1),
                            precipitation_probability: s.precipitation_probability_max.map(round1),
                            wind_speed_kmh: s.wind_speed_max_kmh.map(round1),
                            wind_direction_deg: s.wind_direction_deg.map(round1),
                            relative_wind: Some(s.relative_wind.as_str().to_owned()),
                            bearing_deg: plan.bearing.map(round1),
                            relative_humidity: s.relative_humidity.map(round1),
                            comfort: Some(s.comfort),
                            provider: provider.clone(),
                        },
                        Some(s),
                    ),
                    None => (state_only(WeatherState::Unavailable), None),
                }
            }
        };
        days.push(day);
        weather_days.push(WeatherDay {
            day_number: stage.day_number,
            summary,
            // Known from the OpenStreetMap analysis (none before it ran).
            fords: fords.get(i).copied().unwrap_or(0),
            start: (stage.start.lat, stage.start.lon),
        });
    }
    let alerts = weather_alerts(&weather_days)
        .into_iter()
        .map(|day| day.into_iter().map(domain_alert).collect())
        .collect();
    TripWeather {
        days,
        alerts,
        failure,
        requests,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use etappe_domain::ids::{TripId, UserId};
    use etappe_domain::trip::settings::TripSettings;
    use etappe_domain::trip::source::SourceUrl;
    use etappe_domain::trip::stage::{Point, RouteSummary, Stage};
    use etappe_domain::trip::{TripEvent, fold};
    use etappe_upstream::UpstreamError;
    use uuid::Uuid;

    use super::*;

    /// Answers every query with a north wind of 30 km/h, and keeps what it was asked.
    #[derive(Debug, Default)]
    struct NorthWind {
        asked: Mutex<Vec<Vec<ForecastQuery>>>,
        /// The precipitation probability of every hour, % (10 unless set).
        rain: Option<f64>,
    }

    #[async_trait]
    impl Forecasts for NorthWind {
        async fn days(
            &self,
            queries: &[ForecastQuery],
            _today: NaiveDate,
        ) -> Result<Vec<Option<DaySeries>>, UpstreamError> {
            self.asked.lock().expect("lock").push(queries.to_vec());
            let hours = (0..24)
                .map(|hour| HourSample {
                    hour,
                    temperature_c: Some(10.0 + f64::from(hour)),
                    precipitation_probability: Some(self.rain.unwrap_or(10.0)),
                    wind_speed_kmh: Some(30.0),
                    wind_direction_deg: Some(0.0),
                    relative_humidity: Some(50.0),
                })
                .collect();
            Ok(vec![Some(DaySeries { hours }); queries.len()])
        }
        async fn probe(&self) -> Result<(), UpstreamError> {
            Ok(())
        }
        fn provider(&self) -> &'static str {
            "north-wind"
        }
    }

    fn stage(n: u32, rest: bool) -> Stage {
        let point = |lat| Point {
            lat,
            lon: 6.0,
            ele: None,
        };
        Stage {
            id: Uuid::from_u128(u128::from(n)),
            day_number: n,
            distance_km: if rest { 0.0 } else { 30.0 },
            ascent_m: Some(0.0),
            descent_m: Some(0.0),
            start: point(45.0),
            end: point(if rest { 45.0 } else { 45.27 }),
            is_rest_day: rest,
            ..Default::default()
        }
    }

    fn trip(start: NaiveDate, stages: Vec<Stage>) -> Trip {
        fold(&[
            TripEvent::TripCreated {
                trip_id: TripId(Uuid::from_u128(1)),
                owner_id: UserId(Uuid::from_u128(2)),
                source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
                settings: TripSettings {
                    start_date: Some(start),
                    ..TripSettings::default()
                },
                version: 1,
            },
            TripEvent::RouteRequested { generation: 1 },
            TripEvent::RouteComputed {
                generation: 1,
                route: RouteSummary {
                    title: None,
                    total_distance_km: 60.0,
                    ascent_m: Some(0.0),
                    descent_m: Some(0.0),
                    point_count: 1,
                    track_key: "track".into(),
                    elevation: None,
                },
                stages,
                version: 2,
            },
        ])
        .expect("a trip")
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().expect("date")
    }

    #[tokio::test]
    async fn a_ford_on_a_rainy_day_is_a_wet_ford_and_on_a_dry_one_not() {
        let today = d("2030-05-01");
        let days = || vec![stage(1, false), stage(2, false)];
        let wet = |rain: f64, fords: Vec<usize>| async move {
            let sky = NorthWind {
                rain: Some(rain),
                ..NorthWind::default()
            };
            let weather = trip_weather(&trip(today, days()), &[], &fords, Some(&sky), today).await;
            weather
                .alerts
                .iter()
                .map(|day| day.iter().filter(|a| a.code == "ford_crossing_wet").count())
                .collect::<Vec<_>>()
        };
        // Day 1 crosses two fords, day 2 none: only day 1 can be wet, from 50 % rain.
        assert_eq!(wet(50.0, vec![2, 0]).await, vec![1, 0]);
        assert_eq!(wet(49.0, vec![2, 0]).await, vec![0, 0]);
        assert_eq!(
            wet(90.0, vec![]).await,
            vec![0, 0],
            "no fords known, none raised"
        );
    }

    #[tokio::test]
    async fn rest_days_are_forecast_without_a_heading_and_count_for_the_headwind_share() {
        let today = d("2030-05-01");
        let wind = NorthWind::default();
        // Two days riding north into the wind, then a day off, then one day beyond.
        let days = vec![stage(1, false), stage(2, false), stage(3, true)];
        let weather = trip_weather(&trip(today, days), &[], &[], Some(&wind), today).await;
        assert_eq!(weather.failure, None);
        assert_eq!(weather.requests, 1);
        let asked = wind.asked.lock().expect("lock").clone();
        assert_eq!(asked.len(), 1, "one request");
        assert_eq!(asked[0].len(), 9, "start, middle and end of every day");
        assert!(asked[0].iter().all(|q| q.date >= today));

        let relative: Vec<Option<&str>> = weather
            .days
            .iter()
            .map(|d| d.relative_wind.as_deref())
            .collect();
        assert_eq!(
            relative,
            [Some("headwind"), Some("headwind"), Some("unknown")]
        );
        // 30 km at 15 km/h from 08:00: 08, 09, 10 h; the day off is read at 08:00.
        assert_eq!(weather.days[0].hours, Some([8, 9, 10]));
        assert_eq!(weather.days[2].hours, Some([8, 8, 8]));
        assert_eq!(weather.days[0].temperature_max_c, Some(20.0));
        // 2 headwind days of 3 forecast (67 %): raised on the two riding days only.
        let raised: Vec<usize> = weather.alerts.iter().map(Vec::len).collect();
        assert_eq!(raised, [1, 1, 0]);

        // With one more day off the share falls to 50 %: no headwind alert at all.
        let days = vec![
            stage(1, false),
            stage(2, false),
            stage(3, true),
            stage(4, true),
        ];
        let weather = trip_weather(&trip(today, days), &[], &[], Some(&wind), today).await;
        assert!(weather.alerts.iter().all(Vec::is_empty));
    }

    #[tokio::test]
    async fn days_beyond_the_horizon_are_not_asked_for() {
        let today = d("2030-05-01");
        let wind = NorthWind::default();
        // Days on the 16th (today + 15) and 17th.
        let days = vec![stage(1, false), stage(2, false)];
        let weather =
            trip_weather(&trip(d("2030-05-16"), days), &[], &[], Some(&wind), today).await;
        let states: Vec<WeatherState> = weather.days.iter().map(|d| d.state).collect();
        assert_eq!(
            states,
            [WeatherState::Forecast, WeatherState::BeyondHorizon]
        );
        assert_eq!(wind.asked.lock().expect("lock")[0].len(), 3);

        // Without a provider: failed, the late day still `beyond_horizon`.
        let days = vec![stage(1, false), stage(2, false)];
        let none = trip_weather(&trip(d("2030-05-16"), days), &[], &[], None, today).await;
        assert!(
            none.failure
                .as_deref()
                .is_some_and(|f| f.contains("not configured"))
        );
        let states: Vec<WeatherState> = none.days.iter().map(|d| d.state).collect();
        assert_eq!(
            states,
            [WeatherState::Unavailable, WeatherState::BeyondHorizon]
        );
        assert_eq!(none.requests, 0);
    }
}
