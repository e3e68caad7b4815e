//! Applying a day edit to the days: split, move an end, merge, reorder, relabel, with each
//! touched day measured again off the route; every other day keeps its id.

use uuid::Uuid;

use crate::text::strip_controls;
use crate::trip::nights::ChosenBy;
use crate::trip::stage::Accommodation;

use super::{
    Boundary, FieldError, Impact, LABEL_MAX_CHARS, LabelChange, Point, RouteGeometry, Stage,
    StageEdit, TripError,
};

/// Applies `edit` to the day at `index` of `stages`, answering what it changed.
pub(super) fn apply(
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
        StageEdit::Update { end, label, .. } => update(stages, index, end, &label, route),
        StageEdit::Move { to_index, .. } => move_day(stages, index, to_index),
        StageEdit::Delete { .. } => delete(stages, index, route, Into::Previous),
        StageEdit::MergeNext { .. } => delete(stages, index, route, Into::Next),
        StageEdit::RestDay { new_stage_id, .. } => insert_rest_day(stages, index, new_stage_id),
        StageEdit::ChooseAccommodation { accommodation, .. } => {
            choose_accommodation(stages, index, accommodation, route)
        }
        StageEdit::ClearAccommodation { .. } => {
            if let Some(stage) = stages.get_mut(index) {
                stage.accommodation = None;
            }
            Ok(Impact::default())
        }
    }
}

/// Moves the day's end along the route (the next day's start follows) and/or relabels it.
fn update(
    stages: &mut [Stage],
    index: usize,
    end: Option<Boundary>,
    label: &LabelChange,
    route: &dyn RouteGeometry,
) -> Result<Impact, TripError> {
    let mut impact = Impact::default();
    if let Some(end) = end {
        impact = move_end(stages, index, end, route)?;
        if let Some(stage) = stages.get_mut(index).filter(|_| impact.geometry) {
            stage.accommodation = None;
            // A night the rider placed by hand: kept by every re-flow.
            stage.night = None;
        }
    }
    relabel(stages, index, label)?;
    Ok(impact)
}

/// Moves the day to `to_index`: only a rest day can move, since riding days keep the
/// route's order, and it must come after a riding day.
fn move_day(stages: &mut Vec<Stage>, index: usize, to_index: usize) -> Result<Impact, TripError> {
    let riding_order = |days: &[Stage]| -> Vec<Uuid> {
        days.iter()
            .filter(|s| !s.is_rest_day)
            .map(|s| s.id)
            .collect()
    };
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
    let before = riding_order(stages);
    let stage = stages.remove(index);
    let rest = stage.is_rest_day;
    stages.insert(to_index, stage);
    if riding_order(stages) != before {
        return Err(invalid(
            "toIndex",
            "riding days keep the route's order (each day starts where the one before ends): only a rest day moves; to change a day's length, move its end".into(),
        ));
    }
    if rest && !stages.iter().take(to_index).any(|s| !s.is_rest_day) {
        return Err(invalid(
            "toIndex",
            "a rest day comes after a riding day (it is spent where that day ends): toIndex must be after the first riding day".into(),
        ));
    }
    Ok(Impact {
        geometry: false,
        dates: true,
    })
}

/// Inserts a rest day, `new_stage_id`, after the day at `index`, spent where that day ends
/// (at its place to sleep, if chosen).
fn insert_rest_day(
    stages: &mut Vec<Stage>,
    index: usize,
    new_stage_id: Uuid,
) -> Result<Impact, TripError> {
    let Some(day) = stages.get(index) else {
        return Err(TripError::StageNotFound);
    };
    let rest = Stage {
        id: new_stage_id,
        distance_km: 0.0,
        ascent_m: Some(0.0),
        descent_m: Some(0.0),
        start: day.end,
        end: day.end,
        start_label: day.end_label.clone(),
        end_label: day.end_label.clone(),
        start_country: day.end_country.clone(),
        end_country: day.end_country.clone(),
        is_rest_day: true,
        first_point: day.last_point,
        last_point: day.last_point,
        accommodation: day.accommodation.clone(),
        ..Default::default()
    };
    stages.insert(index + 1, rest);
    Ok(Impact {
        geometry: false,
        dates: true,
    })
}

/// The rider sleeps at `accommodation`: the day ends at the route point nearest it (the next
/// day starts there), and the place is kept as the rider's choice.
fn choose_accommodation(
    stages: &mut [Stage],
    index: usize,
    accommodation: Accommodation,
    route: &dyn RouteGeometry,
) -> Result<Impact, TripError> {
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
        chosen.chosen_by = Some(ChosenBy::Rider);
        stage.accommodation = Some(chosen);
        // The rider's night: no pacer's reason stands for it any more.
        stage.night = None;
    }
    Ok(impact)
}

/// Puts every rest day where it is spent: at the end of the riding day before it (a rest day
/// that an edit left first moves after the first riding day). Run after every edit, so a rest
/// day moved, or whose riding day moved its end or was merged away, never keeps a stale place.
pub(super) fn settle_rest_days(stages: &mut Vec<Stage>) {
    let leading = stages.iter().take_while(|s| s.is_rest_day).count();
    if leading > 0 && leading < stages.len() {
        let rests: Vec<Stage> = stages.drain(..leading).collect();
        let at = stages
            .iter()
            .position(|s| !s.is_rest_day)
            .map_or(0, |i| i + 1);
        for (k, rest) in rests.into_iter().enumerate() {
            stages.insert(at + k, rest);
        }
    }
    let mut previous: Option<Stage> = None;
    for stage in stages.iter_mut() {
        if !stage.is_rest_day {
            previous = Some(stage.clone());
            continue;
        }
        if let Some(day) = &previous {
            stage.first_point = day.last_point;
            stage.last_point = day.last_point;
            stage.start = day.end;
            stage.end = day.end;
            stage.start_label.clone_from(&day.end_label);
            stage.end_label.clone_from(&day.end_label);
            stage.start_country.clone_from(&day.end_country);
            stage.end_country.clone_from(&day.end_country);
        }
    }
}

fn invalid(field: &str, message: String) -> TripError {
    TripError::Invalid(vec![FieldError::new(field, message)])
}

/// The riding day at `index` (a copy, the edit changes the list); a rest day is refused
/// with `rest_day_refusal`, which says what to do instead.
fn riding_day(stages: &[Stage], index: usize, rest_day_refusal: &str) -> Result<Stage, TripError> {
    let day = stages.get(index).cloned().ok_or(TripError::StageNotFound)?;
    if day.is_rest_day {
        return Err(invalid("stageId", rest_day_refusal.to_owned()));
    }
    Ok(day)
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
    let day = riding_day(
        stages,
        index,
        "a rest day has no route to split; name a riding day, or use action rest_day",
    )?;
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
    let day = riding_day(
        stages,
        index,
        "a rest day has no end to move; name a riding day",
    )?;
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
        forget_old_roads(stage);
        remeasure(stage, route);
    }
    Ok(Impact {
        geometry: true,
        dates: false,
    })
}

/// The riding day at `previous` rides on to where the removed `day` (which was at `index`)
/// ended, and sleeps where it slept; rest days that sat between them now follow that longer
/// day. Answers the indices of the days it touched.
fn previous_rides_on(
    stages: &mut [Stage],
    previous: usize,
    index: usize,
    day: &Stage,
) -> Vec<usize> {
    let mut touched = vec![previous];
    if let Some(stage) = stages.get_mut(previous) {
        stage.last_point = stage.last_point.max(day.last_point);
        stage.accommodation = day.accommodation.clone();
    }
    for (i, stage) in stages
        .iter_mut()
        .enumerate()
        .skip(previous + 1)
        .take(index - previous - 1)
    {
        stage.first_point = day.last_point;
        stage.last_point = day.last_point;
        touched.push(i);
    }
    touched
}

/// The riding day now at `following` starts where the removed `day` (which was at `index`:
/// the first riding day, or one merged into the next) started; rest days between them sit
/// there too. Answers the indices of the days it touched.
fn following_starts_earlier(
    stages: &mut [Stage],
    following: usize,
    index: usize,
    day: &Stage,
) -> Vec<usize> {
    let mut touched = vec![following];
    if let Some(stage) = stages.get_mut(following) {
        stage.first_point = stage.first_point.min(day.first_point);
    }
    for (i, stage) in stages
        .iter_mut()
        .enumerate()
        .skip(index)
        .take(following - index)
    {
        stage.first_point = day.first_point;
        stage.last_point = day.first_point;
        touched.push(i);
    }
    touched
}

/// Which neighbour a merged day joins.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Into {
    /// The previous riding day (the next one when there is none: the first day).
    Previous,
    /// The next riding day.
    Next,
}

/// Removes the day at `index`; a riding day's stretch of route joins the neighbour `into`
/// names.
fn delete(
    stages: &mut Vec<Stage>,
    index: usize,
    route: &dyn RouteGeometry,
    into: Into,
) -> Result<Impact, TripError> {
    let Some(day) = stages.get(index).cloned() else {
        return Err(TripError::StageNotFound);
    };
    if into == Into::Next && day.is_rest_day {
        return Err(invalid(
            "stageId",
            "a rest day has no route to merge: delete it instead".into(),
        ));
    }
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
    let mut previous = stages
        .iter()
        .take(index)
        .rposition(|s| !s.is_rest_day && s.last_point <= day.first_point);
    let following = stages
        .iter()
        .enumerate()
        .skip(index + 1)
        .find(|(_, s)| !s.is_rest_day && s.first_point >= day.last_point)
        .map(|(i, _)| i);
    if into == Into::Next {
        if following.is_none() {
            return Err(invalid(
                "stageId",
                "the last day has no next day to merge into: merge it into the previous one (delete)".into(),
            ));
        }
        // Joining the next day is what "no previous day" already does.
        previous = None;
    }
    stages.remove(index);
    let touched = match (previous, following) {
        (Some(p), _) => previous_rides_on(stages, p, index, &day),
        (None, Some(f)) => following_starts_earlier(stages, f - 1, index, &day),
        (None, None) => Vec::new(),
    };
    for i in touched {
        if let Some(stage) = stages.get_mut(i) {
            forget_old_roads(stage);
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

/// A day whose stretch of route changed forgets what was read off its old roads: alerts,
/// road shares, places found around its end, its detour.
pub(super) fn forget_old_roads(stage: &mut Stage) {
    stage.alerts = Vec::new();
    stage.road = None;
    stage.accommodations = Vec::new();
    stage.detour = None;
}

/// Recomputes a day's figures and end points from its slice of the route.
pub(super) fn remeasure(stage: &mut Stage, route: &dyn RouteGeometry) {
    let (Some(start), Some(end)) = (
        route.point(stage.first_point),
        route.point(stage.last_point),
    ) else {
        return;
    };
    if stage.is_rest_day {
        stage.distance_km = 0.0;
        stage.ascent_m = Some(0.0);
        stage.descent_m = Some(0.0);
    } else {
        let measure = route.measure(stage.first_point, stage.last_point);
        stage.distance_km = (measure.distance_km * 100.0).round() / 100.0;
        stage.ascent_m = measure.ascent_m.map(f64::round);
        stage.descent_m = measure.descent_m.map(f64::round);
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
