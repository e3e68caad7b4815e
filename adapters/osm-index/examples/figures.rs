//! Figures of the local index on a large extract: import throughput, index size, and the
//! time of `along` for the whole route of a GPX file, cut into days.
//!
//! ```text
//! cargo run --release -p etappe-osm-index --example figures -- \
//!     <file.osm.pbf> <route.gpx> <sqlite-file | postgres://…> [day_km]
//! ```
//! With a PostgreSQL URL the database must exist; its OSM tables are measured with
//! `pg_total_relation_size`. Peak memory: run it under `/usr/bin/time -v`.

use std::path::Path;
use std::time::Instant;

use etappe_analysis::StagePoint;
use etappe_analysis::geo::haversine_m;
use etappe_analysis::osm::{OsmSettings, OsmStage, SearchPlan, analyse_osm, corridors};
use etappe_osm_index::{IndexDb, LocalIndex, import};

fn gpx_points(path: &Path) -> Result<Vec<StagePoint>, String> {
    let gpx = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut points: Vec<StagePoint> = Vec::new();
    for piece in gpx.split("<trkpt ").skip(1) {
        let attr = |name: &str| -> Option<f64> {
            let start = piece.find(&format!("{name}=\""))? + name.len() + 2;
            let end = start + piece[start..].find('"')?;
            piece[start..end].parse().ok()
        };
        let (Some(lat), Some(lon)) = (attr("lat"), attr("lon")) else {
            return Err(format!("{}: a trkpt without lat/lon", path.display()));
        };
        let distance_m = points
            .last()
            .map(|p| p.distance_m + haversine_m((p.lat, p.lon), (lat, lon)))
            .unwrap_or(0.0);
        points.push(StagePoint {
            lat,
            lon,
            ele: None,
            distance_m,
        });
    }
    Ok(points)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, pbf, gpx, target, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: figures <file.osm.pbf> <route.gpx> <sqlite-file | postgres://…> [day_km]"
                .into(),
        );
    };
    let day_km: f64 = rest
        .first()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(100.0);
    let (db, _sqlite, pg) = if target.starts_with("postgres") {
        let store = etappe_events::PostgresStore::connect(target, 4).await?;
        let pool = store.pool().clone();
        (IndexDb::Postgres(pool.clone()), None, Some(pool))
    } else {
        let store = etappe_events::SqliteStore::open(Path::new(target)).await?;
        (IndexDb::Sqlite(store.pool().clone()), Some(store), None)
    };

    let started = Instant::now();
    let report = import(&db, Path::new(pbf), &mut |p| {
        eprintln!(
            "pass {}/{} {:.0} % kept {} ({:.1} s)",
            p.pass,
            p.passes,
            p.percent(),
            p.kept,
            p.elapsed.as_secs_f64()
        );
    })
    .await?;
    let seconds = started.elapsed().as_secs_f64();
    let mb = report.input_bytes as f64 / 1e6;
    let features = report.points + report.ways + report.ferries;
    println!(
        "import: {mb:.1} MB in {seconds:.1} s = {:.2} MB/s; read {} nodes, {} ways; kept {} points, {} road ways, {} ferries ({features} features)",
        mb / seconds,
        report.nodes_read,
        report.ways_read,
        report.points,
        report.ways,
        report.ferries
    );

    let size_bytes: i64 = if let Some(pool) = &pg {
        sqlx::query_scalar(
            "SELECT sum(pg_total_relation_size(c))::bigint FROM unnest(ARRAY['osm_point','osm_way','osm_way_cell']::regclass[]) AS c",
        )
        .fetch_one(pool)
        .await?
    } else {
        // The WAL is checkpointed into the file by a full checkpoint.
        if let IndexDb::Sqlite(pool) = &db {
            sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(pool)
                .await?;
        }
        i64::try_from(std::fs::metadata(target)?.len())?
    };
    println!(
        "index size: {:.1} MB ({}), {:.1} MB per million features",
        size_bytes as f64 / 1e6,
        if pg.is_some() {
            "osm tables, pg_total_relation_size"
        } else {
            "whole SQLite file"
        },
        size_bytes as f64 / 1e6 / (features as f64 / 1e6)
    );

    let points = gpx_points(Path::new(gpx))?;
    // Each day's points with distances from the day's start, as the rules read them.
    let mut days: Vec<Vec<StagePoint>> = Vec::new();
    let mut start = 0;
    for i in 1..points.len() {
        if points[i].distance_m - points[start].distance_m >= day_km * 1000.0
            || i == points.len() - 1
        {
            let base = points[start].distance_m;
            days.push(
                points[start..=i]
                    .iter()
                    .map(|p| StagePoint {
                        distance_m: p.distance_m - base,
                        ..*p
                    })
                    .collect(),
            );
            start = i;
        }
    }
    let stages: Vec<OsmStage<'_>> = days
        .iter()
        .enumerate()
        .map(|(i, d)| OsmStage {
            day_number: u32::try_from(i + 1).unwrap_or(u32::MAX),
            is_rest_day: false,
            points: d,
            start: (d[0].lat, d[0].lon),
            end: (d[d.len() - 1].lat, d[d.len() - 1].lon),
            distance_km: (d[d.len() - 1].distance_m - d[0].distance_m) / 1000.0,
            ascent_m: Some(0.0),
            date: None,
            country: None,
        })
        .collect();
    let plan = SearchPlan::for_stages(&stages);
    let index = LocalIndex::new(db.clone());
    for run in 1..=3 {
        let t = Instant::now();
        let found = index.find_along(&plan).await?;
        let along_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let corridors = corridors(&stages, &found);
        let clip_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let settings = OsmSettings {
            departure_hour: 8,
            average_speed_kmh: 15.0,
            reach: Default::default(),
        };
        let alerts = analyse_osm(&stages, &corridors, &settings);
        let rules_s = t.elapsed().as_secs_f64();
        println!(
            "along run {run}: {:.0} km in {} days: {along_s:.3} s -> {} points, {} ways, {} ferries, uncovered {:?}; corridors() {clip_s:.3} s, {} matched sections; rules {rules_s:.3} s, {} alerts; analysis {:.3} s in all",
            plan.length_km(),
            stages.len(),
            found.points.len(),
            found.ways.len(),
            found.ferries.len(),
            found.uncovered_days,
            corridors.iter().map(|c| c.ways.len()).sum::<usize>(),
            alerts.iter().map(Vec::len).sum::<usize>(),
            along_s + clip_s + rules_s
        );
    }
    Ok(())
}
