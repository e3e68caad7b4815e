//! `decide`: a command judged against the trip's history, answering the events it causes or
//! the rule it breaks. Pure: no clock (the caller passes `today`), no I/O.
//!
//! This file only dispatches: each group of commands is judged in a module of its own, over
//! the guards they share ([`guards`]): the trip's life as a whole ([`lifecycle`], and
//! [`crate::trip::duplicate`] for a copy), its public link ([`sharing`]), a caller's change of
//! the settings ([`settings_change`]) or of the days ([`crate::trip::edits`]), the work a
//! caller asks for on the days ([`work_requests`]), and the workers' answers
//! ([`work_results`], [`given_up`]).

mod given_up;
pub(super) mod guards;
mod lifecycle;
mod settings_change;
mod sharing;
mod work_requests;
mod work_results;

use crate::trip::{Trip, TripCommand, TripError, TripEvent, duplicate, edits};

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
        } => settings_change::update_settings(live, &patch, plan, expected_version, today),
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
            edits::decide_stage_edit_over(
                state,
                edit,
                expected_version,
                today,
                route.geometry(),
                route.beds(),
            )
        }
        TripCommand::RequestAnalysis { today } => work_requests::request_analysis(live, today),
        TripCommand::ResumeWork => work_requests::resume_work(live),
        TripCommand::RefreshWeather { today } => work_requests::refresh_weather(live, today),
        TripCommand::RequestAccommodationScan {
            radius_km,
            stage_id,
            today,
        } => work_requests::request_accommodation_scan(live, radius_km, stage_id, today),
        TripCommand::RequestWaypoint {
            stage_id,
            waypoint,
            today,
        } => work_requests::request_waypoint(live, stage_id, waypoint, today),
        TripCommand::RemoveDetour {
            stage_id,
            own,
            today,
        } => work_requests::remove_detour(live, stage_id, own, today),
        TripCommand::StartRoute { generation, job_id } => {
            work_results::start_route(live, generation, job_id)
        }
        TripCommand::RecordRoute {
            generation,
            route,
            stages,
        } => work_results::record_route(live, generation, route, stages),
        TripCommand::FailRoute { generation, reason } => {
            work_results::fail_route(live, generation, reason)
        }
        TripCommand::StartAnalysis {
            generation,
            categories,
        } => work_results::start_analysis(live, generation, categories),
        TripCommand::RecordAnalysis {
            generation,
            stages,
            done,
            unavailable,
        } => work_results::record_analysis(live, generation, stages, done, unavailable),
        TripCommand::RecordAccommodations { generation, stages } => {
            work_results::record_accommodations(live, generation, stages)
        }
        TripCommand::FailAccommodations { generation, reason } => {
            work_results::fail_accommodations(live, generation, reason)
        }
        TripCommand::RecordDetour {
            generation,
            stage_id,
            detour,
            measure,
        } => work_results::record_detour(live, generation, stage_id, detour, measure),
        TripCommand::GiveUp {
            generation,
            work,
            reason,
        } => given_up::give_up(live, generation, work, reason),
    }
}
