-- +goose Up
-- The session labels a registered step declares (initAgent "labels", issue 24): a JSON list of strings,
-- NULL when the step declares none.
ALTER TABLE agent_steps ADD COLUMN labels TEXT;

-- +goose Down
ALTER TABLE agent_steps DROP COLUMN labels;
