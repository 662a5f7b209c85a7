-- +goose Up
-- Issue 25: one pending request per step. Two replicas refusing the same step at the same moment each looked
-- for a pending request, found none and inserted one; the partial unique index below makes the second insert
-- a conflict, and OpenApproval returns the first request instead (store/approvals.go). A pending request
-- past its expiry is closed (status 'expired') before a new one is opened for its step, so that it leaves
-- the index. decided_via says how a decision was made when the deciding key said so ('mcp_elicitation':
-- the user accepted or declined in the MCP client, through guard mcp; '' for the API, the CLI, the
-- dashboard).
--
-- Requests opened twice before this migration: the newest of each step stays pending, the others are
-- closed as expired at the time of the migration.
UPDATE approvals SET status = 'expired'
WHERE status = 'pending' AND EXISTS (
    SELECT 1 FROM approvals AS newer
    WHERE newer.status = 'pending' AND newer.agent_name = approvals.agent_name AND newer.control_id = approvals.control_id
      AND newer.control_version = approvals.control_version AND newer.step_type = approvals.step_type
      AND newer.step_name = approvals.step_name AND newer.stage = approvals.stage
      AND newer.payload_hash = approvals.payload_hash
      AND (newer.created_at > approvals.created_at OR (newer.created_at = approvals.created_at AND newer.id > approvals.id)));
CREATE UNIQUE INDEX approvals_pending_step ON approvals
    (agent_name, control_id, control_version, step_type, step_name, stage, payload_hash) WHERE status = 'pending';
ALTER TABLE approvals ADD COLUMN decided_via TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE approvals DROP COLUMN decided_via;
DROP INDEX approvals_pending_step;
UPDATE approvals SET status = 'pending' WHERE status = 'expired';
