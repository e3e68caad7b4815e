//! Benchmark of the whole import pipeline (parse → distances → climbing →
//! pacing) on generated GPX files, std only, so its figures can
//! be reproduced with one command and compared with other parsers on the
//! very same bytes (`--out DIR` writes the files).
//!
//! Usage: `cargo run --release --bin route-bench -- [--runs N] [--out DIR]`

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use etappe_route::geometry::{cumulative_distances, elevation_gain_loss};
use etappe_route::pacing::{PacingSettings, pace};
use etappe_route::synthetic::{Profile, synthetic_route, to_gpx};
use etappe_route::{TrackPoint, parse_gpx};

struct Args {
    runs: usize,
    out: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { runs: 7, out: None };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                let v = it.next().ok_or("--runs needs a value")?;
                args.runs = v.parse().map_err(|_| format!("bad --runs {v}"))?;
            }
            "--out" => args.out = Some(it.next().ok_or("--out needs a value")?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    args.runs = args.runs.max(1);
    Ok(args)
}

/// A Garmin-style recording: every point carries a timestamp and sensor
/// extensions, which is what makes real device files large. The parser
/// must skip all of it.
fn device_style_gpx(points: &[TrackPoint], name: &str) -> String {
    let mut out = String::with_capacity(points.len() * 320);
    out.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"route-bench\" \
         xmlns=\"http://www.topografix.com/GPX/1/1\" \
         xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v1\" \
         xmlns:gpxx=\"http://www.garmin.com/xmlschemas/GpxExtensions/v3\">\n",
    );
    let _ = writeln!(
        out,
        " <metadata><name>{name}</name><time>2025-06-01T06:00:00Z</time></metadata>"
    );
    let _ = writeln!(out, " <trk><name>{name}</name><type>cycling</type><trkseg>");
    for (i, p) in points.iter().enumerate() {
        let secs = 6 * 3600 + i * 2;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let day = 1 + secs / 86_400;
        let _ = write!(
            out,
            "   <trkpt lat=\"{:.7}\" lon=\"{:.7}\">\n    <ele>{:.1}</ele>\n    \
             <time>2025-06-{day:02}T{h:02}:{m:02}:{s:02}Z</time>\n    <extensions>\n     \
             <gpxtpx:TrackPointExtension>\n      <gpxtpx:atemp>21.0</gpxtpx:atemp>\n      \
             <gpxtpx:hr>{}</gpxtpx:hr>\n      <gpxtpx:cad>{}</gpxtpx:cad>\n     \
             </gpxtpx:TrackPointExtension>\n    </extensions>\n   </trkpt>\n",
            p.lat,
            p.lon,
            p.ele.unwrap_or_default(),
            110 + i % 50,
            70 + i % 25,
        );
    }
    out.push_str(" </trkseg></trk>\n</gpx>\n");
    out
}

#[derive(Default)]
struct Timings {
    parse: Vec<Duration>,
    distances: Vec<Duration>,
    elevation: Vec<Duration>,
    pace: Vec<Duration>,
    total: Vec<Duration>,
}

fn best_median(v: &[Duration]) -> (Duration, Duration) {
    let mut s = v.to_vec();
    s.sort();
    let best = s.first().copied().unwrap_or_default();
    let median = s.get(s.len() / 2).copied().unwrap_or_default();
    (best, median)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn bench(label: &str, bytes: &[u8], runs: usize, settings: &PacingSettings) -> Result<(), String> {
    let mut t = Timings::default();
    let mut points_count = 0;
    let mut summary = String::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let parsed = parse_gpx(black_box(bytes)).map_err(|e| format!("{label}: {e}"))?;
        let t1 = Instant::now();
        let points: Vec<TrackPoint> = parsed.tracks.into_iter().flatten().collect();
        let cum = cumulative_distances(black_box(&points));
        let t2 = Instant::now();
        let (gain, loss) = elevation_gain_loss(black_box(&points));
        let t3 = Instant::now();
        let days = pace(black_box(&points), settings);
        let t4 = Instant::now();
        t.parse.push(t1 - t0);
        t.distances.push(t2 - t1);
        t.elevation.push(t3 - t2);
        t.pace.push(t4 - t3);
        t.total.push(t4 - t0);
        points_count = points.len();
        summary = format!(
            "{:.1} km, D+ {gain:.0} m, D- {loss:.0} m, {} days",
            cum.last().copied().unwrap_or_default() / 1000.0,
            days.len()
        );
        black_box(days);
    }
    let mb = bytes.len() as f64 / 1e6;
    println!("== {label}: {mb:.1} MB, {points_count} points, {runs} runs ({summary})");
    for (stage, v) in [
        ("parse_gpx", &t.parse),
        ("cumulative_distances", &t.distances),
        ("elevation_gain_loss", &t.elevation),
        ("pace", &t.pace),
        ("total pipeline", &t.total),
    ] {
        let (best, median) = best_median(v);
        println!(
            "  {stage:<22} best {:>8.2} ms  median {:>8.2} ms  | {:>7.1} MB/s  {:>6.2} M points/s (best)",
            ms(best),
            ms(median),
            mb / best.as_secs_f64(),
            points_count as f64 / best.as_secs_f64() / 1e6,
        );
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("route-bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let t = Instant::now();
    let points = synthetic_route(
        1_000.0,
        10.0,
        Profile::Climbs {
            height_m: 400.0,
            period_km: 50.0,
        },
    );
    let plain = to_gpx(&points, "Bench 1000 km");
    let device = device_style_gpx(&points, "Bench 1000 km device");
    println!(
        "generated {} points, plain {:.1} MB, device-style {:.1} MB in {:.0} ms",
        points.len(),
        plain.len() as f64 / 1e6,
        device.len() as f64 / 1e6,
        ms(t.elapsed())
    );
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (file, body) in [
            ("route_1000km.gpx", &plain),
            ("route_device_30mb.gpx", &device),
        ] {
            let path = dir.join(file);
            std::fs::write(&path, body).map_err(|e| format!("{}: {e}", path.display()))?;
            println!("wrote {}", path.display());
        }
    }
    let settings = PacingSettings {
        max_distance_per_day_km: 100.0,
        fatigue_factor: 0.95,
        elevation_penalty: 25.0,
        days: None,
    };
    bench(
        "plain GPX, 1,000 km @ 10 m",
        plain.as_bytes(),
        args.runs,
        &settings,
    )?;
    bench(
        "device-style GPX, 1,000 km @ 10 m",
        device.as_bytes(),
        args.runs,
        &settings,
    )?;
    Ok(())
}
