-- Inline read models (see the PostgreSQL twin).
CREATE TABLE trip_views (
    trip_id        TEXT    PRIMARY KEY,
    owner_id       TEXT    NOT NULL,
    title          TEXT,
    start_date     TEXT,
    end_date       TEXT,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    stream_version INTEGER NOT NULL,
    doc            TEXT    NOT NULL
) STRICT;

CREATE INDEX trip_views_owner ON trip_views (owner_id, created_at DESC, trip_id);
