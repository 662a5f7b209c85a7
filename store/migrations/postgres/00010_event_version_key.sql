-- +goose Up
-- The version of the control that was evaluated and the name of the API key of the request (issue 26): an
-- event says which version decided and whose request it was, so that a change in the audit trail can be
-- matched with the events before and after it. 0 and '' for older events.
ALTER TABLE events ADD COLUMN control_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN key_name TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN key_name;
ALTER TABLE events DROP COLUMN control_version;
