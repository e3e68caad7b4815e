//! The tiles end to end on each backend: synthetic `.hgt` files written to a temporary
//! directory, imported, listed, read back through the [`Elevations`] port, re-imported, and
//! refused when broken, with nothing of a refused batch written.
//!
//! SQLite always runs (a temporary file); PostgreSQL runs when `DATABASE_URL` names a
//! server, in a database of its own created for the run, and its absence is a failure under
//! `ETAPPE_REQUIRE_SERVICES=1`.

use std::path::{Path, PathBuf};

use etappe_elevation::{ElevationDb, ElevationError, HgtError, LocalTiles, import, status};
use etappe_upstream::{Elevations, Upstream};
use sqlx::QueryBuilder;

const VOID: i16 = i16::MIN;

/// Writes a tile of `samples`² samples whose sample at (row, col) is `height(row, col)`.
fn write_tile(
    dir: &Path,
    file_name: &str,
    samples: usize,
    height: impl Fn(usize, usize) -> i16,
) -> PathBuf {
    let mut data = Vec::with_capacity(samples * samples * 2);
    for row in 0..samples {
        for col in 0..samples {
            data.extend_from_slice(&height(row, col).to_be_bytes());
        }
    }
    let path = dir.join(file_name);
    std::fs::write(&path, data).expect("write tile");
    path
}

/// The plane of N47E009: 100 m at the north-west corner, +10 m a row south, +1 m a column
/// east (3 arc-seconds: 1200 rows and columns a degree).
fn plane(row: usize, col: usize) -> i16 {
    i16::try_from(100 + 10 * row + col).expect("fits")
}

fn plane_at(lat: f64, lon: f64) -> f64 {
    100.0 + 10.0 * (48.0 - lat) * 1200.0 + (lon - 9.0) * 1200.0
}

fn near(found: Option<f64>, expected: f64) -> bool {
    found.is_some_and(|f| (f - expected).abs() < 1e-6)
}

async fn row_count(db: &ElevationDb) -> usize {
    status(db).await.expect("status").len()
}

/// Stores a row that is no tile (a third of the bytes), as a bad restore might.
async fn store_broken_row(db: &ElevationDb) {
    let data = vec![0u8; 1000];
    let sql =
        "INSERT INTO elevation_tiles (name, south, west, samples, data, imported_at) VALUES (";
    macro_rules! insert {
        ($pool:expr) => {{
            let mut q = QueryBuilder::new(sql);
            let mut v = q.separated(", ");
            v.push_bind("N10E010");
            v.push_bind(10_i32);
            v.push_bind(10_i32);
            v.push_bind(1201_i32);
            v.push_bind(data.as_slice());
            v.push_bind(chrono::Utc::now());
            q.push(")");
            q.build().execute($pool).await.expect("insert a broken row");
        }};
    }
    match db {
        ElevationDb::Sqlite(pool) => insert!(pool),
        ElevationDb::Postgres(pool) => insert!(pool),
    }
}

async fn scenario(db: ElevationDb) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tiles = LocalTiles::new(db.clone());
    assert_eq!(tiles.provider(), "srtm");

    // Nothing imported: no heights, and the source says it is not loaded.
    assert!(!tiles.is_loaded().await.expect("status"));
    assert!(tiles.probe().await.is_ok(), "the database answers");
    assert_eq!(
        tiles.heights(&[(47.5, 9.5)]).await.expect("no tiles"),
        [None]
    );
    assert_eq!(tiles.tile_reads(), 1);

    let west = write_tile(dir.path(), "N47E009.hgt", 1201, plane);
    // Lower-case name; a constant 500 m with a void block in its north-west corner.
    let east = write_tile(dir.path(), "n47e010.hgt", 1201, |row, col| {
        if row < 10 && col < 10 { VOID } else { 500 }
    });
    // One arc-second, south of the equator and west of Greenwich: 1 m a row.
    let fine = write_tile(dir.path(), "S01W001.hgt", 3601, |row, _| {
        i16::try_from(row).expect("fits")
    });
    let report = import(&db, &[west.clone(), east.clone(), fine.clone()])
        .await
        .expect("import");
    let names: Vec<&str> = report.tiles.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["N47E009", "N47E010", "S01W001"]);
    let sizes: Vec<(usize, u64)> = report.tiles.iter().map(|t| (t.samples, t.bytes)).collect();
    assert_eq!(
        sizes,
        [(1201, 2_884_802), (1201, 2_884_802), (3601, 25_934_402)]
    );
    assert_eq!(report.tiles[1].voids, 100);
    assert_eq!(report.tiles[1].path, east);
    assert_eq!(
        (report.tiles[0].lowest_m, report.tiles[0].highest_m),
        (Some(100), Some(100 + 12_000 + 1_200))
    );
    let c = report.coverage;
    assert_eq!((c.south, c.west, c.north, c.east), (-1, -1, 48, 11));

    let listed = status(&db).await.expect("status");
    let listed: Vec<(&str, i32, i32, i32, u64)> = listed
        .iter()
        .map(|t| (t.name.as_str(), t.south, t.west, t.samples, t.bytes))
        .collect();
    assert_eq!(
        listed,
        [
            ("S01W001", -1, -1, 3601, 25_934_402),
            ("N47E009", 47, 9, 1201, 2_884_802),
            ("N47E010", 47, 10, 1201, 2_884_802),
        ]
    );
    assert!(tiles.is_loaded().await.expect("status"));

    // Heights through the port, in order, each tile read once.
    let tiles = LocalTiles::new(db.clone());
    let points = [
        (47.5, 9.5),
        (47.123_4, 9.987_6),
        (47.5, 10.5),
        // In the void block of N47E010: no height.
        (47.999, 10.001),
        // On the border of both: N47E010's west column holds 500 m.
        (47.5, 10.0),
        // The north border of N47E009, whose neighbour N48E009 is not imported.
        (48.0, 9.25),
        (-0.5, -0.5),
        // No tile here.
        (52.3, 13.4),
        (f64::NAN, 9.5),
    ];
    let found = tiles.heights(&points).await.expect("heights");
    assert!(near(found[0], plane_at(47.5, 9.5)), "{found:?}");
    assert!(near(found[1], plane_at(47.123_4, 9.987_6)), "{found:?}");
    assert!(near(found[2], 500.0), "{found:?}");
    assert_eq!(found[3], None);
    assert!(near(found[4], 500.0), "{found:?}");
    assert!(near(found[5], plane_at(48.0, 9.25)), "{found:?}");
    assert!(near(found[6], 1800.0), "{found:?}");
    assert_eq!(found[7..], [None, None]);
    // N47E009, N47E010, S01W001, and the absent N48E009 and N52E013.
    assert_eq!(tiles.tile_reads(), 5);
    // Again: the tiles come from memory; only the absent ones are asked for again.
    assert_eq!(tiles.heights(&points).await.expect("heights"), found);
    assert_eq!(tiles.tile_reads(), 7);

    // A cache of one tile: alternating between two reads each time.
    let small = LocalTiles::with_capacity(db.clone(), 1);
    for _ in 0..2 {
        small.heights(&[(47.5, 9.5)]).await.expect("heights");
        small.heights(&[(47.5, 10.5)]).await.expect("heights");
    }
    assert_eq!(small.tile_reads(), 4);
    small.heights(&[(47.5, 10.6)]).await.expect("heights");
    assert_eq!(small.tile_reads(), 4, "the last tile is still cached");

    // Re-importing a tile replaces it, and other tiles stay.
    let flat = write_tile(dir.path(), "N47E009.hgt", 1201, |_, _| 42);
    let report = import(&db, &[flat]).await.expect("re-import");
    assert_eq!(report.tiles.len(), 1);
    assert_eq!(row_count(&db).await, 3);
    let fresh = LocalTiles::new(db.clone());
    assert!(near(
        fresh.heights(&[(47.5, 9.5)]).await.expect("heights")[0],
        42.0
    ));

    // Broken files: nothing of the batch is written, and the error names the file.
    let other = write_tile(dir.path(), "N50E005.hgt", 1201, |_, _| 1);
    let short = dir.path().join("N51E005.hgt");
    std::fs::write(&short, vec![0u8; 2_884_800]).expect("write");
    let error = import(&db, &[other.clone(), short.clone()])
        .await
        .expect_err("wrong size");
    assert!(
        matches!(
            &error,
            ElevationError::Hgt(HgtError::BadSize {
                bytes: 2_884_800,
                ..
            })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("N51E005.hgt"), "{error}");
    let named = dir.path().join("tile.hgt");
    std::fs::copy(&other, &named).expect("copy");
    let error = import(&db, &[other.clone(), named])
        .await
        .expect_err("bad name");
    assert!(
        error
            .to_string()
            .contains("tile.hgt: not an SRTM tile name"),
        "{error}"
    );
    let error = import(&db, &[dir.path().join("N60E005.hgt")])
        .await
        .expect_err("missing");
    assert!(
        matches!(error, ElevationError::NoSuchFile { .. }),
        "{error}"
    );
    let sub = dir.path().join("other");
    std::fs::create_dir(&sub).expect("dir");
    let twin = write_tile(&sub, "n50e005.HGT", 1201, |_, _| 2);
    let error = import(&db, &[other, twin]).await.expect_err("twice");
    assert!(
        error.to_string().contains("are both tile N50E005"),
        "{error}"
    );
    assert!(matches!(
        import(&db, &[]).await,
        Err(ElevationError::NothingToImport)
    ));
    let error = import(&db, &[dir.path().to_owned()])
        .await
        .expect_err("a dir");
    assert!(
        error.to_string().contains("not an SRTM tile name"),
        "{error}"
    );
    assert_eq!(
        row_count(&db).await,
        3,
        "nothing of a refused batch was stored"
    );

    // A stored row that is no tile fails the call, not retryably, naming the tile.
    store_broken_row(&db).await;
    let error = fresh
        .heights(&[(10.5, 10.5)])
        .await
        .expect_err("a broken row");
    assert_eq!(error.upstream, Upstream::Elevation);
    assert!(!error.retryable);
    assert!(error.failure.contains("N10E010"), "{error}");
}

#[tokio::test]
async fn sqlite_tiles_import_and_answer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = etappe_events::SqliteStore::open(&dir.path().join("etappe.db"))
        .await
        .expect("sqlite store");
    scenario(ElevationDb::Sqlite(store.pool().clone())).await;
}

#[tokio::test]
async fn postgres_tiles_import_and_answer() {
    let url = match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => url,
        _ => {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but DATABASE_URL does not name a PostgreSQL database"
            );
            eprintln!("skipped: set DATABASE_URL=postgres://… to run this test on PostgreSQL");
            return;
        }
    };
    // A database of its own, so the test neither sees nor disturbs another's tiles.
    let admin = sqlx::PgPool::connect(&url)
        .await
        .expect("connect to PostgreSQL");
    let name = format!(
        "etappe_t_elevation_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_nanos()
    );
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .expect("create database");
    let own_url = match url.rfind('/') {
        Some(slash) => format!("{}/{name}", &url[..slash]),
        None => panic!("DATABASE_URL has no database name: {url}"),
    };
    let store = etappe_events::PostgresStore::connect(&own_url, 4)
        .await
        .expect("postgres store");
    scenario(ElevationDb::Postgres(store.pool().clone())).await;
    store.pool().close().await;
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE {name}")))
        .execute(&admin)
        .await;
}
