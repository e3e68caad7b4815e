//! Which place a chosen point names: a rider or an agent chooses a day's bed by its
//! coordinates, read off a list (the day's scan, or the beds along the route that nights at
//! accommodation use). The nearest place within a short reach is the one meant: two places a
//! few metres apart (a hostel mapped as a point and as a building) are both candidates.

use super::straight_m;
use crate::trip::stage::{Accommodation, Point};

/// How close (metres) a chosen point must be to a candidate's coordinates.
pub const CANDIDATE_MATCH_M: f64 = 50.0;

/// The candidate nearest `target` within [`CANDIDATE_MATCH_M`], if one is.
pub fn candidate_at<'a>(
    candidates: impl IntoIterator<Item = &'a Accommodation>,
    target: Point,
) -> Option<&'a Accommodation> {
    let away = |c: &Accommodation| {
        straight_m(
            Point {
                lat: c.lat,
                lon: c.lon,
                ele: None,
            },
            target,
        )
    };
    candidates
        .into_iter()
        .map(|c| (away(c), c))
        .filter(|(m, _)| *m <= CANDIDATE_MATCH_M)
        .min_by(|(a, _), (b, _)| a.total_cmp(b))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bed(name: &str, lat: f64, lon: f64) -> Accommodation {
        Accommodation {
            name: Some(name.into()),
            kind: "hostel".into(),
            lat,
            lon,
            distance_to_end_m: None,
            price_min_eur: None,
            price_max_eur: None,
            exact_price: false,
            url: None,
            phone: None,
            address: None,
            source: "osm".into(),
            chosen_by: None,
        }
    }

    fn at(lat: f64, lon: f64) -> Point {
        Point {
            lat,
            lon,
            ele: None,
        }
    }

    #[test]
    fn the_nearest_within_reach_is_meant() {
        // 0.0001° of latitude is about 11 m.
        let beds = [
            bed("Hostel (building)", 47.0003, 9.0),
            bed("Hostel (point)", 47.0001, 9.0),
            bed("Camping", 47.01, 9.0),
        ];
        let chosen = candidate_at(&beds, at(47.0, 9.0)).and_then(|b| b.name.as_deref());
        assert_eq!(chosen, Some("Hostel (point)"));
        assert_eq!(
            candidate_at(&beds, at(47.0102, 9.0)).and_then(|b| b.name.as_deref()),
            Some("Camping")
        );
    }

    #[test]
    fn nothing_beyond_the_reach_is_taken() {
        // About 56 m north of the only bed.
        let beds = [bed("Hut", 47.0, 9.0)];
        assert!(candidate_at(&beds, at(47.0005, 9.0)).is_none());
        assert!(candidate_at(&[], at(47.0, 9.0)).is_none());
    }
}
