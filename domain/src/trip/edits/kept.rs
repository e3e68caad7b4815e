//! What an edit keeps of what was made on the days, and what it says it could not keep.
//!
//! An edit of the days moves cuts; it must not take with it what a person made on the days
//! it did not ask about. A detour belongs to its point on the route, not to a day: after the
//! edit it rides with whichever day now holds its spur (moved, and said so, when that is
//! another day), and is removed only when no day can ride it whole (a cut now falls inside
//! it, or the day that holds it already rides another detour). A chosen night stays unless
//! the day no longer ends there; then the edit names it, and, when a person chose it, the
//! change asks first (`SideEffect::loses_persons_work`). A night Etappe chose under nights at
//! accommodation is chosen again near the day's new end.

use serde::{Deserialize, Serialize};

use super::{RouteGeometry, Stage};
use crate::text::strip_controls;
use crate::trip::nights::{BedOnRoute, ChosenBy, pacer_beds};
use crate::trip::settings::TripSettings;
use crate::trip::stage::{Accommodation, Detour};

/// Farthest a bed may lie from a day's new end (along the route plus off it) to be chosen
/// again for the night there, metres: a few minutes' ride.
pub const RECHOOSE_REACH_M: f64 = 2_000.0;

/// Something an edit moved or removed beyond what it was asked: recorded with the edit, told
/// to the person (REST, MCP, the page, the history).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SideEffect {
    /// A detour moved with its point to the day that now rides it (days numbered as before
    /// and after the edit).
    #[serde(rename_all = "camelCase")]
    DetourMoved { from_day: u32, to_day: u32 },
    /// A detour no day can ride any more (day numbered as before the edit).
    #[serde(rename_all = "camelCase")]
    DetourRemoved { day: u32, reason: String },
    /// A chosen night dropped because its day no longer ends there (day as before the edit).
    #[serde(rename_all = "camelCase")]
    NightRemoved {
        day: u32,
        place: String,
        chosen_by: ChosenBy,
    },
    /// A night Etappe chose, chosen again near the day's new end (day as after the edit);
    /// `same` when that is the bed it had.
    #[serde(rename_all = "camelCase")]
    NightRechosen {
        day: u32,
        place: String,
        #[serde(default)]
        same: bool,
    },
}

impl SideEffect {
    /// True when this removes something a person made (a detour, a night they chose): such
    /// a change asks before it is made.
    pub fn loses_persons_work(&self) -> bool {
        match self {
            Self::DetourRemoved { .. } => true,
            Self::NightRemoved { chosen_by, .. } => *chosen_by == ChosenBy::Rider,
            Self::DetourMoved { .. } | Self::NightRechosen { .. } => false,
        }
    }

    /// The sentence a person reads (present tense: it is read before the change, when it
    /// asks, and after it).
    pub fn sentence(&self) -> String {
        match self {
            Self::DetourMoved { from_day, to_day } => format!(
                "The detour of day {from_day} moves to day {to_day}, which now rides its point"
            ),
            Self::DetourRemoved { day, reason } => {
                format!("The detour of day {day} is removed: {reason}")
            }
            Self::NightRemoved {
                day,
                place,
                chosen_by: ChosenBy::Rider,
            } => format!(
                "The night you chose after day {day} ({}) is dropped: the day no longer ends there",
                strip_controls(place)
            ),
            Self::NightRemoved { day, place, .. } => format!(
                "The night Etappe chose after day {day} ({}) is dropped: no bed lies within {:.0} km of the day's new end",
                strip_controls(place),
                RECHOOSE_REACH_M / 1000.0
            ),
            Self::NightRechosen { day, place, same } => format!(
                "The night after day {day} {} {}, the bed nearest its new end",
                if *same { "stays at" } else { "is now at" },
                strip_controls(place)
            ),
        }
    }
}

/// A name for a place to sleep in a sentence.
pub(super) fn place_label(place: &Accommodation) -> String {
    place
        .name
        .clone()
        .unwrap_or_else(|| place.kind.replace('_', " "))
}

/// Puts every detour of `before` on the day of `after` that now rides its spur, measuring
/// that day again with it; answers what moved or could not be kept. Run once the days of
/// `after` are numbered.
pub(super) fn carry_detours(
    before: &[Stage],
    after: &mut [Stage],
    route: &dyn RouteGeometry,
) -> Vec<SideEffect> {
    for stage in after.iter_mut() {
        stage.detour = None;
    }
    let mut taken = vec![false; after.len()];
    let mut effects = Vec::new();
    for old in before {
        let Some(detour) = &old.detour else {
            continue;
        };
        let untouched = after.iter().position(|s| {
            s.id == old.id && s.first_point == old.first_point && s.last_point == old.last_point
        });
        let target = untouched.or_else(|| {
            after.iter().position(|s| {
                !s.is_rest_day && detour.fits(s.first_point, s.last_point) == Some(true)
            })
        });
        let Some(i) = target else {
            let reason = if detour.fits(0, usize::MAX).is_none() {
                "its day changed, and it was made before detours could follow their day: add it again"
            } else {
                "a day now ends between where it leaves the route and where it comes back"
            };
            effects.push(SideEffect::DetourRemoved {
                day: old.day_number,
                reason: reason.into(),
            });
            continue;
        };
        if taken[i] {
            effects.push(SideEffect::DetourRemoved {
                day: old.day_number,
                reason: format!(
                    "its point now lies on day {}, which rides another detour",
                    after[i].day_number
                ),
            });
            continue;
        }
        taken[i] = true;
        let day = &mut after[i];
        if untouched == Some(i) {
            day.detour = Some(detour.clone());
            day.distance_km = old.distance_km;
            day.ascent_m = old.ascent_m;
            day.descent_m = old.descent_m;
            continue;
        }
        ride_detour(day, detour, old, route);
        if day.id != old.id {
            effects.push(SideEffect::DetourMoved {
                from_day: old.day_number,
                to_day: day.day_number,
            });
        }
    }
    effects
}

/// `day` rides `detour` (which `old` rode): its own roads measured again, plus what the spur
/// adds, in distance and in climbing.
fn ride_detour(day: &mut Stage, detour: &Detour, old: &Stage, route: &dyn RouteGeometry) {
    let own = route.measure(day.first_point, day.last_point).rounded();
    let added_km = detour.added_m().unwrap_or(0.0) / 1000.0;
    // The spur's own climbing, as the day counted it with and without the detour.
    let plus = |own: Option<f64>, with: Option<f64>, without: Option<f64>| {
        Some((own? + (with? - without?)).max(0.0).round())
    };
    day.distance_km = ((own.distance_km + added_km) * 100.0).round() / 100.0;
    day.ascent_m = plus(own.ascent_m, old.ascent_m, detour.original_ascent_m);
    day.descent_m = plus(own.descent_m, old.descent_m, detour.original_descent_m);
    let mut carried = detour.clone();
    carried.original_distance_km = own.distance_km;
    carried.original_ascent_m = own.ascent_m;
    carried.original_descent_m = own.descent_m;
    day.detour = Some(carried);
}

/// The chosen nights of `before` that no day of `after` holds any more, beyond the one the
/// edit asked about. Nights Etappe chose that a re-flow moves are the re-flow's to report.
/// `asked` names the day whose night the edit was about (a choice replaces it, a clear
/// removes it), `said` one whose night the edit already reported (chosen again).
pub(super) fn nights_dropped(
    before: &[Stage],
    after: &[Stage],
    asked: Option<uuid::Uuid>,
    reflowed: bool,
    said: Option<uuid::Uuid>,
) -> Vec<SideEffect> {
    before
        .iter()
        .filter(|old| Some(old.id) != asked && Some(old.id) != said && !old.is_rest_day)
        .filter_map(|old| {
            let place = old.accommodation.as_ref()?;
            let chosen_by = place.chosen_by.unwrap_or_default();
            if reflowed && chosen_by == ChosenBy::Etappe {
                return None;
            }
            let kept = after.iter().any(|s| {
                s.accommodation
                    .as_ref()
                    .is_some_and(|a| a.lat == place.lat && a.lon == place.lon)
            });
            (!kept).then(|| SideEffect::NightRemoved {
                day: old.day_number,
                place: place_label(place),
                chosen_by,
            })
        })
        .collect()
}

/// With nights at accommodation, the day at `index` whose end was moved by hand, and whose
/// night Etappe had chosen (`was`): the bed of an enabled type nearest the new end, within
/// [`RECHOOSE_REACH_M`], becomes its night. Answers what was said; the day keeps the end
/// asked for.
pub(super) fn rechoose_night(
    stages: &mut [Stage],
    index: usize,
    was: &Accommodation,
    route: &dyn RouteGeometry,
    beds: &[BedOnRoute],
    settings: &TripSettings,
) -> SideEffect {
    let Some(day) = stages.get_mut(index) else {
        return SideEffect::NightRemoved {
            day: 0,
            place: place_label(was),
            chosen_by: ChosenBy::Etappe,
        };
    };
    let end_m = route.along_km(day.last_point) * 1000.0;
    let (_, enabled) = pacer_beds(beds, &settings.enabled_accommodation_types);
    let nearest = enabled
        .iter()
        .filter_map(|&i| beds.get(i))
        .map(|bed| ((bed.along_m - end_m).abs() + bed.off_route_m, bed))
        .filter(|(reach, _)| *reach <= RECHOOSE_REACH_M)
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((_, bed)) => {
            let mut place = bed.accommodation.clone();
            place.chosen_by = Some(ChosenBy::Etappe);
            place.distance_to_end_m =
                Some(super::straight_m(day.end, point_of(&bed.accommodation)).round());
            let said = SideEffect::NightRechosen {
                day: day.day_number,
                place: place_label(&place),
                same: place.lat == was.lat && place.lon == was.lon,
            };
            day.accommodation = Some(place);
            said
        }
        None => SideEffect::NightRemoved {
            day: day.day_number,
            place: place_label(was),
            chosen_by: ChosenBy::Etappe,
        },
    }
}

fn point_of(place: &Accommodation) -> super::Point {
    super::Point {
        lat: place.lat,
        lon: place.lon,
        ele: None,
    }
}
