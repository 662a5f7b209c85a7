-- +goose Up
-- The version of the control that was evaluated (issue 26): an event says which version decided, so that
-- a change in the audit trail can be matched with the events before and after it. 0 for older events.
ALTER TABLE events ADD COLUMN control_version INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE events DROP COLUMN control_version;
