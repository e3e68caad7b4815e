//! A day's points when it rides a detour. The detour job stores the day it re-routed with the
//! spur spliced in (the day up to where the spur leaves, the spur, the day from where it comes
//! back). A later edit may move the day's cuts while the spur still lies on it: the same spur
//! is then spliced into the day's slice of today, so the drawn line, the files and the
//! analysis ride what the day's figures count.

use etappe_domain::trip::stage::{Detour, Stage};
use etappe_route::gpx::TrackPoint;

/// The points `stage` rides: its slice of `track`, with its detour's spur (from `stored`, the
/// detour's blob) spliced in when it has one. A detour recorded before detours followed their
/// day is its blob as stored.
pub fn day_points(
    stage: &Stage,
    track: &[TrackPoint],
    stored: Option<&[TrackPoint]>,
) -> Vec<TrackPoint> {
    let own = || {
        let last = stage.last_point.min(track.len().saturating_sub(1));
        track
            .get(stage.first_point..=last)
            .map(<[TrackPoint]>::to_vec)
            .unwrap_or_default()
    };
    let (Some(detour), Some(stored)) = (&stage.detour, stored) else {
        return own();
    };
    match spur_of(detour, stored) {
        Some(spur) => {
            let Some(junction) = detour.junction else {
                return stored.to_vec();
            };
            let (first, last) = (stage.first_point, stage.last_point);
            if !(first <= junction.leave_point && junction.rejoin_point <= last)
                || last >= track.len()
            {
                return own();
            }
            let mut points = track[first..=junction.leave_point].to_vec();
            points.extend_from_slice(spur);
            points.extend_from_slice(&track[junction.rejoin_point..=last]);
            points
        }
        None => stored.to_vec(),
    }
}

/// The spur of `detour` as it sits in its stored day: between the day's points up to where
/// it leaves and the day's points from where it comes back; `None` when the detour does not
/// say which slice its blob was spliced into, or the blob does not fit it.
fn spur_of<'a>(detour: &Detour, stored: &'a [TrackPoint]) -> Option<&'a [TrackPoint]> {
    let junction = detour.junction?;
    let day = detour.spliced_day?;
    let head = junction.leave_point.checked_sub(day.first_point)? + 1;
    let tail = day.last_point.checked_sub(junction.rejoin_point)? + 1;
    stored.get(head..stored.len().checked_sub(tail)?)
}

#[cfg(test)]
mod tests {
    use etappe_domain::trip::stage::{DaySpan, Point, SpurJunction};
    use etappe_route::detour::splice;

    use super::*;

    fn at(i: usize) -> TrackPoint {
        TrackPoint {
            lat: 47.0 + i as f64 * 0.001,
            lon: 9.5,
            ele: Some(i as f64),
        }
    }

    fn spur() -> Vec<TrackPoint> {
        (0..5)
            .map(|k| TrackPoint {
                lat: 47.0 + (40 + k) as f64 * 0.001,
                lon: 9.51,
                ele: None,
            })
            .collect()
    }

    fn detoured(first: usize, last: usize) -> Stage {
        Stage {
            first_point: first,
            last_point: last,
            detour: Some(Detour {
                waypoint: Point::default(),
                track_key: "detour".into(),
                original_distance_km: 0.0,
                estimated: false,
                router: "valhalla".into(),
                original_ascent_m: None,
                original_descent_m: None,
                junction: Some(SpurJunction {
                    leave_point: 40,
                    rejoin_point: 43,
                    skipped_m: 0.0,
                    spur_m: 0.0,
                }),
                spliced_day: Some(DaySpan {
                    first_point: 33,
                    last_point: 66,
                }),
            }),
            ..Stage::default()
        }
    }

    #[test]
    fn a_detour_is_spliced_into_the_days_slice_of_today() {
        let track: Vec<TrackPoint> = (0..100).map(at).collect();
        // The blob as the detour job stored it for the day at 33..=66.
        let stored = splice(&track[33..=66], 40 - 33, &spur(), 43 - 33);
        let same = day_points(&detoured(33, 66), &track, Some(&stored));
        assert_eq!(same, stored, "on its own slice, the blob as stored");
        // The day now runs 0..=45 (a bed moved the cut): the same spur, today's slice.
        let moved = day_points(&detoured(0, 45), &track, Some(&stored));
        let expected = splice(&track[0..=45], 40, &spur(), 43);
        assert_eq!(moved, expected);
        // A slice that no longer holds the spur rides its own roads.
        let own = day_points(&detoured(41, 66), &track, Some(&stored));
        assert_eq!(own, track[41..=66].to_vec());
    }

    #[test]
    fn a_detour_without_its_slice_is_its_blob() {
        let track: Vec<TrackPoint> = (0..100).map(at).collect();
        let mut stage = detoured(0, 45);
        if let Some(d) = stage.detour.as_mut() {
            d.spliced_day = None;
        }
        let blob = spur();
        assert_eq!(day_points(&stage, &track, Some(&blob)), blob);
        assert_eq!(day_points(&stage, &track, None), track[0..=45].to_vec());
    }
}
