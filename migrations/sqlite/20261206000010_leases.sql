-- The twin of PostgreSQL's expiring leases. SQLite serves one process, whose leases are held
-- in memory (`events/src/sqlite/work.rs`); the table keeps the two schemas alike.
CREATE TABLE leases (
    name       TEXT    PRIMARY KEY,
    holder     TEXT    NOT NULL,
    expires_at TEXT    NOT NULL
) STRICT;
