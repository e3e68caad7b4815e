//! Stage analysis for the Etappe bicycle trip planner.
//!
//! [`analyse`] turns each day ("stage") of a multi-day trip into a list of
//! [`Alert`]s: too much climbing, a sustained steep ramp, an e-bike day
//! beyond battery range, arrival after civil dusk, a rest-day reminder,
//! Sundays and public holidays, gaps between stages and border crossings;
//! and, from forecasts the caller fetched, the weather of each day
//! ([`weather`]: wind against the heading, comfort, a wet ford); and, from
//! what OpenStreetMap holds along each day ([`osm`]: surface, traffic, food,
//! water, bike shops, stations, health, culture, beds, ferries, fords), the
//! map alerts and the "found along the day" list.
//!
//! The crate is pure: no I/O, no clock, no network, no timezone or holiday
//! database. Everything it needs (the Sun's position, Easter, national
//! holiday rules) is computed from first principles, so the planner gives
//! the same answers offline and in tests. The one exception is the `PH`
//! (public holiday) selector of OSM opening hours, which the
//! `opening-hours` crate reads from its own embedded calendar; the
//! calendar nudges still use [`holidays`].
//!
//! Conventions that hold for every rule:
//! - A rest day gets no riding alerts (terrain, border crossing, gaps); it
//!   keeps its calendar nudges, because a closed shop matters just as much
//!   on a day off. Rest days reset the rest-day streak and are skipped when
//!   looking for "the previous stage's end" of the continuity rule.
//! - Within a stage, alerts come in the order of [`CODES`].
//! - Messages are built from numbers, dates, fixed English text and
//!   validated two-letter country codes only.
//! - Inputs that are not finite never panic: the affected rule stays silent.
//!
//! Limits:
//! - Holidays are national only (no German Länder, Swiss cantons, Spanish
//!   communities, Scotland), for the countries in
//!   [`holidays::SUPPORTED_COUNTRIES`]; Easter and Whit Sunday also raise
//!   the Sunday nudge. Swiss Whit Monday is included on purpose, and Spanish
//!   national holidays falling on a Sunday are kept where regions may move
//!   them.
//! - Civil dusk follows the NOAA equations; against an ephemeris the error
//!   stayed under 10 s on the reference table in `tests/analysis/sunset.rs` (the tests
//!   allow 2 min). Oslo in June does have a civil dusk (after midnight);
//!   twilight lasts all night only north of about 60.6° N. Civil polar night
//!   alerts on every riding day.
//! - Arrival uses a flat average speed, with no breaks or slowdown on
//!   climbs. Without `utc_offset_minutes` the offset is estimated from the
//!   longitude, which ignores summer time and political time zones.
//! - The steep-gradient rule assumes monotone distances; its 5-sample median
//!   removes up to two adjacent bad samples, not a long wrong plateau.

mod catalogue;
mod format;
pub mod geo;
pub mod gradient;
pub mod holidays;
mod model;
pub mod osm;
pub mod plan_rules;
pub mod rules;
pub mod solar;
pub mod weather;

pub use catalogue::*;
pub use model::{
    Alert, AnalysisSettings, DayFacts, NearBed, NightGap, Severity, StageInput, StagePoint,
    TrackGap,
};

/// Analyses every stage of a trip, returning one alert list per stage in
/// the same order as `stages`.
///
/// Stages are taken in trip order: the rest-day streak and the continuity
/// check look at the stages before each one.
pub fn analyse(stages: &[StageInput<'_>], settings: &AnalysisSettings) -> Vec<Vec<Alert>> {
    analyse_with_facts(stages, &[], settings)
}

/// [`analyse`] with what the planner knows about each day beyond its
/// geometry (`facts[i]` for `stages[i]`; missing entries mean no facts):
/// gaps inside the day and the daily cap (see [`plan_rules`]).
pub fn analyse_with_facts(
    stages: &[StageInput<'_>],
    facts: &[DayFacts<'_>],
    settings: &AnalysisSettings,
) -> Vec<Vec<Alert>> {
    let settings = rules::Sanitized::new(settings);
    let no_facts = DayFacts::default();
    let mut out = Vec::with_capacity(stages.len());
    let mut streak: u32 = 0;
    let mut previous_riding: Option<&StageInput<'_>> = None;

    for (i, stage) in stages.iter().enumerate() {
        let day_facts = facts.get(i).unwrap_or(&no_facts);
        let mut alerts = Vec::new();
        if stage.is_rest_day {
            streak = 0;
        } else {
            streak = streak.saturating_add(1);
            if let Some(previous) = previous_riding {
                alerts.extend(rules::continuity(stage, previous));
            }
            alerts.extend(plan_rules::track_gaps(stage, day_facts));
            alerts.extend(plan_rules::daily_distance_over_cap(stage, day_facts));
            alerts.extend(plan_rules::no_bed_near_target(stage, day_facts));
            alerts.extend(rules::elevation_unknown(stage));
            alerts.extend(rules::elevation_gain(stage));
            alerts.extend(rules::steep_gradient(stage));
            alerts.extend(rules::ebike_range(stage, &settings));
            alerts.extend(rules::sunset(stage, &settings));
            alerts.extend(rules::rest_day(stage, streak));
            alerts.extend(rules::border_crossing(stage));
            previous_riding = Some(stage);
        }
        alerts.extend(rules::sunday(stage));
        alerts.extend(rules::public_holidays(stage));
        // Keep the catalogue's order within the day (gap alerts of both
        // kinds come from two rules); the sort is stable.
        alerts.sort_by_key(|a| CODES.iter().position(|(code, _, _)| *code == a.code));
        out.push(alerts);
    }
    out
}
