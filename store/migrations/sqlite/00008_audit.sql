-- +goose Up
-- The audit trail (issue 26): one row per control-plane change, with the name of the API key that made it
-- (never the key), the route, and what changed (JSON array of diff lines). Rows are records, not
-- references: no foreign keys, so the history of a deleted control or agent stays.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    ts          INTEGER  NOT NULL, -- microseconds since the Unix epoch, like every table
    key_name    TEXT    NOT NULL,
    method      TEXT    NOT NULL,
    route       TEXT    NOT NULL,
    path        TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    -- The agents the change reached (the agent of an agent route; the agents a control was linked to),
    -- as ',"a","b",' so that one agent is found by substring, as the controls' tag keys are; '' for none.
    agents      TEXT    NOT NULL DEFAULT '',
    control_id  INTEGER NOT NULL DEFAULT 0,
    version     INTEGER NOT NULL DEFAULT 0,
    request_id  TEXT    NOT NULL DEFAULT '',
    changes     TEXT    NOT NULL DEFAULT '[]',
    detail      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_control ON audit_log (control_id, id);
CREATE INDEX audit_log_key ON audit_log (key_name, id);

-- +goose Down
DROP TABLE audit_log;
