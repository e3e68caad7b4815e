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
use crate::text::strip_controls;

pub mod input;

/// Longest label a rider can give a day, in characters.
pub const LABEL_MAX_CHARS: usize = 100;

/// Distance, climbing of a slice of the route.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure {
    pub distance_km: f64,
    pub ascent_m: f64,
    pub descent_m: f64,
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

/// The route's geometry as a command carries it: shared, so a command retried after a lost
/// race does not measure the track again.
#[derive(Clone)]
pub struct RouteSnapshot(std::sync::Arc<dyn RouteGeometry + Send + Sync>);

impl RouteSnapshot {
    /// A snapshot of `geometry`.
    pub fn new(geometry: impl RouteGeometry + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(geometry))
    }

    /// The geometry.
    pub fn geometry(&self) -> &dyn RouteGeometry {
        self.0.as_ref()
    }
}

impl std::fmt::Debug for RouteSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RouteSnapshot({} points)", self.0.point_count())
    }
}

/// Two snapshots are equal when they are the same geometry.
impl PartialEq for RouteSnapshot {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Judges an edit of the days. Guard order: existence, lock, version, days present, stage
/// known, then the edit's own rules. Reached through [`super::decide`].
pub(crate) fn decide_stage_edit(
    state: Option<&Trip>,
    edit: StageEdit,
    expected_version: u64,
    today: NaiveDate,
    route: &dyn RouteGeometry,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = state.filter(|t| !t.deleted).ok_or(TripError::NotFound)?;
    if trip.is_locked(today) {
        return Err(TripError::Locked);
    }
    if expected_version != trip.version {
        return Err(TripError::StaleVersion {
            expected: expected_version,
            current: trip.version,
        });
    }
    if !trip.has_days() {
        return Err(TripError::NoStages);
    }
    let stage_id = edit.stage_id();
    let index = trip
        .stages
        .iter()
        .position(|s| s.id == stage_id)
        .ok_or(TripError::StageNotFound)?;
    let action = edit.action();
    let mut stages = trip.stages.clone();
    let impact = apply(&mut stages, index, edit, route)?;
    for (i, stage) in stages.iter_mut().enumerate() {
        stage.day_number = i as u32 + 1;
    }
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
    }];
    if !invalidated.is_empty() {
        events.push(TripEvent::AnalysisRequested {
            generation: trip.generation,
            categories: invalidated,
        });
    }
    Ok(events)
}

fn apply(
    stages: &mut Vec<Stage>,
    index: usize,
    edit: StageEdit,
    route: &dyn RouteGeometry,
) -> Result<Impact, TripError> {
    match edit {
        StageEdit::Add {
            new_stage_id,
            split,
            label,
            ..
        } => add(stages, index, new_stage_id, split, &label, route),
        StageEdit::Update { end, label, .. } => {
            let mut impact = Impact::default();
            if let Some(end) = end {
                impact = move_end(stages, index, end, route)?;
                if let Some(stage) = stages.get_mut(index) {
                    stage.accommodation = None;
                }
            }
            relabel(stages, index, &label)?;
            Ok(impact)
        }
        StageEdit::Move { to_index, .. } => {
            if to_index >= stages.len() {
                return Err(invalid(
                    "toIndex",
                    format!(
                        "toIndex must be between 0 and {} (0-based position among the {} days)",
                        stages.len() - 1,
                        stages.len()
                    ),
                ));
            }
            if to_index == index {
                return Ok(Impact::default());
            }
            let stage = stages.remove(index);
            stages.insert(to_index, stage);
            Ok(Impact {
                geometry: false,
                dates: true,
            })
        }
        StageEdit::Delete { .. } => delete(stages, index, route),
        StageEdit::RestDay { new_stage_id, .. } => {
            let Some(day) = stages.get(index) else {
                return Err(TripError::StageNotFound);
            };
            let rest = Stage {
                id: new_stage_id,
                day_number: 0,
                distance_km: 0.0,
                ascent_m: 0.0,
                descent_m: 0.0,
                start: day.end,
                end: day.end,
                start_label: day.end_label.clone(),
                end_label: day.end_label.clone(),
                start_country: day.end_country.clone(),
                end_country: day.end_country.clone(),
                label: None,
                is_rest_day: true,
                first_point: day.last_point,
                last_point: day.last_point,
                alerts: Vec::new(),
                accommodations: Vec::new(),
                accommodation: day.accommodation.clone(),
                detour: None,
                detour_failure: None,
            };
            stages.insert(index + 1, rest);
            Ok(Impact {
                geometry: false,
                dates: true,
            })
        }
        StageEdit::ChooseAccommodation { accommodation, .. } => {
            let target = Point {
                lat: accommodation.lat,
                lon: accommodation.lon,
                ele: None,
            };
            let impact = if next_riding(stages, index).is_some() {
                move_end(stages, index, Boundary::Near(target), route)?
            } else {
                // The last day ends where the route ends; the place is simply chosen.
                Impact::default()
            };
            if let Some(stage) = stages.get_mut(index) {
                let mut chosen = accommodation;
                chosen.distance_to_end_m = Some(straight_m(stage.end, target).round());
                stage.accommodation = Some(chosen);
            }
            Ok(impact)
        }
        StageEdit::ClearAccommodation { .. } => {
            if let Some(stage) = stages.get_mut(index) {
                stage.accommodation = None;
            }
            Ok(Impact::default())
        }
    }
}

fn invalid(field: &str, message: String) -> TripError {
    TripError::Invalid(vec![FieldError::new(field, message)])
}

/// The index of the next riding day after `index` that continues the route where it ends.
fn next_riding(stages: &[Stage], index: usize) -> Option<usize> {
    let stage = stages.get(index)?;
    stages
        .iter()
        .enumerate()
        .skip(index + 1)
        .find(|(_, s)| !s.is_rest_day)
        .filter(|(_, s)| s.first_point == stage.last_point)
        .map(|(i, _)| i)
}

fn add(
    stages: &mut Vec<Stage>,
    index: usize,
    new_stage_id: Uuid,
    split: Option<Boundary>,
    label: &LabelChange,
    route: &dyn RouteGeometry,
) -> Result<Impact, TripError> {
    let Some(day) = stages.get(index).cloned() else {
        return Err(TripError::StageNotFound);
    };
    if day.is_rest_day {
        return Err(invalid(
            "stageId",
            "a rest day has no route to split; name a riding day, or use action rest_day".into(),
        ));
    }
    if day.last_point < day.first_point + 2 {
        return Err(invalid(
            "stageId",
            "this day is too short to split in two".into(),
        ));
    }
    let split = split.unwrap_or(Boundary::AtKm(day.distance_km / 2.0));
    let cut = boundary_index(split, day.first_point, day.last_point, route, "distance")?;
    let cut = cut.clamp(day.first_point + 1, day.last_point - 1);
    let mut second = day.clone();
    second.id = new_stage_id;
    second.first_point = cut;
    second.label = None;
    second.alerts = Vec::new();
    second.detour = None;
    let mut first = day;
    first.last_point = cut;
    first.accommodation = None;
    first.accommodations = Vec::new();
    first.detour = None;
    first.alerts = Vec::new();
    remeasure(&mut first, route);
    remeasure(&mut second, route);
    if let Some(slot) = stages.get_mut(index) {
        *slot = first;
    }
    stages.insert(index + 1, second);
    relabel(stages, index + 1, label)?;
    Ok(Impact {
        geometry: true,
        dates: true,
    })
}

/// Resolves a boundary to a track index strictly inside `first..last` when possible.
fn boundary_index(
    boundary: Boundary,
    first: usize,
    last: usize,
    route: &dyn RouteGeometry,
    field: &str,
) -> Result<usize, TripError> {
    match boundary {
        Boundary::AtKm(km) => {
            let available = route.measure(first, last).distance_km;
            if !km.is_finite() || km <= 0.0 || km >= available {
                return Err(invalid(
                    field,
                    format!(
                        "{field} must be more than 0 and less than {available:.1} km (the kilometres from the day's start where it should end)"
                    ),
                ));
            }
            Ok(route.index_at_km(first, last, km))
        }
        Boundary::Near(point) => {
            if !(-90.0..=90.0).contains(&point.lat) || !(-180.0..=180.0).contains(&point.lon) {
                return Err(invalid(
                    "endPoint",
                    "endPoint needs lat between -90 and 90 and lon between -180 and 180".into(),
                ));
            }
            Ok(route.nearest(point, first, last))
        }
    }
}

/// Moves the end of riding day `index` (and the start of the riding day that continues it).
fn move_end(
    stages: &mut [Stage],
    index: usize,
    end: Boundary,
    route: &dyn RouteGeometry,
) -> Result<Impact, TripError> {
    let Some(day) = stages.get(index).cloned() else {
        return Err(TripError::StageNotFound);
    };
    if day.is_rest_day {
        return Err(invalid(
            "stageId",
            "a rest day has no end to move; name a riding day".into(),
        ));
    }
    let next = next_riding(stages, index);
    let limit = match next {
        Some(n) => stages.get(n).map_or(day.last_point, |s| s.last_point),
        None => {
            return Err(invalid(
                "stageId",
                "the last day ends where the route ends: move the end of an earlier day instead"
                    .into(),
            ));
        }
    };
    if limit < day.first_point + 2 {
        return Err(invalid(
            "stageId",
            "this day and the next are too short to move the boundary between them".into(),
        ));
    }
    let cut = boundary_index(end, day.first_point, limit, route, "distance")?
        .clamp(day.first_point + 1, limit - 1);
    if cut == day.last_point {
        return Ok(Impact::default());
    }
    for (i, stage) in stages.iter_mut().enumerate() {
        if i == index {
            stage.last_point = cut;
        } else if i > index && Some(i) <= next {
            if stage.is_rest_day {
                stage.first_point = cut;
                stage.last_point = cut;
            } else {
                stage.first_point = cut;
            }
        } else {
            continue;
        }
        stage.alerts = Vec::new();
        stage.accommodations = Vec::new();
        stage.detour = None;
        remeasure(stage, route);
    }
    Ok(Impact {
        geometry: true,
        dates: false,
    })
}

fn delete(
    stages: &mut Vec<Stage>,
    index: usize,
    route: &dyn RouteGeometry,
) -> Result<Impact, TripError> {
    let Some(day) = stages.get(index).cloned() else {
        return Err(TripError::StageNotFound);
    };
    if day.is_rest_day {
        stages.remove(index);
        return Ok(Impact {
            geometry: false,
            dates: true,
        });
    }
    if stages.iter().filter(|s| !s.is_rest_day).count() < 2 {
        return Err(invalid(
            "stageId",
            "a trip keeps at least one riding day: delete the trip instead".into(),
        ));
    }
    let previous = stages
        .iter()
        .take(index)
        .rposition(|s| !s.is_rest_day && s.last_point <= day.first_point);
    let following = stages
        .iter()
        .enumerate()
        .skip(index + 1)
        .find(|(_, s)| !s.is_rest_day && s.first_point >= day.last_point)
        .map(|(i, _)| i);
    stages.remove(index);
    let touched: Vec<usize> = match (previous, following) {
        (Some(p), _) => {
            // The previous day rides on to where the deleted one ended; rest days that sat
            // between them now follow that longer day.
            let mut touched = vec![p];
            if let Some(stage) = stages.get_mut(p) {
                stage.last_point = stage.last_point.max(day.last_point);
                stage.accommodation = day.accommodation.clone();
            }
            for (i, stage) in stages
                .iter_mut()
                .enumerate()
                .skip(p + 1)
                .take(index - p - 1)
            {
                stage.first_point = day.last_point;
                stage.last_point = day.last_point;
                touched.push(i);
            }
            touched
        }
        (None, Some(f)) => {
            let f = f - 1;
            let mut touched = vec![f];
            if let Some(stage) = stages.get_mut(f) {
                stage.first_point = stage.first_point.min(day.first_point);
            }
            for (i, stage) in stages.iter_mut().enumerate().skip(index).take(f - index) {
                stage.first_point = day.first_point;
                stage.last_point = day.first_point;
                touched.push(i);
            }
            touched
        }
        (None, None) => Vec::new(),
    };
    for i in touched {
        if let Some(stage) = stages.get_mut(i) {
            stage.alerts = Vec::new();
            stage.accommodations = Vec::new();
            stage.detour = None;
            remeasure(stage, route);
        }
    }
    Ok(Impact {
        geometry: true,
        dates: true,
    })
}

fn relabel(stages: &mut [Stage], index: usize, label: &LabelChange) -> Result<(), TripError> {
    let Some(stage) = stages.get_mut(index) else {
        return Err(TripError::StageNotFound);
    };
    match label {
        LabelChange::Keep => {}
        LabelChange::Clear => stage.label = None,
        LabelChange::Set(text) => {
            let clean = strip_controls(text).trim().to_owned();
            if clean.chars().count() > LABEL_MAX_CHARS {
                return Err(invalid(
                    "label",
                    format!("label must be at most {LABEL_MAX_CHARS} characters"),
                ));
            }
            stage.label = (!clean.is_empty()).then_some(clean);
        }
    }
    Ok(())
}

/// Recomputes a day's figures and end points from its slice of the route.
fn remeasure(stage: &mut Stage, route: &dyn RouteGeometry) {
    let (Some(start), Some(end)) = (
        route.point(stage.first_point),
        route.point(stage.last_point),
    ) else {
        return;
    };
    if stage.is_rest_day {
        stage.distance_km = 0.0;
        stage.ascent_m = 0.0;
        stage.descent_m = 0.0;
    } else {
        let measure = route.measure(stage.first_point, stage.last_point);
        stage.distance_km = (measure.distance_km * 100.0).round() / 100.0;
        stage.ascent_m = measure.ascent_m.round();
        stage.descent_m = measure.descent_m.round();
    }
    if stage.start != start {
        (stage.start_label, stage.start_country) = route.place(start);
        stage.start = start;
    }
    if stage.end != end {
        (stage.end_label, stage.end_country) = route.place(end);
        stage.end = end;
    }
}

/// Great-circle distance between two points, metres.
pub fn straight_m(a: Point, b: Point) -> f64 {
    etappe_geo::haversine_m(a.lat, a.lon, b.lat, b.lon)
}

#[cfg(test)]
mod tests;
