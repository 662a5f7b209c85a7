-- +goose Up
-- Statistics across every agent (GET /observability/stats without agent_name) read the per-minute
-- aggregates of a range of minutes whatever the agent: without this index that is a scan of the whole
-- table (whose primary key starts with the agent name), which grows with retention, not with the range.
CREATE INDEX event_rollups_minute ON event_rollups (minute);

-- +goose Down
DROP INDEX event_rollups_minute;
