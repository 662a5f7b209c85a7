-- +goose Up
-- Per-minute aggregates of the events, kept in step with them by InsertEvents (same transaction), so that
-- statistics over long ranges read at most one row per agent, control and minute instead of every event.
-- Only the partial minutes at the edges of a range are read from the events themselves.
CREATE TABLE event_rollups (
    agent_name      TEXT    NOT NULL,
    minute          INTEGER NOT NULL, -- ts / 60,000,000: minutes since the Unix epoch
    control_id      INTEGER NOT NULL,
    control_name    TEXT    NOT NULL,
    executions      INTEGER NOT NULL,
    matches         INTEGER NOT NULL,
    non_matches     INTEGER NOT NULL,
    errors          INTEGER NOT NULL,
    allows          INTEGER NOT NULL,
    denies          INTEGER NOT NULL,
    steers          INTEGER NOT NULL,
    warns           INTEGER NOT NULL,
    logs            INTEGER NOT NULL,
    confidence_sum  REAL    NOT NULL,
    duration_sum    REAL    NOT NULL,
    durations       INTEGER NOT NULL,
    PRIMARY KEY (agent_name, minute, control_id)
) WITHOUT ROWID;

INSERT INTO event_rollups
SELECT agent_name, ts / 60000000, control_id, MAX(control_name), COUNT(*),
    SUM(CASE WHEN matched THEN 1 ELSE 0 END),
    SUM(CASE WHEN NOT matched AND error_message = '' THEN 1 ELSE 0 END),
    SUM(CASE WHEN error_message <> '' THEN 1 ELSE 0 END),
    SUM(CASE WHEN matched AND action = 'allow' THEN 1 ELSE 0 END),
    SUM(CASE WHEN matched AND action = 'deny' THEN 1 ELSE 0 END),
    SUM(CASE WHEN matched AND action = 'steer' THEN 1 ELSE 0 END),
    SUM(CASE WHEN matched AND action = 'warn' THEN 1 ELSE 0 END),
    SUM(CASE WHEN matched AND action IN ('log', 'observe') THEN 1 ELSE 0 END),
    SUM(confidence), COALESCE(SUM(duration_ms), 0), COUNT(duration_ms)
FROM events GROUP BY agent_name, ts / 60000000, control_id;

-- +goose Down
DROP TABLE event_rollups;
