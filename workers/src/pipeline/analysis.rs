//! The analysis of a trip's days: the alert rules run over the stored track (pure, in
//! `analyse_trip`), and their results recorded as events.

use std::borrow::Cow;
use std::collections::HashMap;

use chrono::Days;
use etappe_analysis::osm::OSM_GROUPS;
use etappe_analysis::{
    AnalysisSettings, DayFacts, NearBed, NightGap, StageInput, StagePoint, TrackGap,
    analyse_with_facts,
};

use etappe_domain::trip::nights::{NightCandidate, NightNote, NightOutcome};
use etappe_domain::trip::stage::{StageAlerts, Unavailable};
use etappe_domain::trip::{Category, DEFAULT_SCAN_RADIUS_KM, Trip, TripCommand};
use etappe_route::geometry::cumulative_distances_with_breaks;
use etappe_route::gpx::TrackPoint;
use uuid::Uuid;

use crate::progress::{ProgressState, Reporter};
use etappe_track::labels::utc_offset_minutes;
use etappe_track::stored;

use super::{Applied, JobError, JobScope, Outcome, Pipeline, domain_alert, osm, weather};

impl Pipeline {
    pub(super) async fn analyse_again(
        &self,
        scope: JobScope<'_>,
        categories: &[Category],
        reporter: &mut Reporter<'_>,
    ) -> Result<Outcome, JobError> {
        let wanted = categories.to_vec();
        let view = match self
            .apply_step(scope, "start", || TripCommand::StartAnalysis {
                generation: scope.generation,
                categories: wanted.clone(),
            })
            .await?
        {
            Applied::Refused(refused) => return Ok(Outcome::Dropped(refused.to_string())),
            Applied::Done(view) => view,
        };
        let Some(view) = view else {
            return Ok(Outcome::Dropped("trip deleted".into()));
        };
        let Some(route) = view.trip.route.clone() else {
            return Ok(Outcome::Dropped("the trip has no days to analyse".into()));
        };
        reporter
            .report(
                30,
                "analysing",
                "analysing each day",
                ProgressState::Running,
            )
            .await;
        let stored = match self.store.get_blob(&route.track_key).await? {
            Some(bytes) => stored::decode_stored(&bytes).unwrap_or_default(),
            None => stored::StoredTrack::default(),
        };
        self.record_analysis(
            scope.job_id,
            &view.trip,
            &stored,
            None,
            categories,
            scope.traceparent,
        )
        .await
    }

    /// Analyses `categories` of the trip's days and records what they found. `measured`: the
    /// distance from the start to each stored point (breaks not counted) when the caller has
    /// it (the route job just cut the route), else it is measured here, once.
    pub(super) async fn record_analysis(
        &self,
        job_id: Uuid,
        trip: &Trip,
        stored: &stored::StoredTrack,
        measured: Option<&[f64]>,
        categories: &[Category],
        traceparent: Option<&str>,
    ) -> Result<Outcome, JobError> {
        let mut detoured = HashMap::new();
        for stage in &trip.stages {
            if let Some(detour) = &stage.detour
                && let Some(bytes) = self.store.get_blob(&detour.track_key).await?
                && let Some(blob) = stored::decode(&bytes)
            {
                let points = etappe_track::detour::day_points(stage, &stored.points, Some(&blob));
                detoured.insert(stage.id, points);
            }
        }
        // Each day's points measured once, for the rules, OpenStreetMap and the weather.
        let cumulative = match measured {
            Some(measured) if measured.len() == stored.points.len() => Cow::Borrowed(measured),
            _ => Cow::Owned(route_cumulative(stored)),
        };
        let slices = stage_slices_with(trip, stored, &detoured, &cumulative);
        let mut alerts = analyse_slices(trip, stored, &detoured, &slices, &cumulative);
        let mut done: Vec<Category> = [Category::TerrainSecurity, Category::Context]
            .into_iter()
            .filter(|c| categories.contains(c))
            .collect();
        let mut unavailable: Vec<Unavailable> = Vec::new();
        let osm_wanted = categories.contains(&Category::PointsOfInterest);
        let beds_wanted = categories.contains(&Category::Accommodations);
        let source = if osm_wanted || beds_wanted {
            self.upstreams.osm_source().await
        } else {
            None
        };
        if osm_wanted {
            let outcome = match &source {
                None => Some(self.upstreams.no_osm_source_reason()),
                Some(source) => {
                    let inputs = stage_inputs(trip, &slices);
                    osm::trip_osm(trip, &inputs, &mut alerts, source.as_ref()).await
                }
            };
            settle(
                Category::PointsOfInterest,
                outcome,
                &mut done,
                &mut unavailable,
            );
        } else {
            // The OpenStreetMap groups are replaced only when OpenStreetMap is read: keep them.
            keep_groups(&mut alerts, trip, OSM_GROUPS);
        }
        // Places to sleep around each night's end, from the same source.
        let mut beds = None;
        if beds_wanted {
            let found = match &source {
                None => Err(self.upstreams.no_osm_source_reason()),
                Some(source) => self
                    .scan(source.as_ref(), trip, DEFAULT_SCAN_RADIUS_KM, None)
                    .await
                    .map_err(|e| format!("{} failed: {e}", source.source())),
            };
            match found {
                Ok(stages) => beds = Some(stages),
                Err(reason) => unavailable.push(Unavailable {
                    category: Category::Accommodations,
                    reason,
                }),
            }
        }
        if categories.contains(&Category::Weather) {
            // The fords each day crosses, as the OpenStreetMap analysis found them (just now,
            // or kept from its last run).
            let fords: Vec<usize> = alerts
                .iter()
                .map(|day| {
                    day.alerts
                        .iter()
                        .filter(|a| a.code == etappe_analysis::FORD_CROSSING_DRY)
                        .count()
                })
                .collect();
            let forecast = weather::trip_weather(
                trip,
                &slices,
                &fords,
                self.upstreams.weather.as_deref(),
                chrono::Utc::now().date_naive(),
            )
            .await;
            tracing::debug!(trip = %trip.id, requests = forecast.requests, "weather computed");
            for ((day, weather), extra) in alerts.iter_mut().zip(forecast.days).zip(forecast.alerts)
            {
                day.alerts.extend(extra);
                day.weather = Some(weather);
            }
            settle(
                Category::Weather,
                forecast.failure,
                &mut done,
                &mut unavailable,
            );
        } else {
            // The weather group is replaced only when the weather is computed: keep it.
            keep_groups(&mut alerts, trip, &[etappe_analysis::GROUP_WEATHER]);
        }
        let generation = trip.generation;
        if let Applied::Refused(refused) = self
            .apply(trip.id, &format!("{job_id}:analysis"), traceparent, || {
                TripCommand::RecordAnalysis {
                    generation,
                    stages: alerts.clone(),
                    done: done.clone(),
                    unavailable: unavailable.clone(),
                }
            })
            .await?
        {
            return Ok(Outcome::Dropped(refused.to_string()));
        }
        if let Some(stages) = beds {
            let applied = self
                .apply(trip.id, &format!("{job_id}:beds"), traceparent, || {
                    TripCommand::RecordAccommodations {
                        generation,
                        stages: stages.clone(),
                    }
                })
                .await?;
            if let Applied::Refused(refused) = applied {
                return Ok(Outcome::Dropped(refused.to_string()));
            }
        }
        Ok(Outcome::Completed)
    }
}

/// Records how a category that ran ended: done, or failed with `failure`.
fn settle(
    category: Category,
    failure: Option<String>,
    done: &mut Vec<Category>,
    unavailable: &mut Vec<Unavailable>,
) {
    match failure {
        None => done.push(category),
        Some(reason) => unavailable.push(Unavailable { category, reason }),
    }
}

/// Keeps each day's alerts of `groups` from the trip as it is: groups an analysis did not
/// compute are not replaced (the stage's alerts are replaced as a whole).
fn keep_groups(days: &mut [StageAlerts], trip: &Trip, groups: &[&str]) {
    for day in days {
        if let Some(stage) = trip.stages.iter().find(|s| s.id == day.stage_id) {
            day.alerts.extend(
                stage
                    .alerts
                    .iter()
                    .filter(|a| groups.contains(&a.group.as_str()))
                    .cloned(),
            );
        }
    }
}

/// Runs the alert rules over the trip's days (pure: the trip and its track in, alerts out).
/// A day re-routed through a waypoint is read off its own geometry (`detoured`, by stage
/// id), not off the slice of the track it replaced.
pub fn analyse_trip(
    trip: &Trip,
    stored: &stored::StoredTrack,
    detoured: &HashMap<Uuid, Vec<TrackPoint>>,
) -> Vec<StageAlerts> {
    let cumulative = route_cumulative(stored);
    let slices = stage_slices_with(trip, stored, detoured, &cumulative);
    analyse_slices(trip, stored, detoured, &slices, &cumulative)
}

/// The distance from the start to each stored point, metres (breaks not counted).
fn route_cumulative(stored: &stored::StoredTrack) -> Vec<f64> {
    cumulative_distances_with_breaks(&stored.points, &stored.breaks())
}

/// [`analyse_trip`] with each day's points ([`stage_slices_with`]) and the route
/// (`route_cumulative`) already measured.
fn analyse_slices(
    trip: &Trip,
    stored: &stored::StoredTrack,
    detoured: &HashMap<Uuid, Vec<TrackPoint>>,
    slices: &[Vec<StagePoint>],
    route_cumulative: &[f64],
) -> Vec<StageAlerts> {
    let points = stored.points.as_slice();
    let settings = AnalysisSettings {
        departure_hour: trip.settings.departure_hour,
        average_speed_kmh: trip.settings.average_speed,
        ebike_mode: trip.settings.ebike_mode,
        climb_m_per_flat_km: trip.settings.elevation_penalty,
    };
    let inputs = stage_inputs(trip, slices);
    let gaps: Vec<Vec<TrackGap>> = trip
        .stages
        .iter()
        .map(|stage| {
            if detoured.contains_key(&stage.id) {
                return Vec::new();
            }
            stored
                .gaps_within(stage.first_point, stage.last_point)
                .filter_map(|gap| {
                    let before = gap.index.checked_sub(1)?;
                    let from = points.get(before)?;
                    Some(TrackGap {
                        length_m: gap.length_m,
                        at_km: route_cumulative.get(before).copied()? / 1000.0,
                        bridged: gap.bridged,
                        lat: from.lat,
                        lon: from.lon,
                    })
                })
                .collect()
        })
        .collect();
    let cap = Some(trip.settings.max_distance_per_day);
    let facts: Vec<DayFacts<'_>> = gaps
        .iter()
        .zip(&trip.stages)
        .map(|(gaps, stage)| DayFacts {
            gaps,
            max_distance_per_day_km: cap,
            night_gap: stage.night.as_ref().and_then(night_gap),
        })
        .collect();
    analyse_with_facts(&inputs, &facts, &settings)
        .into_iter()
        .zip(&trip.stages)
        .map(|(alerts, stage)| StageAlerts {
            stage_id: stage.id,
            alerts: alerts.into_iter().map(domain_alert).collect(),
            weather: None,
            found: None,
            road: None,
        })
        .collect()
}

/// A night the pacer found no bed for, as the rules read it (none for a night at a bed).
fn night_gap(note: &NightNote) -> Option<NightGap<'_>> {
    fn near(c: Option<&NightCandidate>) -> Option<NearBed<'_>> {
        c.map(|c| NearBed {
            name: c.name.as_deref(),
            kind: &c.kind,
            km: c.km,
            lat: c.lat,
            lon: c.lon,
        })
    }
    (note.outcome != NightOutcome::AtBed).then(|| NightGap {
        target_km: note.target_km,
        window_km: note.window_km,
        looked_for: note.outcome == NightOutcome::NoBedInWindow,
        why: &note.why,
        nearest_before: near(note.nearest_before.as_ref()),
        nearest_after: near(note.nearest_after.as_ref()),
    })
}

/// Each day as the rules read it: its slice of the track (`slices`, same order), its date,
/// its countries and the UTC offset of its end.
pub(super) fn stage_inputs<'a>(trip: &Trip, slices: &'a [Vec<StagePoint>]) -> Vec<StageInput<'a>> {
    trip.stages
        .iter()
        .zip(slices)
        .enumerate()
        .map(|(i, (stage, slice))| {
            let date = trip
                .settings
                .start_date
                .and_then(|d| d.checked_add_days(Days::new(i as u64)));
            let offset = date.and_then(|d| {
                stage
                    .end_country
                    .as_deref()
                    .and_then(|c| utc_offset_minutes(c, d))
            });
            StageInput {
                day_number: stage.day_number,
                is_rest_day: stage.is_rest_day,
                distance_km: stage.distance_km,
                ascent_m: stage.ascent_m,
                points: slice,
                start: (stage.start.lat, stage.start.lon),
                end: (stage.end.lat, stage.end.lon),
                date,
                start_country: stage.start_country.clone(),
                end_country: stage.end_country.clone(),
                utc_offset_minutes: offset,
            }
        })
        .collect()
}

/// Each day's points with distances from its start: its slice of the track, or its own
/// geometry when it was re-routed through a waypoint.
#[cfg(test)]
pub(super) fn stage_slices(
    trip: &Trip,
    stored: &stored::StoredTrack,
    detoured: &HashMap<Uuid, Vec<TrackPoint>>,
) -> Vec<Vec<StagePoint>> {
    stage_slices_with(trip, stored, detoured, &route_cumulative(stored))
}

/// [`stage_slices_with`] of a route already measured (`route_cumulative`: the distance from the
/// start to each stored point, breaks not counted): a day on the track reads its distances
/// off the route's, a re-routed day measures its own line.
fn stage_slices_with(
    trip: &Trip,
    stored: &stored::StoredTrack,
    detoured: &HashMap<Uuid, Vec<TrackPoint>>,
    route_cumulative: &[f64],
) -> Vec<Vec<StagePoint>> {
    let points = stored.points.as_slice();
    let last = points.len().min(route_cumulative.len()).saturating_sub(1);
    let at = |p: &TrackPoint, distance_m: f64| StagePoint {
        lat: p.lat,
        lon: p.lon,
        ele: p.ele,
        distance_m,
    };
    trip.stages
        .iter()
        .map(|stage| match detoured.get(&stage.id) {
            Some(own) => own
                .iter()
                .zip(cumulative_distances_with_breaks(own, &[]))
                .map(|(p, d)| at(p, d))
                .collect(),
            None => {
                let range = stage.first_point..=stage.last_point.min(last);
                let (Some(slice), Some(measured)) =
                    (points.get(range.clone()), route_cumulative.get(range))
                else {
                    return Vec::new();
                };
                let start = measured.first().copied().unwrap_or_default();
                slice
                    .iter()
                    .zip(measured)
                    .map(|(p, d)| at(p, d - start))
                    .collect()
            }
        })
        .collect()
}
