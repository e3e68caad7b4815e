-- Inline read models, written in the append transaction (read-your-writes) and rebuildable
-- from the log with `etappe projections rebuild`. `doc` is the whole trip view; the other
-- columns exist for ownership checks, filtering and ordering.
CREATE TABLE trip_views (
    trip_id        uuid        PRIMARY KEY,
    owner_id       uuid        NOT NULL,
    title          text,
    start_date     date,
    end_date       date,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    stream_version bigint      NOT NULL,
    doc            jsonb       NOT NULL
);

CREATE INDEX trip_views_owner ON trip_views (owner_id, created_at DESC, trip_id);
