-- +goose Up
-- The session of the step an event was recorded for (context.session_id, issue 24): the session view
-- lists a session's events in order. Empty for steps without a session; the partial index holds only the
-- others.
ALTER TABLE events ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX events_session ON events (agent_name, session_id, ts) WHERE session_id <> '';

-- +goose Down
DROP INDEX events_session;
ALTER TABLE events DROP COLUMN session_id;
