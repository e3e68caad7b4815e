//! The embedded default: the event store in one SQLite file under the data directory.
//!
//! Appends run in `BEGIN IMMEDIATE`, so one writer at a time holds the database: the version
//! check and the insert cannot interleave, and `global_position` order is commit order, which
//! is all a subscriber needs. WAL mode lets readers go on while a writer works, and
//! `synchronous = FULL` makes an acknowledged append survive a power cut. This file is the
//! SQLite dialect; the flows are in `sql_store`.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

mod dialect;
mod rows;
mod work;

use crate::StoreError;

/// The SQLite adapter.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// The leases held on this store. SQLite serves one process, so a lease is a name in
    /// this set; it belongs to the store (and its clones), not to the process, so two stores
    /// in one process never share a lease.
    leases: Arc<Mutex<HashSet<String>>>,
}

const TS_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

/// Fixed-width UTC timestamps, so that text order is time order.
pub(super) fn ts(t: DateTime<Utc>) -> String {
    t.format(TS_FORMAT).to_string()
}

pub(super) fn parse_ts(s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt(format!("timestamp {s:?}: {e}")))
}

/// The database holds every user's trips and tokens' digests: its directory is created
/// 0700 and the file 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm` files the
/// database file's mode), so there is no moment at which another user could read them.
fn private_files(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    drop(options.open(path)?);
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let file = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
        if file.exists() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and applies the migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        private_files(path).map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(30))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        let store = Self {
            pool,
            leases: Arc::default(),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Applies the embedded SQLite migrations.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::migrate!("../migrations/sqlite")
            .run(&self.pool)
            .await?;
        Ok(())
    }

    /// The connection pool, for the tables that are not event-sourced (identity).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}
