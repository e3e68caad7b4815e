//! FIT courses checked by Garmin's official FIT SDK for Python (`garmin-fit-sdk`, pinned in
//! `tests/python/requirements.txt`), beside the `fitparser` tests: the files of several days
//! and versions of one trip, written as the server writes them, must decode with zero
//! errors, each carry its own `file_id`, have distinct course names, and never go back in
//! time. The checker is `tests/python/fit_check.py`; the interpreter is `ETAPPE_PYTHON`, else
//! the workspace's `tests/python/.venv/bin/python`. Without an interpreter that can import
//! the SDK the test skips, and fails under `ETAPPE_REQUIRE_SERVICES=1`.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::common::{synthetic_trip, trip_waypoints};
use etappe_export::{
    ExportWaypoint, FitIdentity, WaypointKind, course_point_name, day_course_name, fit_serial,
    trip_to_fit_with,
};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/python/fit_check.py"
);
const DEFAULT_PYTHON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/python/.venv/bin/python"
);
const INSTALL: &str = "python3 -m venv tests/python/.venv && tests/python/.venv/bin/pip install -r tests/python/requirements.txt";

/// The interpreter with the SDK, or `None` (skip, with the remedy printed); a failure under
/// `ETAPPE_REQUIRE_SERVICES=1`.
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("ETAPPE_PYTHON")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_PYTHON), PathBuf::from);
    let problem = match Command::new(&path)
        .args(["-c", "import garmin_fit_sdk"])
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => return Some(path),
        Ok(out) => format!(
            "{} cannot import garmin_fit_sdk ({})",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("no error printed")
        ),
        Err(e) => format!("cannot run {}: {e}", path.display()),
    };
    assert!(
        std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but {problem}. Install the SDK: {INSTALL} (or set ETAPPE_PYTHON)"
    );
    eprintln!("skipped: {problem}. Install the SDK from the workspace root: {INSTALL}");
    None
}

#[test]
fn garmin_sdk_reads_every_day_as_its_own_course() {
    let Some(python) = python() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("etappe-fit-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let days = synthetic_trip(3, 900);
    let places = [("Passau", "Linz"), ("Linz", "Grein"), ("Grein", "Melk")];
    let now = 1_796_083_200;
    let mut paths = Vec::new();
    // Every day of two versions of the trip, as the server exports them one day at a time.
    for version in [4u64, 5] {
        for (i, day) in days.iter().enumerate() {
            let n = i as u32 + 1;
            let (from, to) = places[i];
            let name = day_course_name(n, Some(from), Some(to));
            let last = day.points[day.points.len() - 1];
            let lodging = ExportWaypoint {
                name: course_point_name("Gasthof Post", &format!("N{n}")),
                lat: last.lat,
                lon: last.lon,
                kind: WaypointKind::Lodging,
            };
            let mut waypoints = trip_waypoints(std::slice::from_ref(day));
            waypoints.push(lodging);
            let identity = FitIdentity {
                serial_number: fit_serial("0190a5f2-trip", n, version),
                time_created_unix: now,
            };
            let bytes = trip_to_fit_with(&name, std::slice::from_ref(day), &waypoints, &identity)
                .expect("a course");
            let path = dir.join(format!("day{n}-v{version}.fit"));
            std::fs::write(&path, bytes).expect("write");
            paths.push(path);
        }
    }
    let check = |files: &[PathBuf], extra: &[&str]| {
        let out = Command::new(&python)
            .arg(SCRIPT)
            .args(extra)
            .args(files)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .output()
            .expect("the checker runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), stdout, stderr)
    };
    // One version's days: distinct names and identities. Both versions: identities still
    // unique, though a day keeps its name.
    let runs = [
        check(&paths[..3], &[]),
        check(&paths[3..], &[]),
        check(&paths, &["--allow-same-names"]),
    ];
    // The checker can fail: two days written with one fixed identity (what every export
    // carried before) are refused.
    let same: Vec<PathBuf> = days
        .iter()
        .take(2)
        .enumerate()
        .map(|(i, day)| {
            let bytes = trip_to_fit_with(
                &format!("Day {i}"),
                std::slice::from_ref(day),
                &[],
                &FitIdentity::default(),
            )
            .expect("a course");
            let path = dir.join(format!("same{i}.fit"));
            std::fs::write(&path, bytes).expect("write");
            path
        })
        .collect();
    let (same_ok, _, same_err) = check(&same, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        !same_ok && same_err.contains("file_ids are not unique"),
        "{same_err}"
    );
    for (ok, stdout, stderr) in &runs {
        assert!(ok, "Garmin's SDK refused our courses:\n{stdout}\n{stderr}");
        assert!(stdout.contains("\"errors\": 0"), "{stdout}");
        assert!(stdout.contains("Gasthof Post N1"), "{stdout}");
        assert!(stdout.contains("D1 Passau-Linz"), "{stdout}");
        assert!(stdout.trim_end().ends_with("OK"), "{stdout}");
    }
    assert_eq!(runs[2].1.lines().filter(|l| l.starts_with('{')).count(), 6);
}
