//! `decide`: a command judged against the trip's history, answering the events it causes or
//! the rule it breaks. Pure: no clock (the caller passes `today`), no I/O.
//!
//! This file only dispatches. Each feature is judged in a module of its own, named as the
//! module of `evolve` that applies its events: the trip's life as a whole ([`lifecycle`], and
//! [`crate::trip::duplicate`] for a copy), its public link ([`sharing`]), a caller's change of
//! the settings or plan ([`edits`]; of the days, [`crate::trip::edits`]), the route's work
//! ([`route`]), the analysis's ([`analysis`]) and a day's detour ([`detours`]), over the
//! guards they share ([`guards`]); work lost or given up is [`lost_work`].

mod analysis;
mod detours;
mod edits;
pub(super) mod guards;
mod lifecycle;
mod lost_work;
mod route;
mod sharing;

use crate::trip::{Trip, TripCommand, TripError, TripEvent, duplicate};

use self::guards::{current_generation, live};

/// Judges a command against the current state and answers the events it causes: the one
/// decision every writer goes through (settings, day edits, duplication, worker results).
pub fn decide(state: Option<&Trip>, command: TripCommand) -> Result<Vec<TripEvent>, TripError> {
    let live = live(state);
    match command {
        TripCommand::Create {
            trip_id,
            owner_id,
            source,
            settings,
        } => lifecycle::create(state, trip_id, owner_id, source, &settings),
        TripCommand::Duplicate {
            trip_id,
            owner_id,
            original,
            today,
            renamed_files,
        } => duplicate::decide_duplicate(state, trip_id, owner_id, &original, today)
            .map(|events| duplicate::own_files(events, &renamed_files)),
        TripCommand::Delete => lifecycle::delete(live),
        TripCommand::Restore {
            past,
            expected_version,
            today,
        } => lifecycle::restore(live, &past, expected_version, today),
        TripCommand::Share { code, at } => sharing::share(live, code, at),
        TripCommand::Unshare => sharing::unshare(live),
        TripCommand::UpdateSettings {
            patch,
            plan,
            expected_version,
            today,
        } => edits::update_settings(live, &patch, plan, expected_version, today),
        TripCommand::EditStages {
            edit,
            expected_version,
            generation,
            today,
            route,
        } => {
            // An edit made over the route of a generation a re-pacing replaced is about days
            // that are gone.
            if let Some(trip) = live {
                current_generation(trip, generation)?;
            }
            crate::trip::edits::decide_stage_edit_over(
                state,
                edit,
                expected_version,
                today,
                route.geometry(),
                route.beds(),
            )
        }
        TripCommand::RequestAnalysis { today } => analysis::request_analysis(live, today),
        TripCommand::ResumeWork => lost_work::resume_work(live),
        TripCommand::RefreshWeather { today } => analysis::refresh_weather(live, today),
        TripCommand::RequestAccommodationScan {
            radius_km,
            stage_id,
            today,
        } => analysis::request_accommodation_scan(live, radius_km, stage_id, today),
        TripCommand::RequestWaypoint {
            stage_id,
            waypoint,
            today,
        } => detours::request_waypoint(live, stage_id, waypoint, today),
        TripCommand::RemoveDetour {
            stage_id,
            own,
            today,
        } => detours::remove_detour(live, stage_id, own, today),
        TripCommand::StartRoute { generation, job_id } => {
            route::start_route(live, generation, job_id)
        }
        TripCommand::RecordRoute {
            generation,
            route,
            stages,
        } => route::record_route(live, generation, route, stages),
        TripCommand::FailRoute { generation, reason } => {
            route::fail_route(live, generation, reason)
        }
        TripCommand::StartAnalysis {
            generation,
            categories,
        } => analysis::start_analysis(live, generation, categories),
        TripCommand::RecordAnalysis {
            generation,
            stages,
            done,
            unavailable,
        } => analysis::record_analysis(live, generation, stages, done, unavailable),
        TripCommand::RecordAccommodations { generation, stages } => {
            analysis::record_accommodations(live, generation, stages)
        }
        TripCommand::FailAccommodations { generation, reason } => {
            analysis::fail_accommodations(live, generation, reason)
        }
        TripCommand::RecordDetour {
            generation,
            stage_id,
            detour,
            measure,
        } => detours::record_detour(live, generation, stage_id, detour, measure),
        TripCommand::GiveUp {
            generation,
            work,
            reason,
        } => lost_work::give_up(live, generation, work, reason),
    }
}
