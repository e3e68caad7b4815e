-- People: browser sessions, magic login links and the audit trail a person can read. Kept in
-- tables, not in the event store: sessions slide and links are spent many times a day, and
-- none of it is a fact of a trip.

-- A session's cookie value is a 256-bit random secret; only its SHA-256 digest is stored,
-- so a leaked database holds no working cookie. `csrf_token` is the synchronizer token the
-- session's pages send back on writes (not a credential on its own).
CREATE TABLE sessions (
    session_id   uuid        PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    token_sha256 text        NOT NULL UNIQUE,
    csrf_token   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    user_agent   text        NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user ON sessions (user_id, created_at DESC);

-- A login link: the digest of its 256-bit token, for the address it was sent to. Spent by a
-- conditional UPDATE (used_at IS NULL AND expires_at > now), so it works once on any replica.
CREATE TABLE magic_links (
    token_sha256 text        PRIMARY KEY,
    email        text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX magic_links_expiry ON magic_links (expires_at);

-- What happened to a person's credentials, for that person to read. PII-free: no address,
-- no token, no IP; `detail` names a session or token id, a label, a user agent family.
-- Not tied to users by a foreign key, so a deletion's own row outlives the account.
CREATE TABLE auth_audit (
    id      uuid        PRIMARY KEY,
    user_id uuid        NOT NULL,
    at      timestamptz NOT NULL DEFAULT now(),
    kind    text        NOT NULL,
    detail  text        NOT NULL DEFAULT ''
);
CREATE INDEX auth_audit_user ON auth_audit (user_id, at DESC, id);
