-- +goose Up
-- Approval requests (issue 25): a step refused by a control with action.approval, waiting for a person,
-- then the decision and the use of its grant. Times are microseconds since the Unix epoch, like every
-- table; a pending request past expires_at reads as expired. used_at is set once, by
-- UPDATE ... WHERE used_at IS NULL: of two replicas consuming one grant, one updates the row.
CREATE TABLE approvals (
    id                TEXT    PRIMARY KEY,
    agent_name        TEXT    NOT NULL,
    control_id        INTEGER  NOT NULL,
    control_version   INTEGER NOT NULL,
    control_name      TEXT    NOT NULL,
    step_type         TEXT    NOT NULL,
    step_name         TEXT    NOT NULL,
    stage             TEXT    NOT NULL,
    payload_hash      TEXT    NOT NULL,
    step              TEXT    NOT NULL, -- JSON of the step, redacted as captured steps are
    message           TEXT    NOT NULL,
    approvers         TEXT    NOT NULL, -- JSON list
    status            TEXT    NOT NULL, -- pending, approved, rejected
    ttl_seconds       INTEGER NOT NULL,
    created_at        INTEGER  NOT NULL,
    expires_at        INTEGER  NOT NULL,
    decided_at        INTEGER,
    decided_by        TEXT    NOT NULL DEFAULT '',
    comment           TEXT    NOT NULL DEFAULT '',
    grant_expires_at  INTEGER,
    used_at           INTEGER,
    used_execution_id TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approvals_status_created ON approvals (status, created_at);
CREATE INDEX approvals_binding ON approvals (agent_name, control_id, payload_hash);
-- approval_hmac keys the MAC of grants, kept like cursor_hmac (00004): in the database, so every replica
-- verifies the grants the others signed and a grant of another database is refused.
INSERT INTO server_secrets (name, value) VALUES ('approval_hmac', lower(hex(randomblob(32))));

-- +goose Down
DELETE FROM server_secrets WHERE name = 'approval_hmac';
DROP TABLE approvals;
