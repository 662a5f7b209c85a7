-- +goose Up
-- Events of shadow controls (data.mode shadow): evaluated and recorded, never part of the decision. They
-- are kept out of the per-minute aggregates (statistics of real decisions) and read for the shadow
-- section of statistics over the partial index, which is empty while no control is in shadow.
ALTER TABLE events ADD COLUMN shadow BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX events_shadow ON events (agent_name, ts) WHERE shadow;

-- +goose Down
DROP INDEX events_shadow;
ALTER TABLE events DROP COLUMN shadow;
