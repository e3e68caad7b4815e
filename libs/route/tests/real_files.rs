//! The parser, geometry and pacing on real GPX files (from gpxpy's test suite, Apache-2.0;
//! see `tests/data/ATTRIBUTION.md`).

use etappe_route::geometry::{cumulative_distances, day_climb, elevation_gain_loss};
use etappe_route::pacing::{PacingSettings, pace};
use etappe_route::parse_gpx;
use etappe_route::pieces::join_pieces;

fn load(name: &str) -> etappe_route::ParsedRoute {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).expect("fixture");
    parse_gpx(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_real_track_with_elevation_measures_as_published() {
    let route = load("korita-zbevnica.gpx");
    let points: Vec<_> = route.tracks.iter().flatten().copied().collect();
    assert_eq!(points.len(), 871, "gpxpy counts 871 points");
    let km = cumulative_distances(&points).last().copied().unwrap_or(0.0) / 1000.0;
    assert!((27.0..28.2).contains(&km), "about 27.6 km: {km}");
    let (ascent, descent) = elevation_gain_loss(&points);
    assert!(
        ascent > 100.0 && ascent < 2000.0,
        "plausible climbing, not raw noise: {ascent}"
    );
    assert!(descent > 100.0, "{descent}");
    let days = pace(
        &points,
        &PacingSettings {
            max_distance_per_day_km: 80.0,
            fatigue_factor: 0.9,
            elevation_penalty: 50.0,
            days: None,
        },
    );
    assert_eq!(days.len(), 1, "27 km is one day");
    let forced = pace(
        &points,
        &PacingSettings {
            max_distance_per_day_km: 80.0,
            fatigue_factor: 1.0,
            elevation_penalty: 50.0,
            days: Some(2),
        },
    );
    // A day is at least 30 km: two dated days on a 27 km route still make one day of riding.
    assert_eq!(forced.len(), 1);
    assert_eq!(
        (forced[0].start_index, forced[0].end_index),
        (0, points.len() - 1)
    );
}

#[test]
fn a_track_without_elevation_has_distance_and_no_climbing() {
    let route = load("cerknicko-jezero-without-elevations.gpx");
    let points: Vec<_> = route.tracks.iter().flatten().copied().collect();
    assert!(points.iter().all(|p| p.ele.is_none()));
    let km = cumulative_distances(&points).last().copied().unwrap_or(0.0) / 1000.0;
    assert!(km > 10.0, "{km}");
    assert_eq!(elevation_gain_loss(&points), (0.0, 0.0));
}

#[test]
fn a_bom_with_waypoints_only_is_read_as_gpx_and_found_empty() {
    let path = format!(
        "{}/tests/data/unicode_with_bom.gpx",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).expect("fixture");
    // Waypoints are not a route: the file is GPX (the BOM is fine), with no track to ride.
    assert_eq!(parse_gpx(&bytes), Err(etappe_route::RouteError::Empty));
}

#[test]
fn gpx_1_0_with_every_field_is_read_as_its_route() {
    // The file has a one-point track and routes of five points: the routes are what can be
    // ridden (they were refused before, as a one-point route).
    let old = load("gpx1.0_with_all_fields.gpx");
    let points: usize = old.tracks.iter().map(Vec::len).sum();
    assert_eq!(points, 5, "{:?}", old.tracks);
    let joined = join_pieces(&old).expect("the route has a length");
    assert!(joined.distance_m() > 0.0);
    assert!(!old.waypoints.is_empty(), "its waypoints are kept");
}

#[test]
fn disjoint_tracks_count_only_what_was_recorded() {
    // korita-zbevnica: 4 tracks, 27.6 km when joined by straight lines, 14.9 km within them.
    let route = load("korita-zbevnica.gpx");
    let joined = join_pieces(&route).expect("a route");
    let km = joined.distance_m() / 1000.0;
    assert!(
        (14.5..15.3).contains(&km),
        "about 14.9 km within the tracks: {km}"
    );
    let breaks = joined.breaks();
    assert!(!breaks.is_empty(), "{:?}", joined.gaps);
    let (joined_climb, _) = day_climb(&joined.points, &breaks);
    let (bridged_climb, _) = elevation_gain_loss(&joined.points);
    eprintln!(
        "korita-zbevnica: {km:.2} km and {joined_climb:.0} m ridden, {} gaps ({} breaks); bridged: {bridged_climb:.0} m",
        joined.gaps.len(),
        breaks.len()
    );
    assert!(
        joined_climb <= bridged_climb,
        "{joined_climb} vs {bridged_climb}"
    );

    let cerknicko = load("cerknicko-jezero-without-elevations.gpx");
    let all: Vec<_> = cerknicko.tracks.iter().flatten().copied().collect();
    let bridged_km = cumulative_distances(&all).last().copied().unwrap_or(0.0) / 1000.0;
    let joined = join_pieces(&cerknicko).expect("a route");
    eprintln!(
        "cerknicko: {:.2} km ridden, {bridged_km:.2} km bridged, {} gaps",
        joined.distance_m() / 1000.0,
        joined.gaps.len()
    );
    assert!(
        joined.distance_m() / 1000.0 < bridged_km / 2.0,
        "{} km vs {bridged_km} km bridged",
        joined.distance_m() / 1000.0
    );
}
