-- +goose Up
-- Timestamps are integer microseconds since the Unix epoch (UTC) in every table: one representation on
-- both dialects, exact round trips, and plain integer arithmetic for the statistics' time buckets.

CREATE TABLE controls (
    id          INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids are never reused (cursors, history)
    name        TEXT    NOT NULL,
    enabled     BOOLEAN NOT NULL DEFAULT 0,        -- authoritative; mirrored into data.enabled
    data        TEXT,                              -- JSON ControlData; NULL until data is put
    version     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER,
    -- Filter keys derived from data on every write: each list element JSON-encoded and followed by a
    -- comma, after a leading comma (',"llm","tool",'), so that a substring search for ',"x",' finds
    -- exactly the element x. A NULL scope key means the scope does not restrict (matches any filter).
    tags_key       TEXT NOT NULL DEFAULT '',
    step_types_key TEXT,
    stages_key     TEXT
);
-- A name is unique among live controls only: deleting a control frees its name.
CREATE UNIQUE INDEX controls_live_name ON controls (name) WHERE deleted_at IS NULL;

CREATE TABLE control_versions (
    control_id  INTEGER NOT NULL REFERENCES controls (id),
    version     INTEGER NOT NULL,
    event       TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    enabled     BOOLEAN NOT NULL,
    data        TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (control_id, version)
);

CREATE TABLE agents (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    version     TEXT    NOT NULL DEFAULT '',
    metadata    TEXT    NOT NULL DEFAULT '{}',
    revision    INTEGER NOT NULL,                  -- changes with the agent's effective controls
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE agent_steps (
    agent_id      INTEGER NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    type          TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    position      INTEGER NOT NULL,
    description   TEXT    NOT NULL DEFAULT '',
    input_schema  TEXT,
    output_schema TEXT,
    metadata      TEXT,
    PRIMARY KEY (agent_id, type, name)
);

CREATE TABLE agent_controls (
    agent_id    INTEGER NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    control_id  INTEGER NOT NULL REFERENCES controls (id),
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (agent_id, control_id)
);
CREATE INDEX agent_controls_control ON agent_controls (control_id);

-- One row: bumped by every transaction that changes controls or links, so replicas can poll one value.
CREATE TABLE policy_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    epoch  INTEGER NOT NULL
);
INSERT INTO policy_epoch (id, epoch) VALUES (1, 1);

-- Events are records, not references: no foreign keys, so history survives deleted controls.
CREATE TABLE events (
    id                    INTEGER PRIMARY KEY,
    control_execution_id  TEXT    NOT NULL,
    trace_id              TEXT    NOT NULL DEFAULT '',
    span_id               TEXT    NOT NULL DEFAULT '',
    agent_name            TEXT    NOT NULL,
    control_id            INTEGER NOT NULL,
    control_name          TEXT    NOT NULL,
    check_stage           TEXT    NOT NULL,
    step_type             TEXT    NOT NULL,
    step_name             TEXT    NOT NULL,
    action                TEXT    NOT NULL,
    matched               BOOLEAN NOT NULL,
    confidence            REAL    NOT NULL,
    ts                    INTEGER NOT NULL,
    duration_ms           REAL,
    evaluator_name        TEXT    NOT NULL DEFAULT '',
    selector_path         TEXT    NOT NULL DEFAULT '',
    error_message         TEXT    NOT NULL DEFAULT '',
    source                TEXT    NOT NULL,
    metadata              TEXT
);
-- Per-agent and per-control time ranges (queries, and the edges of statistics; see 00002).
CREATE INDEX events_agent_ts ON events (agent_name, ts);
CREATE INDEX events_agent_control_ts ON events (agent_name, control_id, ts);
CREATE INDEX events_ts ON events (ts);
-- Partial: most events carry no trace id; queries by trace repeat the predicate so the planner uses it.
CREATE INDEX events_trace ON events (trace_id) WHERE trace_id <> '';

-- +goose Down
DROP TABLE events;
DROP TABLE policy_epoch;
DROP TABLE agent_controls;
DROP TABLE agent_steps;
DROP TABLE agents;
DROP TABLE control_versions;
DROP TABLE controls;
