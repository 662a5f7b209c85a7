-- +goose Up
-- The reference SDKs name themselves in X-Agent-Control-SDK and X-Agent-Control-SDK-Version: the last
-- pair seen for an agent (at registration and on its controls' refresh), and when, shown on the agent page.
-- Keyed by the normalised agent name, like the events: a record, not a link.
CREATE TABLE agent_sdks (
    agent_name  TEXT    PRIMARY KEY,
    sdk         TEXT    NOT NULL,
    sdk_version TEXT    NOT NULL,
    seen_at     INTEGER NOT NULL
);

-- +goose Down
DROP TABLE agent_sdks;
