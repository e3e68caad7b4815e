-- SQLite twin of the PostgreSQL event store. Appends run in BEGIN IMMEDIATE (one writer at a
-- time), so global_position order is commit order and tx_id is not needed: it is kept at 0
-- so that cursors have the same shape on both backends.
CREATE TABLE streams (
    stream_id   TEXT    PRIMARY KEY,
    stream_type TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 0)
) STRICT;

CREATE TABLE events (
    global_position INTEGER PRIMARY KEY AUTOINCREMENT,
    tx_id           INTEGER NOT NULL DEFAULT 0,
    stream_id       TEXT    NOT NULL,
    version         INTEGER NOT NULL CHECK (version >= 1),
    event_id        TEXT    NOT NULL UNIQUE,
    event_type      TEXT    NOT NULL,
    schema_version  INTEGER NOT NULL DEFAULT 1,
    data            TEXT    NOT NULL,
    metadata        TEXT    NOT NULL DEFAULT '{}',
    recorded_at     TEXT    NOT NULL,
    UNIQUE (stream_id, version)
) STRICT;

CREATE TABLE subscriptions (
    name          TEXT    PRIMARY KEY,
    last_tx_id    INTEGER NOT NULL DEFAULT 0,
    last_position INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT    NOT NULL
) STRICT;
