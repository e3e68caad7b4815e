//! Duplicating a trip: a new trip born as a deep copy of another — its settings, days,
//! alerts, chosen places to sleep and detours — so a rider can try a variant without
//! touching the original.
//!
//! The rules, in one place:
//! - the copy is a new stream with its own id; its days get new ids (derived from the copy's
//!   id and the original's, so deciding again gives the same ids) and its version starts at 1;
//! - the public link is not copied: sharing the copy is a decision of its own;
//! - the title gains " (copy)" so the two are told apart in a list;
//! - a copy of a *locked* trip (already started) drops its dates — a copy that is born locked
//!   could never be edited — and so must compute again what depends on the dates;
//! - work the original had not finished is requested again for the copy: its route when it
//!   had no days yet, else the analysis categories still pending or running (results of the
//!   original's workers land on the original's stream, never on the copy's).

use std::collections::BTreeMap;

use chrono::NaiveDate;

use super::decide::guards::not_yet_created;
use super::settings::{TITLE_MAX_CHARS, TripSettings};
use super::stage::Stage;
use super::{Category, ComputationStatus, Trip, TripError, TripEvent};
use crate::ids::{TripId, UserId, derived_id};

/// The categories whose results depend on the trip's dates.
const DATED_CATEGORIES: [Category; 2] = [Category::Weather, Category::Context];

const COPY_SUFFIX: &str = " (copy)";

/// Decides the duplication of `original` into a new trip `trip_id` owned by `owner_id`;
/// `state` is the new stream's state (it must not exist yet). Reached through
/// [`super::decide()`].
pub(crate) fn decide_duplicate(
    state: Option<&Trip>,
    trip_id: TripId,
    owner_id: UserId,
    original: &Trip,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    not_yet_created(state)?;
    if original.deleted {
        return Err(TripError::NotFound);
    }
    let dates_dropped = original.is_locked(today);
    let settings = copied_settings(&original.settings, dates_dropped);
    if !has_computed_days(original) {
        // Nothing computed worth copying: the copy computes its own days, like a new trip.
        return Ok(vec![
            TripEvent::TripDuplicated {
                trip_id,
                owner_id,
                from_trip_id: original.id,
                source: original.source.clone(),
                settings,
                generation: 0,
                route: None,
                stages: Vec::new(),
                computations: BTreeMap::new(),
                unavailable: BTreeMap::new(),
                version: 1,
            },
            TripEvent::RouteRequested { generation: 1 },
        ]);
    }

    let stages = copied_stages(original, trip_id);
    let requested = work_to_request(original, dates_dropped);
    let mut computations = original.computations.clone();
    for category in &requested {
        computations.insert(*category, ComputationStatus::Pending);
    }
    let mut events = vec![TripEvent::TripDuplicated {
        trip_id,
        owner_id,
        from_trip_id: original.id,
        source: original.source.clone(),
        settings,
        generation: original.generation,
        route: original.route.clone(),
        stages,
        computations,
        unavailable: original.unavailable.clone(),
        version: 1,
    }];
    if !requested.is_empty() {
        events.push(TripEvent::AnalysisRequested {
            generation: original.generation,
            categories: requested,
        });
    }
    Ok(events)
}

/// The original's settings for the copy: the title marked as a copy, and the dates dropped
/// when `dates_dropped` (a copy born locked could never be edited).
fn copied_settings(original: &TripSettings, dates_dropped: bool) -> TripSettings {
    let mut settings = original.clone();
    settings.title = settings.title.as_deref().map(copy_title);
    if dates_dropped {
        settings.start_date = None;
        settings.end_date = None;
    }
    settings
}

/// Whether the original has days worth copying: its route is done and cut into days.
fn has_computed_days(original: &Trip) -> bool {
    !original.stages.is_empty()
        && original.route.is_some()
        && original.computations.get(&Category::Route) == Some(&ComputationStatus::Done)
}

/// The original's days under ids of the copy's own, derived from the copy's id and the
/// original day's, so deciding again gives the same ids.
fn copied_stages(original: &Trip, trip_id: TripId) -> Vec<Stage> {
    original
        .stages
        .iter()
        .map(|stage| {
            let mut copy = stage.clone();
            copy.id = derived_id(&format!("stage:{trip_id}:{}", stage.id));
            copy
        })
        .collect()
}

/// The categories the copy asks again: those the original had not finished (pending or
/// running), and those that depend on the dates when they were dropped; sorted, once each.
fn work_to_request(original: &Trip, dates_dropped: bool) -> Vec<Category> {
    let mut requested: Vec<Category> = original
        .computations
        .iter()
        .filter(|(_, status)| {
            matches!(
                status,
                ComputationStatus::Pending | ComputationStatus::Running
            )
        })
        .map(|(category, _)| *category)
        .collect();
    if dates_dropped {
        requested.extend(DATED_CATEGORIES);
    }
    requested.sort();
    requested.dedup();
    requested
}

/// The copy's events with its files under the copy's own keys: `renamed` maps an original's
/// key to the key the service copied the file to; a key not in it stays the original's.
pub(crate) fn own_files(
    mut events: Vec<TripEvent>,
    renamed: &BTreeMap<String, String>,
) -> Vec<TripEvent> {
    for event in &mut events {
        let TripEvent::TripDuplicated { route, stages, .. } = event else {
            continue;
        };
        let rename = |key: &mut String| {
            if let Some(new) = renamed.get(key.as_str()) {
                key.clone_from(new);
            }
        };
        if let Some(route) = route.as_mut() {
            rename(&mut route.track_key);
        }
        for detour in stages.iter_mut().filter_map(|s| s.detour.as_mut()) {
            rename(&mut detour.track_key);
        }
    }
    events
}

/// `title (copy)`, cut so that it stays within the title's limit.
fn copy_title(title: &str) -> String {
    let room = TITLE_MAX_CHARS.saturating_sub(COPY_SUFFIX.chars().count());
    let mut copy: String = title.chars().take(room).collect();
    copy.push_str(COPY_SUFFIX);
    copy
}

#[cfg(test)]
mod tests;
