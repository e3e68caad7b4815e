-- Leases that expire (the dispatcher's): a holder renews its row well within its lifetime;
-- once it expired another replica takes it over, whatever the old holder's connection does
-- (a paused process keeps its connection, and with it any session lock, for minutes).
CREATE TABLE leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
