//! Editing the days of a trip: add (split a day), update (move a day's end along the route or
//! rename it), move, delete (merge with a neighbour), insert a rest day, and choosing where to
//! sleep. Each edit is judged here, purely, against the trip and the geometry of its route
//! (handed in through [`RouteGeometry`], which the service reads from the stored track), and
//! answers the whole after-image of the days. Stage ids survive every edit; a new day gets the
//! id the caller minted.
//!
//! Days are slices of the generation's track (`first_point..=last_point`). Riding days that
//! follow each other on the route share their boundary point; a rest day sits on the end point
//! of the day before it and has no distance.

use chrono::{Days, NaiveDate};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::stage::{ANALYSIS_CATEGORIES, Accommodation, Point, Stage};
use super::{Category, FieldError, Trip, TripError, TripEvent};

mod apply;
mod candidate;
pub mod input;
mod kept;
mod reflow;

use self::apply::apply;
pub use self::apply::straight_m;
pub use self::candidate::{CANDIDATE_MATCH_M, candidate_at};
pub use self::kept::{RECHOOSE_REACH_M, SideEffect};
pub use self::reflow::{KeptNight, Reflow};
use super::decide::guards::{days_exist, live, open_at_version};
use super::nights::BedOnRoute;
use super::settings::NightsMode;
use super::stage::ChosenBy;

/// Longest label a rider can give a day, in characters.
pub const LABEL_MAX_CHARS: usize = 100;

/// Distance, climbing of a slice of the route.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measure {
    pub distance_km: f64,
    /// `None` when the slice's heights are unknown.
    pub ascent_m: Option<f64>,
    pub descent_m: Option<f64>,
}

impl Measure {
    /// As a day shows it: kilometres to 10 m, climbing to the metre.
    pub fn rounded(self) -> Self {
        Self {
            distance_km: (self.distance_km * 100.0).round() / 100.0,
            ascent_m: self.ascent_m.map(f64::round),
            descent_m: self.descent_m.map(f64::round),
        }
    }
}

/// What an edit needs to know about the route: the service implements it over the stored
/// track (and the embedded gazetteer), the tests over a synthetic line.
pub trait RouteGeometry {
    /// Number of points of the track.
    fn point_count(&self) -> usize;
    /// The point at `index`, if any.
    fn point(&self, index: usize) -> Option<Point>;
    /// Distance and climbing of points `first..=last`.
    fn measure(&self, first: usize, last: usize) -> Measure;
    /// The index in `first..=last` of the point nearest `target`.
    fn nearest(&self, target: Point, first: usize, last: usize) -> usize;
    /// The first index in `first..=last` at least `km` along the track from `first`
    /// (`last` when the slice is shorter).
    fn index_at_km(&self, first: usize, last: usize, km: f64) -> usize;
    /// Locality name and country code at a point (reverse geocoding).
    fn place(&self, point: Point) -> (Option<String>, Option<String>);
    /// Kilometres along the track from its first point to `index`.
    fn along_km(&self, index: usize) -> f64 {
        self.measure(0, index).distance_km
    }
}

/// Where a day should end: a distance from its start, or the route point nearest a place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Boundary {
    /// Kilometres from the day's start.
    AtKm(f64),
    /// The route point nearest this place.
    Near(Point),
}

/// A label change: keep, set, or clear.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum LabelChange {
    #[default]
    Keep,
    Set(String),
    Clear,
}

/// One edit of the days.
#[derive(Clone, Debug, PartialEq)]
pub enum StageEdit {
    /// Split `stage_id` in two at `split` (half way when absent); the new day, `new_stage_id`,
    /// follows it and carries `label`.
    Add {
        stage_id: Uuid,
        new_stage_id: Uuid,
        split: Option<Boundary>,
        label: LabelChange,
    },
    /// Move the day's end along the route (the next day's start follows) and/or relabel it.
    Update {
        stage_id: Uuid,
        end: Option<Boundary>,
        label: LabelChange,
    },
    /// Move the day to position `to_index` (0-based) of the list.
    Move { stage_id: Uuid, to_index: usize },
    /// Remove the day; a riding day's stretch of route joins the previous riding day (or the
    /// next one when it is the first).
    Delete { stage_id: Uuid },
    /// Merge a riding day into the next riding day (its stretch joins that day's start).
    MergeNext { stage_id: Uuid },
    /// Insert a rest day, `new_stage_id`, right after `stage_id`.
    RestDay { stage_id: Uuid, new_stage_id: Uuid },
    /// Sleep at this candidate (or hand-entered place): the day ends at the route point
    /// nearest it, the next day starts there.
    ChooseAccommodation {
        stage_id: Uuid,
        accommodation: Accommodation,
    },
    /// Forget the chosen place to sleep.
    ClearAccommodation { stage_id: Uuid },
}

/// The kind of edit, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageAction {
    Add,
    Update,
    Move,
    Delete,
    MergeNext,
    RestDay,
    ChooseAccommodation,
    ClearAccommodation,
}

impl StageAction {
    /// The action's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Update => "update",
            Self::Move => "move",
            Self::Delete => "delete",
            Self::MergeNext => "merge_next",
            Self::RestDay => "rest_day",
            Self::ChooseAccommodation => "choose_accommodation",
            Self::ClearAccommodation => "clear_accommodation",
        }
    }
}

impl StageEdit {
    fn action(&self) -> StageAction {
        match self {
            Self::Add { .. } => StageAction::Add,
            Self::Update { .. } => StageAction::Update,
            Self::Move { .. } => StageAction::Move,
            Self::Delete { .. } => StageAction::Delete,
            Self::MergeNext { .. } => StageAction::MergeNext,
            Self::RestDay { .. } => StageAction::RestDay,
            Self::ChooseAccommodation { .. } => StageAction::ChooseAccommodation,
            Self::ClearAccommodation { .. } => StageAction::ClearAccommodation,
        }
    }

    fn stage_id(&self) -> Uuid {
        match self {
            Self::Add { stage_id, .. }
            | Self::Update { stage_id, .. }
            | Self::Move { stage_id, .. }
            | Self::Delete { stage_id }
            | Self::MergeNext { stage_id }
            | Self::RestDay { stage_id, .. }
            | Self::ChooseAccommodation { stage_id, .. }
            | Self::ClearAccommodation { stage_id } => *stage_id,
        }
    }
}

/// What an edit changed, which decides what must be computed again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Impact {
    /// A day's stretch of route changed: everything along it is stale.
    geometry: bool,
    /// Days moved to other dates: weather and calendar are stale.
    dates: bool,
}

impl Impact {
    fn invalidated(self) -> Vec<Category> {
        if self.geometry {
            ANALYSIS_CATEGORIES.to_vec()
        } else if self.dates {
            vec![Category::Weather, Category::Context]
        } else {
            Vec::new()
        }
    }
}

/// The route's geometry as a command carries it, with the beds found along it (with nights
/// at accommodation, for a choice to re-flow the nights after it): shared, so a command
/// retried after a lost race does not read the track again.
#[derive(Clone)]
pub struct RouteSnapshot {
    geometry: std::sync::Arc<dyn RouteGeometry + Send + Sync>,
    beds: std::sync::Arc<[BedOnRoute]>,
}

impl RouteSnapshot {
    /// A snapshot of `geometry`, without beds.
    pub fn new(geometry: impl RouteGeometry + Send + Sync + 'static) -> Self {
        Self {
            geometry: std::sync::Arc::new(geometry),
            beds: std::sync::Arc::from(Vec::new()),
        }
    }

    /// The snapshot with the beds found along the route.
    pub fn with_beds(mut self, beds: Vec<BedOnRoute>) -> Self {
        self.beds = std::sync::Arc::from(beds);
        self
    }

    /// The geometry.
    pub fn geometry(&self) -> &dyn RouteGeometry {
        self.geometry.as_ref()
    }

    /// The beds along the route (none unless the route was paced with nights at them).
    pub fn beds(&self) -> &[BedOnRoute] {
        &self.beds
    }
}

impl std::fmt::Debug for RouteSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RouteSnapshot({} points, {} beds)",
            self.geometry.point_count(),
            self.beds.len()
        )
    }
}

/// Two snapshots are equal when they are the same geometry and beds.
impl PartialEq for RouteSnapshot {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.geometry, &other.geometry)
            && std::sync::Arc::ptr_eq(&self.beds, &other.beds)
    }
}

/// Judges an edit of the days. Guard order: existence, lock, version, days present, stage
/// known, then the edit's own rules. Reached through [`super::decide()`].
#[cfg(test)]
pub(crate) fn decide_stage_edit(
    state: Option<&Trip>,
    edit: StageEdit,
    expected_version: u64,
    today: NaiveDate,
    route: &dyn RouteGeometry,
) -> Result<Vec<TripEvent>, TripError> {
    decide_stage_edit_over(state, edit, expected_version, today, route, &[])
}

/// Judges an edit of the days with the beds along the route (the tests' `decide_stage_edit`
/// passes none): with nights at accommodation, a choice of place re-flows the nights Etappe
/// chose after it ([`reflow`]). Guard order: existence, lock, version, days present, stage
/// known, then the edit's own rules. Reached through [`super::decide()`].
pub(crate) fn decide_stage_edit_over(
    state: Option<&Trip>,
    edit: StageEdit,
    expected_version: u64,
    today: NaiveDate,
    route: &dyn RouteGeometry,
    beds: &[BedOnRoute],
) -> Result<Vec<TripEvent>, TripError> {
    let trip = open_at_version(live(state), expected_version, today)?;
    days_exist(trip)?;
    let stage_id = edit.stage_id();
    let index = trip
        .stages
        .iter()
        .position(|s| s.id == stage_id)
        .ok_or(TripError::StageNotFound)?;
    let action = edit.action();
    let mut stages = trip.stages.clone();
    let etappes_night = match &edit {
        StageEdit::Update { end: Some(_), .. } => trip.stages[index]
            .accommodation
            .clone()
            .filter(|a| a.chosen_by == Some(ChosenBy::Etappe)),
        _ => None,
    };
    let night_asked = match &edit {
        StageEdit::ChooseAccommodation { stage_id, .. }
        | StageEdit::ClearAccommodation { stage_id } => Some(*stage_id),
        _ => None,
    };
    let mut impact = apply(&mut stages, index, edit, route)?;
    let mut effects = Vec::new();
    let mut rechosen = None;
    if let Some(was) = etappes_night.filter(|_| {
        trip.settings.nights == NightsMode::AtAccommodation
            && stages[index].last_point != trip.stages[index].last_point
    }) {
        effects.push(kept::rechoose_night(
            &mut stages,
            index,
            &was,
            route,
            beds,
            &trip.settings,
        ));
        rechosen = Some(stage_id);
    }
    let mut reflowed = None;
    if action == StageAction::ChooseAccommodation
        && trip.settings.nights == NightsMode::AtAccommodation
        && !beds.is_empty()
    {
        reflowed = reflow::after_choice(&mut stages, index, route, beds, &trip.settings);
        if reflowed.as_ref().is_some_and(|r| !r.moved.is_empty()) {
            impact.geometry = true;
        }
    }
    apply::settle_rest_days(&mut stages);
    for (i, stage) in stages.iter_mut().enumerate() {
        stage.day_number = i as u32 + 1;
    }
    effects.extend(kept::carry_detours(&trip.stages, &mut stages, route));
    effects.extend(kept::nights_dropped(
        &trip.stages,
        &stages,
        night_asked,
        reflowed.is_some(),
        rechosen,
    ));
    let end_date = match (trip.settings.start_date, trip.settings.end_date) {
        (Some(start), Some(_)) if stages.len() != trip.stages.len() => {
            start.checked_add_days(Days::new(stages.len().saturating_sub(1) as u64))
        }
        _ => trip.settings.end_date,
    };
    let invalidated = impact.invalidated();
    let mut events = vec![TripEvent::StagesEdited {
        action,
        stage_id,
        stages,
        end_date,
        invalidated: invalidated.clone(),
        version: trip.version + 1,
        reflow: reflowed,
        effects,
    }];
    if !invalidated.is_empty() {
        events.push(TripEvent::AnalysisRequested {
            generation: trip.generation,
            categories: invalidated,
        });
    }
    Ok(events)
}

#[cfg(test)]
mod tests;
