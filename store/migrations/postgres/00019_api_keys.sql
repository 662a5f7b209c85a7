-- +goose Up
-- API keys made at runtime (POST /api/v1/keys, `guard keys`; package apikey): the SHA-256 digest of the
-- secret, never the secret. Revoked keys stay (their names are not reused) for the audit trail's sake.
-- Times are epoch microseconds.
CREATE TABLE api_keys (
    name         TEXT PRIMARY KEY,
    digest       TEXT NOT NULL UNIQUE,
    role         TEXT NOT NULL,
    agents       TEXT NOT NULL DEFAULT '[]',
    created_at   BIGINT NOT NULL,
    created_by   TEXT NOT NULL DEFAULT '',
    rotated_at   BIGINT,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    revoked_by   TEXT NOT NULL DEFAULT '',
    last_used_at BIGINT
);

-- +goose Down
DROP TABLE api_keys;
