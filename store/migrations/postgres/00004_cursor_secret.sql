-- +goose Up
-- Secrets the server creates once per database. cursor_hmac keys the HMAC that authenticates pagination
-- cursors: stored in the database (not in a process), so every replica on one database accepts the
-- cursors the others issued, and a cursor of another database, or a forged one, is refused.
CREATE TABLE server_secrets (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
INSERT INTO server_secrets (name, value) VALUES ('cursor_hmac', replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''));

-- +goose Down
DROP TABLE server_secrets;
