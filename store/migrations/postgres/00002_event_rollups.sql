-- +goose Up
-- Per-minute aggregates of the events, kept in step with them by InsertEvents (same transaction), so that
-- statistics over long ranges read at most one row per agent, control and minute instead of every event.
-- Only the partial minutes at the edges of a range are read from the events themselves.
CREATE TABLE event_rollups (
    agent_name      TEXT    NOT NULL,
    minute          BIGINT  NOT NULL, -- ts / 60,000,000: minutes since the Unix epoch
    control_id      BIGINT  NOT NULL,
    control_name    TEXT    NOT NULL,
    executions      BIGINT  NOT NULL,
    matches         BIGINT  NOT NULL,
    non_matches     BIGINT  NOT NULL,
    errors          BIGINT  NOT NULL,
    allows          BIGINT  NOT NULL,
    denies          BIGINT  NOT NULL,
    steers          BIGINT  NOT NULL,
    warns           BIGINT  NOT NULL,
    logs            BIGINT  NOT NULL,
    confidence_sum  DOUBLE PRECISION NOT NULL,
    duration_sum    DOUBLE PRECISION NOT NULL,
    durations       BIGINT  NOT NULL,
    PRIMARY KEY (agent_name, minute, control_id)
);

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
