//! Shared fixtures for the integration tests: a synthetic multi-day trip and the path
//! length it should have.

use etappe_export::{ExportDay, ExportPoint, ExportWaypoint, WaypointKind};

/// Etappe's one haversine (tested on its own in `etappe-geo`): these tests check how the
/// exporter accumulates and encodes distances, not the formula.
pub(crate) fn haversine(a: &ExportPoint, b: &ExportPoint) -> f64 {
    etappe_geo::haversine_m(a.lat, a.lon, b.lat, b.lon)
}

pub(crate) fn path_length(points: &[ExportPoint]) -> f64 {
    points.windows(2).map(|w| haversine(&w[0], &w[1])).sum()
}

/// A wiggly eastward trip from Lake Constance: `days` days of `per_day` points each,
/// ~25 m apart, every day starting at the previous day's last point (as the planner does).
pub(crate) fn synthetic_trip(days: usize, per_day: usize) -> Vec<ExportDay> {
    let mut out = Vec::new();
    let mut i = 0usize;
    for d in 0..days {
        let mut points = Vec::with_capacity(per_day);
        // Step back one index so the first point repeats the previous day's last one.
        if d > 0 && i > 0 {
            i -= 1;
        }
        for _ in 0..per_day {
            let t = i as f64;
            points.push(ExportPoint {
                lat: 47.55 + 0.01 * (t / 150.0).sin() + 0.000_05 * t * 0.3,
                lon: 9.70 + 0.000_3 * t,
                ele: if i % 97 == 13 {
                    None
                } else {
                    Some(400.0 + 150.0 * (t / 400.0).sin())
                },
            });
            i += 1;
        }
        out.push(ExportDay {
            name: format!("Tag {}: Etappe {}", d + 1, d + 1),
            points,
            breaks: Vec::new(),
        });
    }
    out
}

/// The trip's points with the shared day boundaries dropped, as `trip_to_fit` should do.
pub(crate) fn flatten(days: &[ExportDay]) -> Vec<ExportPoint> {
    let mut out: Vec<ExportPoint> = Vec::new();
    for day in days {
        let skip = usize::from(out.last().is_some_and(|l| day.points.first() == Some(l)));
        out.extend(&day.points[skip..]);
    }
    out
}

/// A lodging at the end of every day but the last (slightly off the route, as a hotel
/// is), plus a generic café in the middle of day 1.
pub(crate) fn trip_waypoints(days: &[ExportDay]) -> Vec<ExportWaypoint> {
    let mut out = Vec::new();
    let first = &days[0].points;
    let mid = first[first.len() / 2];
    out.push(ExportWaypoint {
        name: "Café am See".into(),
        lat: mid.lat + 0.000_2,
        lon: mid.lon,
        kind: WaypointKind::Food,
    });
    for (d, day) in days.iter().enumerate().take(days.len().saturating_sub(1)) {
        let end = day.points[day.points.len() - 1];
        out.push(ExportWaypoint {
            name: format!("Hotel Nacht {}", d + 1),
            lat: end.lat - 0.000_3,
            lon: end.lon + 0.000_1,
            kind: WaypointKind::Lodging,
        });
    }
    // Given out of route order on purpose: the exporter must sort course points.
    out.reverse();
    out
}
