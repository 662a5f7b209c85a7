-- +goose Up
-- An event is identified by its control_execution_id: the server's recorder and a client (the reference
-- SDKs post their own copy of what /evaluation evaluated), or a client retrying a batch, may send the same
-- execution twice. The unique index lets InsertEvents skip a known id (ON CONFLICT DO NOTHING) and add
-- only the events it stored to the per-minute aggregates.
--
-- Databases written before this migration may hold such pairs already: the first stored copy is kept and
-- the aggregates are rebuilt from the remaining events, so statistics stop counting them twice.
DELETE FROM events WHERE id NOT IN (SELECT MIN(id) FROM events GROUP BY control_execution_id);
CREATE UNIQUE INDEX events_execution_id ON events (control_execution_id);

DELETE FROM event_rollups;
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
DROP INDEX events_execution_id;
