//! The importer against hostile files (`tests/fixtures/osm/hostile/`, written by
//! `make_hostile.py`): each is refused with its reason and the byte of the bad block,
//! quickly and in little memory, and leaves the loaded dataset answering; a file with no
//! feature is refused unless `allow_empty`.
//!
//! Peak memory is measured in a child process, so the figure is one import's and no other
//! test's: this test binary re-executed to run only [`child_import`], with
//! `ETAPPE_OSM_IMPORT_CHILD` naming the file. The child imports it into a fresh SQLite
//! database and prints the outcome and its own peak resident set (`VmHWM` of
//! `/proc/self/status`) before it exits.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use etappe_osm_index::{ImportOptions, IndexDb, IndexError, LocalIndex, import, import_with};

const CHILD_ENV: &str = "ETAPPE_OSM_IMPORT_CHILD";
const OUTCOME: &str = "child outcome: ";
const PEAK: &str = "child peak KiB: ";
const ELAPSED: &str = "child import ms: ";
/// The bound the importer's peak must stay under, whatever the file holds.
const PEAK_LIMIT_KIB: u64 = 128 * 1024;
/// A debug build's refusal, child start-up and database creation included, is well
/// under a second; this leaves a loaded CI machine room.
const QUICK: Duration = Duration::from_secs(10);

/// Each hostile file and how its refusal ends, after "<file>: the block at byte N ".
const REFUSED: &[(&str, &str)] = &[
    (
        "zlib-bomb.osm.pbf",
        "claims 34,603,010 bytes uncompressed; the PBF format allows less than 33,554,432 (32 MiB)",
    ),
    (
        "groups-bomb-under-limit.osm.pbf",
        "would need more than 64 MiB of memory to decode its 33,553,408 bytes (real blocks need a few MiB)",
    ),
    (
        "claims-1gib.osm.pbf",
        "claims 1,073,741,824 bytes uncompressed; the PBF format allows less than 33,554,432 (32 MiB)",
    ),
    (
        "past-raw-size.osm.pbf",
        "decompresses past its declared raw_size of 1,000 bytes",
    ),
    (
        "short-of-raw-size.osm.pbf",
        "decompresses to 52 bytes, not the 1,052 its raw_size declares",
    ),
    (
        "no-raw-size.osm.pbf",
        "declares no raw_size for its zlib data",
    ),
    (
        "no-raw-size-x40.osm.pbf",
        "declares no raw_size for its zlib data",
    ),
    (
        "past-raw-size-x40.osm.pbf",
        "decompresses past its declared raw_size of 1,000 bytes",
    ),
    (
        "lzma.osm.pbf",
        "is compressed with lzma (lzma_data), which Etappe does not read; only zlib and uncompressed blocks are (re-encode it: `osmium cat in.osm.pbf -o out.osm.pbf`)",
    ),
    (
        "zstd.osm.pbf",
        "is compressed with zstd (zstd_data), which Etappe does not read",
    ),
    (
        "header-over-64k.osm.pbf",
        "has a header of 100,000 bytes; the PBF format allows 1 to 65,535",
    ),
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/osm")
        .join(name)
}

fn hostile(name: &str) -> PathBuf {
    fixture("hostile").join(name)
}

/// Where the second block starts: the bad one, after the valid header block.
fn second_block(path: &Path) -> u64 {
    let bytes = std::fs::read(path).expect("fixture");
    let header_len = u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
    let header = &bytes[4..4 + header_len];
    // The header block's BlobHeader: type (field 1), then datasize (field 3, a varint).
    let at = header.iter().position(|b| *b == 0x18).expect("datasize");
    let mut datasize = 0_u64;
    for (i, b) in header[at + 1..].iter().enumerate() {
        datasize |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            break;
        }
    }
    4 + header_len as u64 + datasize
}

async fn sqlite(dir: &Path) -> IndexDb {
    let store = etappe_events::SqliteStore::open(&dir.join("etappe.db"))
        .await
        .expect("sqlite store");
    IndexDb::Sqlite(store.pool().clone())
}

/// Not a test of its own: the child mode of [`hostile_files_are_refused_quickly_in_little_memory`].
/// Without `ETAPPE_OSM_IMPORT_CHILD` it does nothing.
#[tokio::test]
async fn child_import() {
    let Ok(file) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sqlite(dir.path()).await;
    let started = Instant::now();
    let outcome = match import(&db, Path::new(&file), &mut |_| {}).await {
        Ok(report) => format!("ok: {} points, {} ways", report.points, report.ways),
        Err(error) => format!("error: {error}"),
    };
    let elapsed = started.elapsed();
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let peak = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .expect("a VmHWM line")
        .trim();
    println!("{OUTCOME}{outcome}");
    println!("{PEAK}{peak}");
    println!("{ELAPSED}{}", elapsed.as_millis());
}

#[derive(Debug)]
struct Child {
    outcome: String,
    peak_kib: u64,
    elapsed: Duration,
}

fn import_in_child(path: &Path) -> Child {
    // The harness names a test by its path below the crate root: `hostile::child_import`.
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_crate_root, module)| module);
    let output = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            format!("{module}::child_import").as_str(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, path)
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = |prefix: &str| -> String {
        stdout
            .lines()
            // The harness may print "test child_import ... " before the first line.
            .find_map(|l| l.split_once(prefix).map(|(_, rest)| rest))
            .unwrap_or_else(|| panic!("no {prefix:?} in the child's output: {stdout}"))
            .to_owned()
    };
    Child {
        outcome: line(OUTCOME),
        peak_kib: line(PEAK).parse().expect("KiB"),
        elapsed: Duration::from_millis(line(ELAPSED).parse().expect("ms")),
    }
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads /proc/self/status")]
fn hostile_files_are_refused_quickly_in_little_memory() {
    for (name, reason) in REFUSED {
        let path = hostile(name);
        let child = import_in_child(&path);
        let expected = format!("{name}: the block at byte {} {reason}", second_block(&path));
        assert!(
            child.outcome.starts_with("error: ") && child.outcome.contains(&expected),
            "{name}: {}\nexpected: {expected}",
            child.outcome
        );
        println!(
            "{name}: refused in {} ms, peak {:.1} MiB",
            child.elapsed.as_millis(),
            child.peak_kib as f64 / 1024.0
        );
        assert!(child.elapsed < QUICK, "{name}: {child:?}");
        assert!(child.peak_kib < PEAK_LIMIT_KIB, "{name}: {child:?}");
    }

    // The real extract, for comparison: imported, and its peak printed.
    let real = import_in_child(&fixture("liechtenstein-2013-08-03.osm.pbf"));
    println!(
        "liechtenstein-2013-08-03.osm.pbf: {} in {} ms, peak {:.1} MiB",
        real.outcome,
        real.elapsed.as_millis(),
        real.peak_kib as f64 / 1024.0
    );
    assert!(real.outcome.starts_with("ok: "), "{real:?}");
}

/// Datasets not active, and rows of datasets that do not exist.
async fn leftover_rows(db: &IndexDb) -> i64 {
    let sql = "SELECT (SELECT count(*) FROM osm_dataset WHERE state <> 'active') \
               + (SELECT count(*) FROM osm_point WHERE dataset NOT IN (SELECT id FROM osm_dataset)) \
               + (SELECT count(*) FROM osm_way WHERE dataset NOT IN (SELECT id FROM osm_dataset)) \
               + (SELECT count(*) FROM osm_way_cell WHERE dataset NOT IN (SELECT id FROM osm_dataset))";
    match db {
        IndexDb::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        IndexDb::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
    }
    .expect("count leftovers")
}

#[tokio::test]
async fn refused_files_leave_the_loaded_dataset_answering() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sqlite(dir.path()).await;
    let index = LocalIndex::new(db.clone());
    let loaded = import(&db, &fixture("route.osm.pbf"), &mut |_| {})
        .await
        .expect("the route fixture");
    assert!(loaded.points > 0);

    // Each hostile file under the loaded dataset's name, so a success would replace it.
    let names = REFUSED
        .iter()
        .map(|(name, _)| *name)
        .chain(["empty-region.osm.pbf"]);
    for name in names {
        let same_name = dir.path().join("route.osm.pbf");
        std::fs::copy(hostile(name), &same_name).expect("copy");
        let error = import(&db, &same_name, &mut |_| {})
            .await
            .expect_err("refused");
        if name == "empty-region.osm.pbf" {
            assert!(matches!(error, IndexError::Empty { .. }), "{name}: {error}");
        } else {
            assert!(
                matches!(error, IndexError::BadBlock { .. }),
                "{name}: {error}"
            );
        }
        let status = index.status().await.expect("status");
        assert_eq!(status.len(), 1, "{name}: {status:?}");
        assert_eq!(status[0].id, loaded.dataset_id, "{name}");
        assert_eq!(
            status[0].points,
            i64::try_from(loaded.points).expect("fits")
        );
        assert_eq!(leftover_rows(&db).await, 0, "{name} left rows behind");
    }
}

#[tokio::test]
async fn an_empty_region_is_loaded_only_when_allowed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sqlite(dir.path()).await;
    let index = LocalIndex::new(db.clone());
    let path = hostile("empty-region.osm.pbf");

    let refused = import(&db, &path, &mut |_| {}).await.expect_err("empty");
    assert!(matches!(refused, IndexError::Empty { .. }), "{refused}");
    let message = refused.to_string();
    assert!(
        message.contains("empty-region.osm.pbf: holds no features Etappe reads"),
        "{message}"
    );
    assert!(
        message.contains("`etappe osm import --allow-empty`"),
        "{message}"
    );
    assert!(index.status().await.expect("status").is_empty());
    assert_eq!(leftover_rows(&db).await, 0);

    let options = ImportOptions { allow_empty: true };
    let report = import_with(&db, &path, &options, &mut |_| {})
        .await
        .expect("allowed");
    assert_eq!((report.points, report.ways, report.ferries), (0, 0, 0));
    assert_eq!(report.nodes_read, 1);
    let status = index.status().await.expect("status");
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].name, "empty-region");
    // The header's box, so the region is known to be covered.
    let bbox = status[0].bbox;
    assert!(
        (bbox.south - 44.9).abs() < 1e-9 && (bbox.north - 45.1).abs() < 1e-9,
        "{bbox:?}"
    );
}
