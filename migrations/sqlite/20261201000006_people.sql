-- People: sessions, magic login links and the audit trail (see the PostgreSQL twin).
-- Times are RFC 3339 UTC text with a fixed width, so they compare as text.
CREATE TABLE sessions (
    session_id   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    token_sha256 TEXT NOT NULL UNIQUE,
    csrf_token   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    revoked_at   TEXT,
    user_agent   TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id, created_at DESC);

CREATE TABLE magic_links (
    token_sha256 TEXT PRIMARY KEY,
    email        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    used_at      TEXT
) STRICT;
CREATE INDEX magic_links_expiry ON magic_links (expires_at);

CREATE TABLE auth_audit (
    id      TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    at      TEXT NOT NULL,
    kind    TEXT NOT NULL,
    detail  TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX auth_audit_user ON auth_audit (user_id, at DESC, id);
