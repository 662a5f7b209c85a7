-- +goose Up
-- Issue 32: a step that several approval controls refuse has one request covering them all, decided once,
-- whose grant lets them all through (docs/approvals.md). control_id and control_version stay the control
-- that decided (the first in evaluation order); further_controls is the JSON list of the others (id,
-- version, name, message, approvers; '[]' for a request of one control), control_set their "id:version"
-- list, in that order, '' for a request of one control. One pending request per step and set of controls:
-- the partial unique index takes control_set in.
ALTER TABLE approvals ADD COLUMN further_controls TEXT NOT NULL DEFAULT '[]';
ALTER TABLE approvals ADD COLUMN control_set TEXT NOT NULL DEFAULT '';
DROP INDEX approvals_pending_step;
CREATE UNIQUE INDEX approvals_pending_step ON approvals
    (agent_name, control_id, control_version, control_set, step_type, step_name, stage, payload_hash) WHERE status = 'pending';

-- +goose Down
-- Requests of several controls that are pending become expired: the index without control_set could
-- hold two of one step.
UPDATE approvals SET status = 'expired' WHERE status = 'pending' AND control_set <> '';
DROP INDEX approvals_pending_step;
CREATE UNIQUE INDEX approvals_pending_step ON approvals
    (agent_name, control_id, control_version, step_type, step_name, stage, payload_hash) WHERE status = 'pending';
ALTER TABLE approvals DROP COLUMN control_set;
ALTER TABLE approvals DROP COLUMN further_controls;
