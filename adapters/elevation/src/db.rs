//! The tiles' table on either backend (see `migrations/*/20261203000009_elevation_tiles.sql`):
//! one [`ElevationDb`] holding a SQLite or a PostgreSQL pool, and every statement the import
//! and the look-ups run, written once with [`sqlx::QueryBuilder`] so each backend gets its
//! own placeholders.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgPool, QueryBuilder, SqlitePool};

use crate::error::ElevationError;
use crate::hgt::{Corner, Tile, tile_bytes};

/// The database the tiles live in: the same one as the rest of Etappe.
#[derive(Debug, Clone)]
pub enum ElevationDb {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to whichever pool `$db` holds; the body is compiled once
/// per backend, so the same code speaks both.
macro_rules! with_pool {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            ElevationDb::Sqlite($pool) => $body,
            ElevationDb::Postgres($pool) => $body,
        }
    };
}

/// One stored tile, without its samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TileInfo {
    /// "N47E009".
    pub name: String,
    /// The south-west corner, integer degrees.
    pub south: i32,
    pub west: i32,
    /// Samples per side: 1201 (3 arc-seconds) or 3601 (1 arc-second).
    pub samples: i32,
    /// The file's size.
    pub bytes: u64,
    pub imported_at: DateTime<Utc>,
}

type TileRow = (String, i32, i32, i32, DateTime<Utc>);

fn info_from((name, south, west, samples, imported_at): TileRow) -> TileInfo {
    let bytes = usize::try_from(samples)
        .ok()
        .and_then(|n| u64::try_from(tile_bytes(n)).ok())
        .unwrap_or(0);
    TileInfo {
        name,
        south,
        west,
        samples,
        bytes,
        imported_at,
    }
}

impl ElevationDb {
    /// Every stored tile, south to north, west to east.
    pub async fn tiles(&self) -> Result<Vec<TileInfo>, ElevationError> {
        let rows: Vec<TileRow> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "SELECT name, south, west, samples, imported_at FROM elevation_tiles \
                 ORDER BY south, west",
            );
            q.build_query_as().fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(info_from).collect())
    }

    /// Whether any tile is stored.
    pub async fn any_tile(&self) -> Result<bool, ElevationError> {
        let rows: Vec<(String,)> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new("SELECT name FROM elevation_tiles LIMIT 1");
            q.build_query_as().fetch_all(pool).await?
        });
        Ok(!rows.is_empty())
    }

    /// Stores `tile`, replacing the stored one of the same name.
    pub(crate) async fn upsert(
        &self,
        tile: &Tile,
        now: DateTime<Utc>,
    ) -> Result<(), ElevationError> {
        let corner = tile.corner();
        let samples = i32::try_from(tile.samples())
            .map_err(|_| ElevationError::BadRow(format!("{} samples", tile.samples())))?;
        let name = corner.name();
        with_pool!(self, pool => {
            let mut q = QueryBuilder::new(
                "INSERT INTO elevation_tiles (name, south, west, samples, data, imported_at) VALUES (",
            );
            let mut v = q.separated(", ");
            v.push_bind(name.as_str());
            v.push_bind(corner.south);
            v.push_bind(corner.west);
            v.push_bind(samples);
            v.push_bind(tile.data());
            v.push_bind(now);
            q.push(
                ") ON CONFLICT (name) DO UPDATE SET south = excluded.south, west = excluded.west, \
                 samples = excluded.samples, data = excluded.data, imported_at = excluded.imported_at",
            );
            q.build().execute(pool).await?;
        });
        Ok(())
    }

    /// The tile at `corner`, if stored; a row that is no tile is an error, never a guess.
    pub(crate) async fn tile(&self, corner: Corner) -> Result<Option<Tile>, ElevationError> {
        let name = corner.name();
        let row: Option<(i32, i32, Vec<u8>)> = with_pool!(self, pool => {
            let mut q = QueryBuilder::new("SELECT south, west, data FROM elevation_tiles WHERE name = ");
            q.push_bind(name.as_str());
            q.build_query_as().fetch_optional(pool).await?
        });
        let Some((south, west, data)) = row else {
            return Ok(None);
        };
        if (south, west) != (corner.south, corner.west) {
            return Err(ElevationError::BadRow(format!(
                "tile {name} is stored with corner {south},{west}"
            )));
        }
        Tile::from_parts(corner, data, &name)
            .map(Some)
            .map_err(|error| ElevationError::BadRow(error.to_string()))
    }
}
