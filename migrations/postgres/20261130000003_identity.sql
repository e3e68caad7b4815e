-- Users and their personal access tokens. Tokens are stored as SHA-256 digests only: they
-- are 256-bit random secrets, so a fast digest is enough and the clear token is never kept.
CREATE TABLE users (
    user_id    uuid        PRIMARY KEY,
    email      text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE access_tokens (
    token_id     uuid        PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    token_sha256 text        NOT NULL UNIQUE,
    scopes       text        NOT NULL,
    label        text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
