//! The index's tables on either backend (see `migrations/*/20261201000008_osm_index.sql`):
//! one [`IndexDb`] holding a SQLite or a PostgreSQL pool, and every statement the importer
//! and the queries run, written once with [`sqlx::QueryBuilder`] so each backend gets its own
//! placeholders.
//!
//! Lists bound into `IN (…)` are cut into [`BATCH`]-sized pieces: SQLite builds may cap the
//! number of bound variables at 999.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgPool, QueryBuilder, SqlitePool};

use crate::error::IndexError;
use crate::places::{self, PlaceRow};

/// The database the index lives in: the same one as the rest of Etappe.
#[derive(Debug, Clone)]
pub enum IndexDb {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Values bound into one `IN (…)` list.
pub(crate) const BATCH: usize = 500;
/// Rows written by one multi-row `INSERT`.
const INSERT_ROWS: usize = 400;

/// Runs `$body` with `$pool` bound to whichever pool `$db` holds; the body is compiled once
/// per backend, so the same code speaks both.
macro_rules! with_pool {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            IndexDb::Sqlite($pool) => $body,
            IndexDb::Postgres($pool) => $body,
        }
    };
}

/// Appends ` AND {column} IN (…)` with each of `values` bound, in either backend's
/// placeholders.
fn push_any_of<'t, Db, T>(
    q: &mut QueryBuilder<Db>,
    column: &str,
    values: impl IntoIterator<Item = T>,
) where
    Db: sqlx::Database,
    T: sqlx::Encode<'t, Db> + sqlx::Type<Db>,
{
    q.push(format_args!(" AND {column} IN ("));
    let mut list = q.separated(", ");
    for value in values {
        list.push_bind(value);
    }
    q.push(")");
}

/// Deletes dataset `id` and its rows inside `tx`, in either backend.
async fn delete_dataset<Db>(tx: &mut sqlx::Transaction<'_, Db>, id: i64) -> Result<(), sqlx::Error>
where
    Db: sqlx::Database,
    for<'c> &'c mut Db::Connection: sqlx::Executor<'c, Database = Db>,
    i64: for<'t> sqlx::Encode<'t, Db> + sqlx::Type<Db>,
    Db::Arguments: sqlx::IntoArguments<Db>,
{
    for table in ["osm_way_cell", "osm_way", "osm_point", "osm_place"] {
        let mut q = QueryBuilder::new(format!("DELETE FROM {table} WHERE dataset = "));
        q.push_bind(id);
        q.build().execute(&mut **tx).await?;
    }
    let mut q = QueryBuilder::new("DELETE FROM osm_dataset WHERE id = ");
    q.push_bind(id);
    q.build().execute(&mut **tx).await?;
    Ok(())
}

/// A loaded (or loading) extract.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DatasetInfo {
    pub id: i64,
    /// The file's stem ("rhone-alpes" for `rhone-alpes.osm.pbf`): re-importing a file of the
    /// same name replaces it, other names sit side by side.
    pub name: String,
    pub source_path: String,
    pub imported_at: DateTime<Utc>,
    pub bbox: Bbox,
    pub points: i64,
    pub ways: i64,
    pub ferries: i64,
    pub input_bytes: i64,
}

/// A latitude/longitude box, degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bbox {
    pub south: f64,
    pub west: f64,
    pub north: f64,
    pub east: f64,
}

impl Bbox {
    /// Whether (`lat`, `lon`) is inside, edges included.
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        (self.south..=self.north).contains(&lat) && (self.west..=self.east).contains(&lon)
    }
}

/// A point row as the importer writes it.
#[derive(Debug, Clone)]
pub(crate) struct PointRow {
    pub cell: i64,
    pub kind: &'static str,
    pub osm_type: &'static str,
    pub osm_id: i64,
    pub lat: f64,
    pub lon: f64,
    pub tags: String,
}

/// A point row as a query reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct StoredPoint {
    pub osm_type: String,
    pub osm_id: i64,
    pub lat: f64,
    pub lon: f64,
    pub tags: String,
}

/// A named place as a query reads it (one of its names: `key`).
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct StoredPlace {
    pub key: String,
    pub name: String,
    pub kind: String,
    pub osm_type: String,
    pub osm_id: i64,
    pub lat: f64,
    pub lon: f64,
    pub weight: f32,
}

/// A road or ferry way as the importer writes it, with the cells it crosses.
#[derive(Debug, Clone)]
pub(crate) struct WayRow {
    pub way_id: i64,
    pub class: &'static str,
    pub tags: String,
    pub geom: Vec<u8>,
    pub bbox: Bbox,
    pub cells: Vec<i64>,
}

/// A way as a query reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct StoredWay {
    pub way_id: i64,
    pub tags: String,
    pub geom: Vec<u8>,
}

type DatasetTuple = (
    i64,
    String,
    String,
    DateTime<Utc>,
    f64,
    f64,
    f64,
    f64,
    i64,
    i64,
    i64,
    i64,
);

fn dataset_from(row: DatasetTuple) -> DatasetInfo {
    let (
        id,
        name,
        source_path,
        imported_at,
        south,
        west,
        north,
        east,
        points,
        ways,
        ferries,
        bytes,
    ) = row;
    DatasetInfo {
        id,
        name,
        source_path,
        imported_at,
        bbox: Bbox {
            south,
            west,
            north,
            east,
        },
        points,
        ways,
        ferries,
        input_bytes: bytes,
    }
}

impl IndexDb {
    /// The active datasets, oldest first.
    pub async fn active_datasets(&self) -> Result<Vec<DatasetInfo>, IndexError> {
        let rows: Vec<DatasetTuple> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "SELECT id, name, source_path, imported_at, south, west, north, east, points, \
                 ways, ferries, input_bytes FROM osm_dataset WHERE state = 'active' ORDER BY id",
            );
            q.build_query_as().fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(dataset_from).collect())
    }

    /// Drops the rows of every dataset named `name` in state `loading`: what a crashed or
    /// failed import left.
    pub(crate) async fn purge_loading(&self, name: &str) -> Result<(), IndexError> {
        let ids: Vec<(i64,)> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new("SELECT id FROM osm_dataset WHERE state = 'loading' AND name = ");
            q.push_bind(name);
            q.build_query_as().fetch_all(pool).await?
        });
        for (id,) in ids {
            self.discard(id).await?;
        }
        Ok(())
    }

    /// Deletes one dataset and its rows, in one transaction.
    pub(crate) async fn discard(&self, id: i64) -> Result<(), IndexError> {
        with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            delete_dataset(&mut tx, id).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// A new dataset row in state `loading`; returns its id.
    pub(crate) async fn create_loading(
        &self,
        name: &str,
        source_path: &str,
        input_bytes: u64,
        now: DateTime<Utc>,
    ) -> Result<i64, IndexError> {
        let bytes = i64::try_from(input_bytes).unwrap_or(i64::MAX);
        let (id,): (i64,) = with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "INSERT INTO osm_dataset (name, source_path, state, imported_at, south, west, \
                 north, east, input_bytes) VALUES (",
            );
            let mut v = q.separated(", ");
            v.push_bind(name);
            v.push_bind(source_path);
            v.push_bind("loading");
            v.push_bind(now);
            for _ in 0..4 {
                v.push_bind(0.0_f64);
            }
            v.push_bind(bytes);
            q.push(") RETURNING id");
            q.build_query_as().fetch_one(pool).await?
        });
        Ok(id)
    }

    /// Writes point rows of dataset `id`.
    pub(crate) async fn insert_points(&self, id: i64, rows: &[PointRow]) -> Result<(), IndexError> {
        for chunk in rows.chunks(INSERT_ROWS) {
            with_pool!(self, pool => {
                let mut q = QueryBuilder::new(
                    "INSERT INTO osm_point (dataset, cell, kind, osm_type, osm_id, lat, lon, tags) ",
                );
                q.push_values(chunk, |mut b, r| {
                    b.push_bind(id)
                        .push_bind(r.cell)
                        .push_bind(r.kind)
                        .push_bind(r.osm_type)
                        .push_bind(r.osm_id)
                        .push_bind(r.lat)
                        .push_bind(r.lon)
                        .push_bind(r.tags.as_str());
                });
                q.build().execute(pool).await?;
            });
        }
        Ok(())
    }

    /// Writes named-place rows of dataset `id`.
    pub(crate) async fn insert_places(&self, id: i64, rows: &[PlaceRow]) -> Result<(), IndexError> {
        for chunk in rows.chunks(INSERT_ROWS) {
            with_pool!(self, pool => {
                let mut q = QueryBuilder::new(
                    "INSERT INTO osm_place (dataset, key, name, kind, osm_type, osm_id, lat, lon, weight) ",
                );
                q.push_values(chunk, |mut b, r| {
                    b.push_bind(id)
                        .push_bind(r.key.as_str())
                        .push_bind(r.name.as_str())
                        .push_bind(r.kind)
                        .push_bind(r.osm_type)
                        .push_bind(r.osm_id)
                        .push_bind(r.lat)
                        .push_bind(r.lon)
                        .push_bind(r.weight);
                });
                q.build().execute(pool).await?;
            });
        }
        Ok(())
    }

    /// The places of the active datasets whose folded name is `key` or, with `prefix`,
    /// begins with it; heaviest first, at most `limit`.
    pub(crate) async fn places_by_key(
        &self,
        key: &str,
        prefix: bool,
        limit: u32,
    ) -> Result<Vec<StoredPlace>, IndexError> {
        let end = if prefix {
            places::prefix_end(key)
        } else {
            None
        };
        let rows: Vec<StoredPlace> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "SELECT p.key, p.name, p.kind, p.osm_type, p.osm_id, p.lat, p.lon, p.weight \
                 FROM osm_place p JOIN osm_dataset d ON d.id = p.dataset AND d.state = 'active' WHERE ",
            );
            match &end {
                Some(end) => {
                    q.push("p.key >= ").push_bind(key);
                    q.push(" AND p.key < ").push_bind(end.as_str());
                }
                None => {
                    q.push("p.key = ").push_bind(key);
                }
            }
            q.push(" ORDER BY p.weight DESC, p.key LIMIT ").push_bind(i64::from(limit));
            q.build_query_as().fetch_all(pool).await?
        });
        Ok(rows)
    }

    /// Writes ways of dataset `id` and the cells they cross, one transaction per chunk.
    pub(crate) async fn insert_ways(&self, id: i64, rows: &[WayRow]) -> Result<(), IndexError> {
        for chunk in rows.chunks(INSERT_ROWS) {
            let cells: Vec<(i64, &WayRow)> = chunk
                .iter()
                .flat_map(|w| w.cells.iter().map(move |c| (*c, w)))
                .collect();
            with_pool!(self, pool => {
                let mut tx = pool.begin().await?;
                let mut q = QueryBuilder::new(
                    "INSERT INTO osm_way (dataset, way_id, class, tags, geom, south, west, north, east) ",
                );
                q.push_values(chunk, |mut b, w| {
                    b.push_bind(id)
                        .push_bind(w.way_id)
                        .push_bind(w.class)
                        .push_bind(w.tags.as_str())
                        .push_bind(w.geom.as_slice())
                        .push_bind(w.bbox.south)
                        .push_bind(w.bbox.west)
                        .push_bind(w.bbox.north)
                        .push_bind(w.bbox.east);
                });
                q.build().execute(&mut *tx).await?;
                for cell_chunk in cells.chunks(INSERT_ROWS * 2) {
                    let mut q = QueryBuilder::new(
                        "INSERT INTO osm_way_cell (dataset, class, cell, way_id, south, west, north, east) ",
                    );
                    q.push_values(cell_chunk, |mut b, (cell, way)| {
                        b.push_bind(id)
                            .push_bind(way.class)
                            .push_bind(*cell)
                            .push_bind(way.way_id)
                            .push_bind(way.bbox.south)
                            .push_bind(way.bbox.west)
                            .push_bind(way.bbox.north)
                            .push_bind(way.bbox.east);
                    });
                    q.build().execute(&mut *tx).await?;
                }
                tx.commit().await?;
            });
        }
        Ok(())
    }

    /// Makes dataset `id` the active one of its name, in one transaction: the older active
    /// dataset of that name and its rows go, the counts and box are set.
    pub(crate) async fn activate(
        &self,
        id: i64,
        name: &str,
        bbox: Bbox,
        counts: (i64, i64, i64),
    ) -> Result<(), IndexError> {
        let (points, ways, ferries) = counts;
        with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut q = QueryBuilder::new("SELECT id FROM osm_dataset WHERE state = 'active' AND name = ");
            q.push_bind(name);
            let old: Vec<(i64,)> = q.build_query_as().fetch_all(&mut *tx).await?;
            for (old_id,) in old {
                delete_dataset(&mut tx, old_id).await?;
            }
            let mut q = QueryBuilder::new("UPDATE osm_dataset SET state = 'active', south = ");
            q.push_bind(bbox.south);
            q.push(", west = ").push_bind(bbox.west);
            q.push(", north = ").push_bind(bbox.north);
            q.push(", east = ").push_bind(bbox.east);
            q.push(", points = ").push_bind(points);
            q.push(", ways = ").push_bind(ways);
            q.push(", ferries = ").push_bind(ferries);
            q.push(" WHERE id = ").push_bind(id);
            q.build().execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// Refreshes the planner's statistics after a bulk load: without them PostgreSQL plans
    /// the cell lookups of a fresh index as if its tables were empty.
    pub(crate) async fn analyze(&self) -> Result<(), IndexError> {
        match self {
            IndexDb::Postgres(pool) => {
                sqlx::query("ANALYZE osm_point, osm_way, osm_way_cell")
                    .execute(pool)
                    .await?;
            }
            IndexDb::Sqlite(pool) => {
                sqlx::query("PRAGMA optimize").execute(pool).await?;
            }
        }
        Ok(())
    }

    /// Points of dataset `id` in `cells` (at most [`BATCH`]), of the given families (all
    /// when empty).
    pub(crate) async fn points_in(
        &self,
        id: i64,
        cells: &[i64],
        families: &[&str],
    ) -> Result<Vec<StoredPoint>, IndexError> {
        if cells.is_empty() {
            return Ok(Vec::new());
        }
        let rows = with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "SELECT osm_type, osm_id, lat, lon, tags FROM osm_point WHERE dataset = ",
            );
            q.push_bind(id);
            push_any_of(&mut q, "cell", cells.iter().copied());
            if !families.is_empty() {
                push_any_of(&mut q, "kind", families.iter().copied());
            }
            q.build_query_as::<StoredPoint>().fetch_all(pool).await?
        });
        Ok(rows)
    }

    /// Ids and boxes of the ways of `class` of dataset `id` crossing any of `cells` (at
    /// most [`BATCH`]); a way may come back from several calls. Light rows: a cell is far
    /// wider than a way search, so most are dropped on their box before any geometry is read.
    pub(crate) async fn way_boxes_in(
        &self,
        id: i64,
        cells: &[i64],
        class: &str,
    ) -> Result<Vec<(i64, Bbox)>, IndexError> {
        if cells.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(i64, f64, f64, f64, f64)> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "SELECT way_id, south, west, north, east FROM osm_way_cell WHERE dataset = ",
            );
            q.push_bind(id);
            q.push(" AND class = ").push_bind(class);
            push_any_of(&mut q, "cell", cells.iter().copied());
            q.build_query_as().fetch_all(pool).await?
        });
        Ok(rows
            .into_iter()
            .map(|(way, south, west, north, east)| {
                (
                    way,
                    Bbox {
                        south,
                        west,
                        north,
                        east,
                    },
                )
            })
            .collect())
    }

    /// Tags and geometry of the ways `ids` (at most [`BATCH`]) of dataset `id`.
    pub(crate) async fn ways_by_id(
        &self,
        id: i64,
        ids: &[i64],
    ) -> Result<Vec<StoredWay>, IndexError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = with_pool!(self, pool => {
            let mut q = QueryBuilder::new("SELECT way_id, tags, geom FROM osm_way WHERE dataset = ");
            q.push_bind(id);
            push_any_of(&mut q, "way_id", ids.iter().copied());
            q.build_query_as::<StoredWay>().fetch_all(pool).await?
        });
        Ok(rows)
    }
}
