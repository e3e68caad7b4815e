-- What the worker fleet needs besides events: blobs (uploaded GPX files, the parsed track of
-- each pacing generation) and worker heartbeats (readiness counts live workers).
CREATE TABLE blobs (
    key        text        PRIMARY KEY,
    data       bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE worker_heartbeats (
    worker_id  text        PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now()
);
