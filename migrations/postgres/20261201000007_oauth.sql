-- OAuth 2.1: Etappe is the authorization server for its own `/mcp` resource. Clients are
-- public (no secret): registered dynamically (RFC 7591, `dcr`) or named by the URL of their
-- metadata document (`cimd`, fetched and cached). Codes and tokens are 256-bit random values
-- stored as SHA-256 digests only. JSON columns are text holding JSON, as on SQLite, so both
-- backends bind them alike.
CREATE TABLE oauth_clients (
    client_id     text        PRIMARY KEY,
    kind          text        NOT NULL CHECK (kind IN ('cimd', 'dcr')),
    client_name   text        NOT NULL,
    redirect_uris text        NOT NULL,
    metadata      text        NOT NULL,
    -- CIMD: when the document was fetched and until when the copy may be used.
    fetched_at    timestamptz,
    expires_at    timestamptz,
    created_at    timestamptz NOT NULL,
    last_used_at  timestamptz
);

-- What a person allowed a client: one live grant per (user, client); every code and token
-- belongs to one, and revoking it ends them all.
CREATE TABLE oauth_grants (
    grant_id     uuid        PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    client_id    text        NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scopes       text        NOT NULL,
    resource     text        NOT NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id, client_id);

CREATE TABLE oauth_codes (
    code_sha256    text        PRIMARY KEY,
    grant_id       uuid        NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
    client_id      text        NOT NULL,
    user_id        uuid        NOT NULL,
    redirect_uri   text        NOT NULL,
    code_challenge text        NOT NULL,
    scopes         text        NOT NULL,
    resource       text        NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);

CREATE TABLE oauth_tokens (
    token_sha256 text        PRIMARY KEY,
    kind         text        NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id     uuid        NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
    client_id    text        NOT NULL,
    user_id      uuid        NOT NULL,
    scopes       text        NOT NULL,
    audience     text        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    used_at      timestamptz,
    replaced_by  text
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
