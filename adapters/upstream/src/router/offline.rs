//! Straight-line routing for when no routing service is configured or
//! reachable: good enough to place a detour on the map and estimate its
//! length, and always marked as an estimate.

use super::{RoutePoint, RoutedPath};

/// Spacing of interpolated points, so straight legs draw and sample like routed ones.
const POINT_SPACING_M: f64 = 100.0;
/// Upper bound on points per leg, so an absurd waypoint cannot allocate without limit.
const MAX_POINTS_PER_LEG: f64 = 5_000.0;

/// Builds an out-and-back spur from the track point nearest to `via`.
/// Returns that point's index and the spur, which starts and ends there.
/// An empty track has no point to branch from: the spur is just `via`.
pub fn spur_detour(track: &[RoutePoint], via: RoutePoint) -> (usize, RoutedPath) {
    let nearest = track
        .iter()
        .enumerate()
        .map(|(index, point)| (index, point.distance_m(&via)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let Some((index, _)) = nearest else {
        let path = RoutedPath {
            points: vec![via],
            distance_km: 0.0,
            estimated: true,
        };
        return (0, path);
    };
    let branch = track[index];
    (index, straight_path(&[branch, via, branch]))
}

/// Straight legs between consecutive waypoints, densified every ~100 m.
pub(crate) fn straight_path(waypoints: &[RoutePoint]) -> RoutedPath {
    let mut points: Vec<RoutePoint> = waypoints.first().copied().into_iter().collect();
    let mut distance_m = 0.0;
    for leg in waypoints.windows(2) {
        let (start, end) = (leg[0], leg[1]);
        let length_m = start.distance_m(&end);
        distance_m += length_m;
        // Linear interpolation in degrees is indistinguishable from the great
        // circle over detour-sized distances.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let steps = (length_m / POINT_SPACING_M)
            .ceil()
            .clamp(1.0, MAX_POINTS_PER_LEG) as usize;
        for step in 1..steps {
            #[allow(clippy::cast_precision_loss)]
            let t = step as f64 / steps as f64;
            points.push(RoutePoint {
                lat: start.lat + (end.lat - start.lat) * t,
                lon: start.lon + (end.lon - start.lon) * t,
                ele: match (start.ele, end.ele) {
                    (Some(a), Some(b)) => Some(a + (b - a) * t),
                    _ => None,
                },
            });
        }
        // The waypoint itself, not an interpolation of it: exact position
        // and its own elevation, so spurs end precisely on the track.
        points.push(end);
    }
    RoutedPath {
        points,
        distance_km: distance_m / 1000.0,
        estimated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_path_visits_every_waypoint_with_dense_points() {
        let a = RoutePoint::new(48.0, 7.8);
        let b = RoutePoint::new(48.01, 7.8);
        let c = RoutePoint::new(48.01, 7.81);
        let path = straight_path(&[a, b, c]);
        assert!(path.estimated);
        assert_eq!(path.points.first(), Some(&a));
        assert_eq!(path.points.last(), Some(&c));
        assert!(path.points.contains(&b));
        let expected_km = (a.distance_m(&b) + b.distance_m(&c)) / 1000.0;
        assert!((path.distance_km - expected_km).abs() < 1e-9);
        for pair in path.points.windows(2) {
            assert!(pair[0].distance_m(&pair[1]) <= 101.0);
        }
    }

    #[test]
    fn empty_track_gives_a_spur_of_just_the_waypoint() {
        let via = RoutePoint::new(1.0, 2.0);
        let (index, path) = spur_detour(&[], via);
        assert_eq!(index, 0);
        assert_eq!(path.points, [via]);
        assert_eq!(path.distance_km, 0.0);
    }
}
