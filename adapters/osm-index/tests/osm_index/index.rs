//! The index end to end on each backend: the committed fixtures (`tests/fixtures/osm/`,
//! written by `make_fixtures.py`) imported, read back through the port, re-imported, and
//! refused when broken, with the previous dataset still answering.
//!
//! SQLite always runs (a temporary file); PostgreSQL runs when `DATABASE_URL` names a
//! server, in a database of its own created for the run, and its absence is a failure under
//! `ETAPPE_REQUIRE_SERVICES=1`.

use std::path::{Path, PathBuf};

use etappe_analysis::StagePoint;
use etappe_analysis::geo::haversine_m;
use etappe_analysis::osm::{
    AccommodationKind, FeatureKind, FoodKind, HealthKind, OsmStage, RouteFeatures, SearchPlan,
    corridors,
};
use etappe_osm_index::{IndexDb, IndexError, LocalIndex, import};
use etappe_upstream::{AccommodationType, BedSearch, OsmFeatures};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/osm")
        .join(name)
}

/// The fixture route's points, with cumulative distance.
fn route_points() -> Vec<StagePoint> {
    let gpx = std::fs::read_to_string(fixture("route.gpx")).expect("route.gpx");
    let mut points: Vec<StagePoint> = Vec::new();
    for piece in gpx.split("<trkpt ").skip(1) {
        let attr = |name: &str| -> f64 {
            let start = piece.find(&format!("{name}=\"")).expect("attribute") + name.len() + 2;
            let end = start + piece[start..].find('"').expect("closing quote");
            piece[start..end].parse().expect("a number")
        };
        let (lat, lon) = (attr("lat"), attr("lon"));
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
    assert!(
        points.len() > 500,
        "the fixture route has {} points",
        points.len()
    );
    points
}

fn stage(points: &[StagePoint], day_number: u32) -> OsmStage<'_> {
    let first = points.first().expect("points");
    let last = points.last().expect("points");
    OsmStage {
        day_number,
        is_rest_day: false,
        points,
        start: (first.lat, first.lon),
        end: (last.lat, last.lon),
        distance_km: last.distance_m / 1000.0,
        ascent_m: Some(0.0),
        date: None,
        country: Some("FR".to_owned()),
    }
}

async fn noisy_import(
    db: &IndexDb,
    path: &Path,
) -> Result<etappe_osm_index::ImportReport, IndexError> {
    let mut calls = 0;
    let result = import(db, path, &mut |_progress| calls += 1).await;
    if result.is_ok() {
        assert!(
            calls >= 3,
            "progress is reported at least at the end of each pass"
        );
    }
    result
}

fn named<'a>(found: &'a RouteFeatures, name: &str) -> Option<&'a etappe_analysis::osm::Feature> {
    found
        .points
        .iter()
        .find(|p| p.name.as_deref() == Some(name))
}

async fn scenario(db: IndexDb) {
    let index = LocalIndex::new(db.clone());
    let points = route_points();
    let stages = [stage(&points, 1)];
    let plan = SearchPlan::for_stages(&stages);

    // Nothing loaded: an error that says what to do, never an empty answer.
    assert!(!index.is_loaded().await.expect("status"));
    let error = index.along(&plan).await.expect_err("no index yet");
    assert!(
        error
            .failure
            .contains("run `etappe osm import <file.osm.pbf>`"),
        "{error}"
    );
    assert!(
        index
            .accommodations_near(BedSearch {
                lat: 45.5,
                lon: 5.0,
                radius_m: 5000,
                types: &AccommodationType::ALL
            })
            .await
            .is_err()
    );

    // Import: what the fixture holds, and nothing the analysis does not read.
    let report = noisy_import(&db, &fixture("route.osm.pbf"))
        .await
        .expect("import");
    assert_eq!(report.name, "route");
    // 15 tagged nodes the rules read (the bench and the tree are not) + the camp site area.
    assert_eq!(report.points, 16, "{report:?}");
    // 10 roads along the route (the last one broken by the ferry) + 1 five km east; the
    // building is not a road.
    assert_eq!(report.ways, 11, "{report:?}");
    assert_eq!(report.ferries, 2, "the crossing and the one ridden");
    assert_eq!((report.bbox.south, report.bbox.north), (44.95, 45.6));
    let status = index.status().await.expect("status");
    assert_eq!(status.len(), 1);
    assert_eq!(
        (status[0].points, status[0].ways, status[0].ferries),
        (16, 11, 2)
    );
    assert_eq!(status[0].id, report.dataset_id);
    assert!(status[0].input_bytes > 1000);

    let found = index.along(&plan).await.expect("along");
    check_route_features(&found, &stages);
    assert_eq!(index.source(), "local index");

    // Accommodations at the day's end: the hotel priced by its stars, the camp site area.
    let end = stages[0].end;
    let beds = index
        .accommodations_near(BedSearch {
            lat: end.0,
            lon: end.1,
            radius_m: 5000,
            types: &AccommodationType::ALL,
        })
        .await
        .expect("accommodations");
    assert_eq!(beds.len(), 2, "{beds:?}");
    let hotel = &beds[0];
    assert_eq!(hotel.kind, AccommodationType::Hotel);
    assert_eq!(hotel.name.as_deref(), Some("Hôtel des Alpes"));
    assert_eq!((hotel.price_min_eur, hotel.price_max_eur), (90.0, 120.0));
    assert_eq!(hotel.address.as_deref(), Some("Rue Haute 5, Arrivée"));
    assert!(hotel.distance_to_end_m > 1000.0 && hotel.distance_to_end_m < 1500.0);
    assert_eq!(beds[1].kind, AccommodationType::CampSite);
    let camps_only = index
        .accommodations_near(BedSearch {
            lat: end.0,
            lon: end.1,
            radius_m: 5000,
            types: &[AccommodationType::CampSite],
        })
        .await
        .expect("camp sites");
    assert_eq!(camps_only.len(), 1);
    // 1 km around the end holds neither (the hotel is ~1.1 km away).
    let near = index
        .accommodations_near(BedSearch {
            lat: end.0,
            lon: end.1,
            radius_m: 1000,
            types: &AccommodationType::ALL,
        })
        .await
        .expect("1 km");
    assert!(
        near.iter().all(|b| b.kind != AccommodationType::Hotel),
        "{near:?}"
    );
    let outside = index
        .accommodations_near(BedSearch {
            lat: 47.0,
            lon: 5.0,
            radius_m: 5000,
            types: &AccommodationType::ALL,
        })
        .await
        .expect_err("outside the extract");
    assert!(
        outside
            .failure
            .contains("outside the loaded OpenStreetMap index"),
        "{outside}"
    );

    // Re-import: the same index, one active dataset, a new id.
    let again = noisy_import(&db, &fixture("route.osm.pbf"))
        .await
        .expect("re-import");
    assert_eq!((again.points, again.ways, again.ferries), (16, 11, 2));
    let status = index.status().await.expect("status");
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(status[0].id, again.dataset_id);
    assert_ne!(again.dataset_id, report.dataset_id);
    assert_eq!(
        index.along(&plan).await.expect("along").points.len(),
        found.points.len()
    );

    // Broken files: a clear error, and the previous dataset still answers.
    let truncated = noisy_import(&db, &fixture("truncated.osm.pbf"))
        .await
        .expect_err("truncated");
    let size = std::fs::metadata(fixture("truncated.osm.pbf"))
        .expect("size")
        .len();
    assert!(
        matches!(truncated, IndexError::Truncated { size: s, .. } if s == size),
        "{truncated}"
    );
    assert!(
        truncated
            .to_string()
            .contains(&format!("truncated at byte {size}")),
        "{truncated}"
    );
    assert!(truncated.to_string().contains("truncated.osm.pbf"));
    let not_pbf = noisy_import(&db, &fixture("not-pbf.osm.pbf"))
        .await
        .expect_err("text");
    assert!(
        not_pbf.to_string().contains("not an OSM PBF file"),
        "{not_pbf}"
    );
    let missing = noisy_import(&db, &fixture("absent.osm.pbf"))
        .await
        .expect_err("absent");
    assert!(
        missing
            .to_string()
            .ends_with("absent.osm.pbf: no such file"),
        "{missing}"
    );
    // Framing intact, compressed data damaged, and the same name as the loaded dataset:
    // refused while decoding, and the loaded "route" stays the active one.
    let dir = tempfile::tempdir().expect("temp dir");
    let damaged = dir.path().join("route.osm.pbf");
    let mut bytes = std::fs::read(fixture("route.osm.pbf")).expect("fixture");
    let len = bytes.len();
    for b in &mut bytes[len - 400..len - 300] {
        *b ^= 0x5a;
    }
    std::fs::write(&damaged, &bytes).expect("write");
    let corrupt = noisy_import(&db, &damaged).await.expect_err("corrupt");
    assert!(matches!(corrupt, IndexError::Corrupt { .. }), "{corrupt}");
    assert!(
        corrupt
            .to_string()
            .contains("route.osm.pbf: corrupt at byte"),
        "{corrupt}"
    );
    let status = index.status().await.expect("status");
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].id, again.dataset_id);
    assert_eq!(
        leftover_rows(&db).await,
        0,
        "a failed import leaves no rows behind"
    );
    check_route_features(&index.along(&plan).await.expect("along"), &stages);

    // A second region sits beside the first; features in both are returned once.
    let dir = tempfile::tempdir().expect("temp dir");
    let other = dir.path().join("other.osm.pbf");
    std::fs::copy(fixture("route.osm.pbf"), &other).expect("copy");
    noisy_import(&db, &other).await.expect("second dataset");
    let status = index.status().await.expect("status");
    let names: Vec<&str> = status.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["route", "other"]);
    check_route_features(&index.along(&plan).await.expect("along"), &stages);

    // Days outside every dataset's box are listed, the others are not.
    let north: Vec<StagePoint> = points
        .iter()
        .map(|p| StagePoint {
            lat: p.lat + 1.5,
            ..*p
        })
        .collect();
    let two_days = [stage(&points, 1), stage(&north, 2)];
    let found = index
        .along(&SearchPlan::for_stages(&two_days))
        .await
        .expect("along");
    assert_eq!(found.uncovered_days, [1]);
    // A day crossing the box's northern edge (45.6°) is not covered either.
    let crossing: Vec<StagePoint> = points
        .iter()
        .map(|p| StagePoint {
            lat: p.lat + 0.1,
            ..*p
        })
        .collect();
    let found = index
        .along(&SearchPlan::for_stages(&[stage(&crossing, 1)]))
        .await
        .expect("along");
    assert_eq!(found.uncovered_days, [0]);
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

fn check_route_features(found: &RouteFeatures, stages: &[OsmStage<'_>]) {
    assert!(found.uncovered_days.is_empty());
    assert_eq!(found.requests, 0);
    let count = |kind: FeatureKind| found.points.iter().filter(|p| p.kind == kind).count();
    assert_eq!(count(FeatureKind::DrinkingWater), 4);
    let water_lats: Vec<f64> = {
        let mut v: Vec<f64> = found
            .points
            .iter()
            .filter(|p| p.kind == FeatureKind::DrinkingWater)
            .map(|p| p.lat)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    // km 8 and km 45: the 37 km gap the water rule flags.
    let gap_km = (water_lats[2] - water_lats[1]) * 111.32;
    assert!((gap_km - 37.0).abs() < 0.1, "{gap_km}");
    let bakery = named(found, "Boulangerie du Pont").expect("bakery on the line");
    assert_eq!(bakery.kind, FeatureKind::Food(FoodKind::Bakery));
    assert_eq!(bakery.opening_hours.as_deref(), Some("Mo-Sa 07:00-19:00"));
    assert!(named(found, "Au Pain Chaud").is_some());
    assert!(
        named(found, "Trop Loin").is_none(),
        "5 km out is outside the 2 km corridor"
    );
    assert_eq!(
        named(found, "Cycles Martin").expect("bike shop").kind,
        FeatureKind::BikeShop { repair: true }
    );
    assert_eq!(
        named(found, "Gare de Départ").expect("station").kind,
        FeatureKind::RailwayStation
    );
    assert_eq!(
        named(found, "Pharmacie Centrale").expect("pharmacy").kind,
        FeatureKind::Health(HealthKind::Pharmacy)
    );
    // 10 km from the day's middle is within the health search's 15 km; 16 km is not.
    assert!(named(found, "Hôpital Est").is_some());
    assert!(named(found, "Hôpital Lointain").is_none());
    let museum = named(found, "Musée de la Soie").expect("museum");
    assert_eq!(museum.wikidata.as_deref(), Some("Q1"));
    let hotel = named(found, "Hôtel des Alpes").expect("hotel");
    assert_eq!(hotel.seasonal.as_deref(), Some("summer"));
    assert_eq!(
        hotel.kind,
        FeatureKind::Accommodation(AccommodationKind::Hotel)
    );
    let camp = named(found, "Camping du Lac").expect("camp site area, at its centroid");
    assert!(
        (camp.lat - (45.0 + 59.6 / 111.32)).abs() < 0.0005,
        "{}",
        camp.lat
    );
    assert_eq!(count(FeatureKind::Ford), 1);
    assert_eq!(found.points.len(), 14, "{:#?}", found.points);

    // Road ways near the line, whole (ten: the last is broken by the ferry); the primary 5 km
    // east is not among them.
    assert_eq!(
        found.ways.len(),
        10,
        "{:#?}",
        found
            .ways
            .iter()
            .map(|w| &w.tags.highway)
            .collect::<Vec<_>>()
    );
    let primary = found
        .ways
        .iter()
        .find(|w| w.tags.highway == "primary")
        .expect("the primary");
    assert!(primary.tags.cycleway.is_empty());
    let track = found
        .ways
        .iter()
        .find(|w| w.tags.highway == "track")
        .expect("track");
    assert_eq!(track.tags.surface.as_deref(), Some("gravel"));
    assert_eq!(track.tags.tracktype.as_deref(), Some("grade3"));
    let secondary = found
        .ways
        .iter()
        .find(|w| w.tags.highway == "secondary")
        .expect("secondary");
    assert_eq!(secondary.tags.maxspeed.as_deref(), Some("80"));
    // The crossing ferry and the one the route rides from km 52.
    let mut ferries: Vec<_> = found.ferries.iter().map(|f| f.name.as_deref()).collect();
    ferries.sort_unstable();
    assert_eq!(ferries, vec![Some("Bac de l'Isère"), Some("Bac du Rhône")]);

    // Clipped to the day's 20 m buffer, the sections have their real lengths.
    let corridor = &corridors(stages, found)[0];
    let length = |highway: &str| -> f64 {
        corridor
            .ways
            .iter()
            .filter(|w| w.highway == highway)
            .map(|w| w.length_m)
            .sum()
    };
    assert!(
        (length("primary") - 600.0).abs() < 15.0,
        "{}",
        length("primary")
    );
    assert!(
        (length("track") - 800.0).abs() < 15.0,
        "{}",
        length("track")
    );
    assert!((length("secondary") - 1000.0).abs() < 15.0);
    // The Rhône ferry crosses the route at right angles: found nearby, never ridden; the
    // Isère ferry is ridden for its 300 m.
    assert_eq!(corridor.ferries.len(), 1, "{:?}", corridor.ferries);
    assert!(
        (corridor.ferries[0].length_m - 300.0).abs() < 15.0,
        "{:?}",
        corridor.ferries
    );
}

#[tokio::test]
async fn sqlite_index_imports_answers_and_survives_broken_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = etappe_events::SqliteStore::open(&dir.path().join("etappe.db"))
        .await
        .expect("sqlite store");
    scenario(IndexDb::Sqlite(store.pool().clone())).await;
}

#[tokio::test]
async fn postgres_index_imports_answers_and_survives_broken_files() {
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
    // A database of its own, so the test neither sees nor disturbs another's datasets.
    let admin = sqlx::PgPool::connect(&url)
        .await
        .expect("connect to PostgreSQL");
    let name = format!(
        "etappe_t_osm_{}_{}",
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
    scenario(IndexDb::Postgres(store.pool().clone())).await;
    store.pool().close().await;
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE {name}")))
        .execute(&admin)
        .await;
}

/// The fixture route moved `east_m` metres east (negative: west), point by point.
fn shifted_plan(points: &[StagePoint], east_m: f64) -> SearchPlan {
    let line = points
        .iter()
        .map(|p| {
            let per_degree = 111_320.0 * p.lat.to_radians().cos();
            (p.lat, p.lon + east_m / per_degree)
        })
        .collect();
    // Unthinned, so the distance to the fixture's features is exactly the shift.
    SearchPlan {
        lines: vec![line],
        line_radius_m: 2_025.0,
        way_radius_m: 45.0,
        ferry_radius_m: 125.0,
        places: Vec::new(),
    }
}

#[tokio::test]
async fn search_radii_hold_at_their_edges() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = etappe_events::SqliteStore::open(&dir.path().join("etappe.db"))
        .await
        .expect("sqlite store");
    let db = IndexDb::Sqlite(store.pool().clone());
    noisy_import(&db, &fixture("route.osm.pbf"))
        .await
        .expect("import");
    let index = LocalIndex::new(db);
    let points = route_points();
    let along = |east_m: f64| {
        let plan = shifted_plan(&points, east_m);
        let index = index.clone();
        async move { index.find_along(&plan).await.expect("along") }
    };

    // The route's own roads lie on the line: 40 m away they are within 45 m, 50 m away not.
    assert_eq!(along(40.0).await.ways.len(), 10);
    assert_eq!(along(-40.0).await.ways.len(), 10);
    assert_eq!(along(50.0).await.ways.len(), 0);
    // Water points lie 50 m east of the route: 2,015 m from a line 1,965 m west, in the
    // 2,025 m corridor; 2,035 m from a line 1,985 m west, outside.
    let water = |found: &RouteFeatures| {
        found
            .points
            .iter()
            .filter(|p| p.kind == FeatureKind::DrinkingWater)
            .count()
    };
    assert_eq!(water(&along(-1_965.0).await), 4);
    assert_eq!(water(&along(-1_985.0).await), 0);
    // The ferry crosses the route, so it is found however the line moves east or west.
    assert_eq!(along(1_000.0).await.ferries.len(), 1);

    // The hotel is ~1,044 m from the route's end (1 km back, 300 m east).
    let end = points.last().expect("points");
    let hotel_within = |radius_m: u32| {
        let index = index.clone();
        async move {
            index
                .find_accommodations(BedSearch {
                    lat: end.lat,
                    lon: end.lon,
                    radius_m,
                    types: &[AccommodationType::Hotel],
                })
                .await
                .expect("accommodations")
                .len()
        }
    };
    assert_eq!(hotel_within(1_030).await, 0);
    assert_eq!(hotel_within(1_060).await, 1);
    // Radii the port does not serve are refused, not clamped.
    for radius in [0, 25_001] {
        let error = index
            .find_accommodations(BedSearch {
                lat: end.lat,
                lon: end.lon,
                radius_m: radius,
                types: &AccommodationType::ALL,
            })
            .await
            .expect_err("radius out of range");
        assert!(error.to_string().contains("outside 1..=25000 m"), "{error}");
    }
}

/// The import can run on a worker's runtime: its future is `Send`.
#[test]
fn the_import_future_can_be_spawned() {
    fn spawnable<T: Send>(_: &T) {}
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let _guard = runtime.enter();
    let pool = sqlx::SqlitePool::connect_lazy("sqlite::memory:").expect("lazy pool");
    let db = IndexDb::Sqlite(pool);
    let mut progress = |_: &etappe_osm_index::Progress| {};
    let future = import(&db, Path::new("absent.osm.pbf"), &mut progress);
    spawnable(&future);
}
