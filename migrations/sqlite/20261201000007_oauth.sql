-- OAuth 2.1 clients, grants, codes and tokens (see the PostgreSQL twin).
CREATE TABLE oauth_clients (
    client_id     TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('cimd', 'dcr')),
    client_name   TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    fetched_at    TEXT,
    expires_at    TEXT,
    created_at    TEXT NOT NULL,
    last_used_at  TEXT
) STRICT;

CREATE TABLE oauth_grants (
    grant_id     TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    client_id    TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scopes       TEXT NOT NULL,
    resource     TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at   TEXT
) STRICT;
CREATE INDEX oauth_grants_user ON oauth_grants (user_id, client_id);

CREATE TABLE oauth_codes (
    code_sha256    TEXT PRIMARY KEY,
    grant_id       TEXT NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
    client_id      TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    scopes         TEXT NOT NULL,
    resource       TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    used_at        TEXT
) STRICT;

CREATE TABLE oauth_tokens (
    token_sha256 TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id     TEXT NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
    client_id    TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    audience     TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    revoked_at   TEXT,
    used_at      TEXT,
    replaced_by  TEXT
) STRICT;
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
