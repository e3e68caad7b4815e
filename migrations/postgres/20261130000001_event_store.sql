-- The event store: streams with their current version, the append-only event log, and the
-- checkpoints of subscribers (projections rebuilt from the log, the job dispatcher).
-- Ordering for subscribers is (tx_id, global_position) below the xid8 snapshot fence: a
-- position alone can commit late and would be skipped (see README, "Event store").
CREATE TABLE streams (
    stream_id   text   PRIMARY KEY,
    stream_type text   NOT NULL,
    version     bigint NOT NULL CHECK (version >= 0)
);

CREATE TABLE events (
    global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx_id           xid8        NOT NULL DEFAULT pg_current_xact_id(),
    stream_id       text        NOT NULL,
    version         bigint      NOT NULL CHECK (version >= 1),
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    schema_version  integer     NOT NULL DEFAULT 1,
    data            jsonb       NOT NULL,
    metadata        jsonb       NOT NULL DEFAULT '{}',
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, version)
);

CREATE INDEX events_fence ON events (tx_id, global_position);

CREATE TABLE subscriptions (
    name          text        PRIMARY KEY,
    last_tx_id    xid8        NOT NULL DEFAULT '0',
    last_position bigint      NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
