//! Re-flowing the nights after a choice (nights at accommodation): when the rider or an agent
//! chooses where to sleep after a day, the nights Etappe chose after it are placed again from
//! the new place, by the same pacer that placed them (`trip::nights`), over the beds the route
//! job found. The days before stay untouched. A night the rider holds (a place they chose, or
//! an end they moved by hand) is kept: the re-flow stops there and says so.

use serde::{Deserialize, Serialize};

use super::apply::{forget_old_roads, remeasure};
use super::{RouteGeometry, Stage};
use crate::trip::nights::{
    BedOnRoute, ChosenBy, Night, NightRules, night_outcome, pacer_beds, place_nights,
};
use crate::trip::settings::TripSettings;

/// What a re-flow did, recorded with the edit for the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reflow {
    /// The place chosen: its name, or its type when it has none.
    pub chosen: String,
    /// The nights that moved, by the day they follow, in order.
    pub moved: Vec<u32>,
    /// The night the re-flow stopped at, which the rider holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptNight>,
}

/// A night the rider holds, which a re-flow keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptNight {
    /// The day it follows.
    pub night: u32,
    /// Where it is spent, when a place was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// A name for a place to sleep in a sentence.
fn place_name(stage: &Stage) -> Option<String> {
    stage
        .accommodation
        .as_ref()
        .map(|a| a.name.clone().unwrap_or_else(|| a.kind.replace('_', " ")))
}

/// True when the pacer placed the night after `stage` (so a re-flow may move it).
fn etappes(stage: &Stage) -> bool {
    match &stage.accommodation {
        Some(place) => place.chosen_by == Some(ChosenBy::Etappe),
        None => stage.night.is_some(),
    }
}

/// The beds between `start_m` and `end_m` along the route, measured from `start_m` (the
/// pacer's frame: a stretch placed as if it were a route of its own).
fn stretch_beds(beds: &[BedOnRoute], start_m: f64, end_m: f64) -> Vec<BedOnRoute> {
    beds.iter()
        .filter(|b| b.along_m > start_m && b.along_m < end_m)
        .map(|b| BedOnRoute {
            along_m: b.along_m - start_m,
            ..b.clone()
        })
        .collect()
}

/// Places again the nights after day `chosen` (an index into `stages`, whose end was just
/// set at the chosen place) up to the first night the rider holds, or the route's end.
pub(super) fn after_choice(
    stages: &mut [Stage],
    chosen: usize,
    route: &dyn RouteGeometry,
    beds: &[BedOnRoute],
    settings: &TripSettings,
) -> Option<Reflow> {
    let riding: Vec<usize> = (0..stages.len())
        .filter(|&i| !stages[i].is_rest_day)
        .collect();
    let k = riding.iter().position(|&i| i == chosen)?;
    let last = riding.len().checked_sub(1)?;
    if k >= last {
        return None;
    }
    let chosen_name = place_name(&stages[chosen]).unwrap_or_else(|| "your place".into());
    // Nights k+1.. are free until the first the rider holds; that day bounds the re-flow.
    let stop = (k + 1..last).find(|&j| !etappes(&stages[riding[j]]));
    let bound = stop.unwrap_or(last);
    let kept = stop.map(|j| KeptNight {
        night: stages[riding[j]].day_number,
        place: place_name(&stages[riding[j]]),
    });
    let days: Vec<usize> = riding[k + 1..=bound].to_vec();
    let start_index = stages[chosen].last_point;
    let end_index = stages[riding[bound]].last_point;
    let start_m = route.along_km(start_index) * 1000.0;
    let end_m = route.along_km(end_index) * 1000.0;
    if days.len() < 2 || end_m <= start_m {
        return Some(Reflow {
            chosen: chosen_name,
            moved: Vec::new(),
            kept,
        });
    }
    let stretch = stretch_beds(beds, start_m, end_m);
    let (pacer, index) = pacer_beds(&stretch, &settings.enabled_accommodation_types);
    let lengths: Vec<f64> = days
        .iter()
        .map(|&d| stages[d].planned_km.unwrap_or(stages[d].distance_km))
        .collect();
    let rules = NightRules::for_plan(settings.max_distance_per_day, &lengths);
    let placed = place_nights(end_m - start_m, &lengths, &pacer, &rules, &[]);
    let mut moved = Vec::new();
    let mut previous_end = start_index;
    let mut day_start_m = 0.0;
    for (n, night) in placed.iter().enumerate() {
        let (day, next) = (days[n], days[n + 1]);
        let wanted = match &night.night {
            Night::AtBed { bed, .. } => index
                .get(*bed)
                .and_then(|i| stretch.get(*i))
                .map_or(end_index, |b| b.point_index),
            _ => route.index_at_km(start_index, end_index, night.end_m / 1000.0),
        };
        // Each day keeps at least one step of the route, in order.
        let end = wanted.clamp(
            previous_end + 1,
            end_index.saturating_sub(1).max(previous_end + 1),
        );
        let (place, note) = night_outcome(night, day_start_m, &index, &stretch);
        let before = (stages[day].last_point, stages[day].accommodation.clone());
        if before.0 != end || before.1 != place {
            moved.push(stages[day].day_number);
        }
        if stages[day].last_point != end {
            forget_old_roads(&mut stages[day]);
            forget_old_roads(&mut stages[next]);
            stages[day].last_point = end;
            stages[next].first_point = end;
        }
        stages[day].accommodation = place;
        stages[day].night = note;
        previous_end = end;
        day_start_m = night.end_m;
    }
    for &d in &days {
        remeasure(&mut stages[d], route);
    }
    Some(Reflow {
        chosen: chosen_name,
        moved,
        kept,
    })
}
