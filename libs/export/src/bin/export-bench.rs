//! Benchmark of the exporters on a realistic worst case: a 2,000 km trip of 20 days with
//! a point every 10 m (~200k points), the density a router produces before simplification.
//!
//! Run with `cargo run --release --bin export-bench`; std only, no benchmark framework, so
//! it measures wall time of whole calls (best and median of several runs).

use std::hint::black_box;
use std::time::{Duration, Instant};

use etappe_export::{ExportDay, ExportPoint, ExportWaypoint, WaypointKind, to_gpx, trip_to_fit};

const DAYS: usize = 20;
const KM_PER_DAY: f64 = 100.0;
const SPACING_M: f64 = 10.0;
const RUNS: usize = 7;
/// Metres per degree of latitude on the mean sphere.
const M_PER_DEG: f64 = 111_195.0;

/// A meandering route heading roughly south-east from Hamburg, each day starting at the
/// previous day's last point, with rolling elevation; plus a lodging at every day's end and
/// two generic waypoints per day.
fn make_trip() -> (Vec<ExportDay>, Vec<ExportWaypoint>) {
    let steps = (KM_PER_DAY * 1000.0 / SPACING_M) as usize;
    let (mut lat, mut lon) = (53.55_f64, 9.99_f64);
    let mut step = 0usize;
    let mut days = Vec::with_capacity(DAYS);
    let mut waypoints = Vec::new();
    for d in 0..DAYS {
        let mut points = Vec::with_capacity(steps + 1);
        let mut push = |lat: f64, lon: f64, step: usize| {
            let s = step as f64;
            points.push(ExportPoint {
                lat,
                lon,
                ele: Some(200.0 + 150.0 * (s / 2_000.0).sin() + 20.0 * (s / 170.0).sin()),
            });
        };
        push(lat, lon, step);
        for _ in 0..steps {
            step += 1;
            let s = step as f64;
            // Heading wanders around south-east (135°) on a few length scales.
            let heading =
                (135.0 + 40.0 * (s / 3_000.0).sin() + 25.0 * (s / 450.0).sin()).to_radians();
            lat += SPACING_M * heading.cos() / M_PER_DEG;
            lon += SPACING_M * heading.sin() / (M_PER_DEG * lat.to_radians().cos());
            push(lat, lon, step);
        }
        let mid = points[points.len() / 2];
        let quarter = points[points.len() / 4];
        for (i, p) in [quarter, mid].iter().enumerate() {
            waypoints.push(ExportWaypoint {
                name: format!("Sight {}.{}", d + 1, i + 1),
                lat: p.lat + 0.000_1,
                lon: p.lon,
                kind: WaypointKind::Generic,
            });
        }
        if d + 1 < DAYS {
            waypoints.push(ExportWaypoint {
                name: format!("Hotel night {}", d + 1),
                lat: lat - 0.000_2,
                lon,
                kind: WaypointKind::Lodging,
            });
        }
        days.push(ExportDay {
            name: format!("Day {}", d + 1),
            points,
            breaks: Vec::new(),
        });
    }
    (days, waypoints)
}

/// Best and median wall time of `RUNS` calls, and the last call's output size in bytes.
fn measure(mut f: impl FnMut() -> usize) -> (Duration, Duration, usize) {
    let mut times = Vec::with_capacity(RUNS);
    let mut size = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        size = black_box(f());
        times.push(t.elapsed());
    }
    times.sort();
    (times[0], times[RUNS / 2], size)
}

fn main() -> Result<(), etappe_export::ExportError> {
    let t = Instant::now();
    let (days, waypoints) = make_trip();
    let gen_time = t.elapsed();
    let n_points: usize = days.iter().map(|d| d.points.len()).sum();
    println!(
        "trip: {DAYS} days, {n_points} points ({} after dropping shared day boundaries), \
         {} waypoints, generated in {:.1} ms",
        n_points - (DAYS - 1),
        waypoints.len(),
        gen_time.as_secs_f64() * 1e3
    );

    // One checked run first, so an error is reported instead of timed.
    trip_to_fit("Hamburg-Alpen", &days, &waypoints)?;

    let (best, median, size) =
        measure(|| to_gpx("Hamburg - Alpen", black_box(&days), &waypoints).len());
    report("to_gpx", best, median, size, n_points);

    let (best, median, size) = measure(|| {
        trip_to_fit("Hamburg-Alpen", black_box(&days), &waypoints).map_or(0, |b| b.len())
    });
    report("trip_to_fit", best, median, size, n_points);
    Ok(())
}

fn report(label: &str, best: Duration, median: Duration, size: usize, points: usize) {
    println!(
        "{label:<12} best {:>7.1} ms  median {:>7.1} ms  size {:>11} bytes ({:.1} MiB, {:.1} B/point)",
        best.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3,
        size,
        size as f64 / (1024.0 * 1024.0),
        size as f64 / points as f64
    );
}
