//! Given days with a detour or a chosen night, when a cut moves, then what the edit kept, what
//! it moved, and what it said it removed.

use super::*;
use crate::trip::stage::{DaySpan, Detour, SpurJunction};

/// A detour of the day at `first..=last` leaving the route at `leave`, back at `rejoin`: a
/// 3 km spur over 2 km of the day's own roads (+1 km), climbing 50 m more than they do.
fn detour(first: usize, last: usize, leave: usize, rejoin: usize) -> Detour {
    Detour {
        waypoint: Point {
            lat: 45.0,
            lon: 6.01,
            ele: None,
        },
        track_key: "detour:day".into(),
        original_distance_km: (last - first) as f64,
        estimated: false,
        router: "valhalla".into(),
        original_ascent_m: Some(10.0 * (last - first) as f64),
        original_descent_m: Some(0.0),
        junction: Some(SpurJunction {
            leave_point: leave,
            rejoin_point: rejoin,
            skipped_m: 2000.0,
            spur_m: 3000.0,
        }),
        spliced_day: Some(DaySpan {
            first_point: first,
            last_point: last,
        }),
    }
}

/// The three-day trip with day `n` (1-based) riding a detour at km `leave`–`leave + 2`.
fn with_detour(mut trip: Trip, n: usize, leave: usize) -> Trip {
    let day = &mut trip.stages[n - 1];
    day.detour = Some(detour(day.first_point, day.last_point, leave, leave + 2));
    day.distance_km += 1.0;
    day.ascent_m = day.ascent_m.map(|a| a + 50.0);
    trip
}

fn effects_of(events: &[TripEvent]) -> Vec<SideEffect> {
    match events.first() {
        Some(TripEvent::StagesEdited { effects, .. }) => effects.clone(),
        other => panic!("a day edit first: {other:?}"),
    }
}

fn bed(km: usize) -> Accommodation {
    super::bed_at(km, &format!("Hotel km {km}")).accommodation
}

fn choose(stage: u128, km: usize) -> StageEdit {
    StageEdit::ChooseAccommodation {
        stage_id: id(stage),
        accommodation: bed(km),
    }
}

fn end_at(stage: u128, km: f64) -> StageEdit {
    StageEdit::Update {
        stage_id: id(stage),
        end: Some(Boundary::AtKm(km)),
        label: LabelChange::Keep,
    }
}

#[test]
fn a_detour_moves_with_its_point_when_a_bed_moves_the_cut_past_it() {
    // Day 2 (km 33–66) rides a detour at km 40–42; the rider sleeps at km 45 after day 1.
    let trip = with_detour(trip(), 2, 40);
    let (after, events) = days_after(&trip, choose(1, 45));
    assert_eq!(spans(&after)[..2], [(1, 0, 45, false), (2, 45, 66, false)]);
    let day1 = &after.stages[0];
    let carried = day1.detour.as_ref().expect("day 1 now rides the detour");
    assert_eq!(
        day1.distance_km, 46.0,
        "45 km of own roads + 1 km the spur adds"
    );
    assert_eq!(
        day1.ascent_m,
        Some(500.0),
        "450 m of own roads + the spur's 50 m"
    );
    assert_eq!(carried.original_distance_km, 45.0);
    assert_eq!(
        carried.junction,
        trip.stages[1]
            .detour
            .as_ref()
            .expect("day 2's detour")
            .junction
    );
    assert!(after.stages[1].detour.is_none());
    assert_eq!(after.stages[1].distance_km, 21.0);
    assert_eq!(
        effects_of(&events),
        [SideEffect::DetourMoved {
            from_day: 2,
            to_day: 1
        }]
    );
    assert!(
        !effects_of(&events)[0].loses_persons_work(),
        "nothing is lost: no question"
    );
    let total: f64 = after.stages.iter().map(|s| s.distance_km).sum();
    assert_eq!(total, 100.0, "the trip keeps the detour's kilometre");
}

#[test]
fn a_detour_stays_on_its_day_when_the_cut_moves_elsewhere() {
    // Day 1 shortened to km 30: day 2 now starts earlier and still rides its detour.
    let trip = with_detour(trip(), 2, 40);
    let (after, events) = days_after(&trip, choose(1, 30));
    let day2 = &after.stages[1];
    assert!(day2.detour.is_some());
    assert_eq!(day2.distance_km, 37.0, "36 km of own roads + 1");
    assert_eq!(effects_of(&events), []);
    // A day that is not touched keeps its figures exactly.
    let third = with_detour(super::trip(), 3, 70);
    let (after, _) = days_after(&third, choose(1, 30));
    assert_eq!(after.stages[2], third.stages[2]);
}

#[test]
fn a_cut_inside_a_detour_removes_it_says_so_and_counts_as_a_persons_loss() {
    let trip = with_detour(trip(), 2, 40);
    let (after, events) = days_after(&trip, end_at(1, 41.0));
    assert!(after.stages.iter().all(|s| s.detour.is_none()));
    let effects = effects_of(&events);
    assert!(
        matches!(&effects[..], [SideEffect::DetourRemoved { day: 2, .. }]),
        "{effects:?}"
    );
    assert!(effects[0].loses_persons_work());
    assert!(
        effects[0]
            .sentence()
            .starts_with("The detour of day 2 is removed")
    );
    assert_eq!(after.stages[1].distance_km, 25.0, "own roads only");
}

#[test]
fn splitting_and_merging_keep_a_detour_on_the_day_that_holds_it() {
    let detoured = with_detour(trip(), 2, 40);
    // Split day 2 at km 20 of it (km 53): the first half holds km 40–42.
    let (split, events) = days_after(
        &detoured,
        StageEdit::Add {
            stage_id: id(2),
            new_stage_id: id(9),
            split: Some(Boundary::AtKm(20.0)),
            label: LabelChange::Keep,
        },
    );
    assert!(split.stages[1].detour.is_some());
    assert_eq!(split.stages[1].distance_km, 21.0);
    assert_eq!(effects_of(&events), []);
    // Merge day 2 into day 1: the longer day 1 rides it, and says it moved.
    let (merged, events) = days_after(&detoured, StageEdit::Delete { stage_id: id(2) });
    assert!(merged.stages[0].detour.is_some());
    assert_eq!(merged.stages[0].distance_km, 67.0);
    assert_eq!(
        effects_of(&events),
        [SideEffect::DetourMoved {
            from_day: 2,
            to_day: 1
        }]
    );
    // Both days detoured: the merged day keeps its own, the other's is removed and named.
    let both = with_detour(with_detour(trip(), 1, 10), 2, 40);
    let (merged, events) = days_after(&both, StageEdit::Delete { stage_id: id(2) });
    assert_eq!(
        merged.stages[0]
            .detour
            .as_ref()
            .map(|d| d.junction.expect("a junction").leave_point),
        Some(10)
    );
    let effects = effects_of(&events);
    assert!(
        matches!(&effects[..], [SideEffect::DetourRemoved { day: 2, reason }] if reason.contains("day 1")),
        "{effects:?}"
    );
}

#[test]
fn a_detour_recorded_before_detours_followed_their_day_is_kept_only_on_its_own_slice() {
    let mut trip = with_detour(trip(), 2, 40);
    if let Some(d) = trip.stages[1].detour.as_mut() {
        d.spliced_day = None;
    }
    let (after, events) = days_after(&trip, choose(2, 80));
    assert!(after.stages.iter().all(|s| s.detour.is_none()));
    assert!(matches!(
        &effects_of(&events)[..],
        [SideEffect::DetourRemoved { day: 2, reason }] if reason.contains("add it again")
    ));
}

#[test]
fn moving_a_days_end_names_the_night_the_rider_chose_there() {
    let mut trip = trip();
    let mut hotel = bed(33);
    hotel.chosen_by = Some(ChosenBy::Rider);
    trip.stages[0].accommodation = Some(hotel);
    let (after, events) = days_after(&trip, end_at(1, 30.0));
    assert_eq!(after.stages[0].accommodation, None);
    let effects = effects_of(&events);
    assert_eq!(
        effects,
        [SideEffect::NightRemoved {
            day: 1,
            place: "Hotel km 33".into(),
            chosen_by: ChosenBy::Rider
        }]
    );
    assert!(effects[0].loses_persons_work());
    // Only relabelling, or an end that does not move, keeps the night.
    let (same, events) = days_after(&trip, end_at(1, 33.0));
    assert_eq!(same.stages[0].accommodation, trip.stages[0].accommodation);
    assert_eq!(effects_of(&events), []);
}

#[test]
fn with_nights_at_accommodation_a_moved_end_gets_the_bed_nearest_it() {
    let (trip, beds) = paced_at_beds(ChosenBy::Etappe);
    let moved = |km: f64| {
        let events = decide_stage_edit_over(
            Some(&trip),
            end_at(2, km),
            trip.version,
            today(),
            &Line(100),
            &beds,
        )
        .expect("accepted");
        let mut after = trip.clone();
        for event in &events {
            after = crate::trip::evolve(Some(after), event).expect("a trip");
        }
        (after, effects_of(&events))
    };
    // Day 2 (km 25–50) now ends at km 52: the camp site at km 53 is 1 km on.
    let (after, effects) = moved(27.0);
    assert_eq!(
        after.stages[1].last_point, 52,
        "the end stays where it was asked"
    );
    let night = after.stages[1]
        .accommodation
        .as_ref()
        .expect("a night again");
    assert_eq!(night.name.as_deref(), Some("Camping km 53"));
    assert_eq!(night.chosen_by, Some(ChosenBy::Etappe));
    assert_eq!(
        effects,
        [SideEffect::NightRechosen {
            day: 2,
            place: "Camping km 53".into(),
            same: false
        }]
    );
    // Ending at km 40, no bed within 2 km: the night is dropped, said, and nobody is asked
    // (Etappe chose it).
    let (after, effects) = moved(15.0);
    assert_eq!(after.stages[1].accommodation, None);
    assert!(matches!(
        &effects[..],
        [SideEffect::NightRemoved {
            day: 2,
            chosen_by: ChosenBy::Etappe,
            ..
        }]
    ));
    assert!(!effects[0].loses_persons_work());
}
