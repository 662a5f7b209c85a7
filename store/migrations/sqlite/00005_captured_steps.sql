-- +goose Up
-- Steps kept for replay against a draft control set (issue 14). Off unless the server is told which
-- agents to capture. Bounded by age and by the sum of step_bytes (oldest out first, by id): the byte
-- count is stored with the row so that the bound needs no JSON length computation at prune time.
CREATE TABLE captured_steps (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_name  TEXT    NOT NULL,
    stage       TEXT    NOT NULL,
    step_type   TEXT    NOT NULL,
    step_name   TEXT    NOT NULL,
    step        TEXT    NOT NULL, -- JSON of the (redacted) step
    step_bytes  INTEGER NOT NULL,
    decision    TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    ts          INTEGER NOT NULL  -- microseconds since the Unix epoch, like every table
);
CREATE INDEX captured_steps_agent_ts ON captured_steps (agent_name, ts);
CREATE INDEX captured_steps_ts ON captured_steps (ts);

-- +goose Down
DROP TABLE captured_steps;
