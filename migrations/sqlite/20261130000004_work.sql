-- Blobs and worker heartbeats (see the PostgreSQL twin).
CREATE TABLE blobs (
    key        TEXT PRIMARY KEY,
    data       BLOB NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE worker_heartbeats (
    worker_id  TEXT    PRIMARY KEY,
    started_at TEXT    NOT NULL,
    last_seen  INTEGER NOT NULL
) STRICT;
