package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
	"unicode/utf8"

	guard "github.com/guardrail-control/guard"
)

var _ guard.AgentSDKStore = (*Store)(nil)

// Bounds of what is kept of the headers: they are free text from the client.
const (
	maxSDKName    = 64
	maxSDKVersion = 64
)

// RecordAgentSDK keeps sdk and version as the agent's last seen client library, at at. An agent name that
// is not a valid name is ignored (there is nothing to attach it to); overlong values are cut.
func (s *Store) RecordAgentSDK(ctx context.Context, agent, sdk, version string, at time.Time) error {
	key, err := agentKey(agent)
	if err != nil {
		return nil
	}
	sdk, version = truncateUTF8(clean(sdk), maxSDKName), truncateUTF8(clean(version), maxSDKVersion)
	_, err = s.w.ExecContext(ctx, s.q(`INSERT INTO agent_sdks (agent_name, sdk, sdk_version, seen_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_name) DO UPDATE SET sdk = excluded.sdk, sdk_version = excluded.sdk_version, seen_at = excluded.seen_at`),
		key, sdk, version, at.UnixMicro())
	return mapErr(err)
}

// AgentSDK returns the agent's last seen client library; ok is false when none was recorded.
func (s *Store) AgentSDK(ctx context.Context, agent string) (sdk guard.AgentSDK, ok bool, err error) {
	key, err := agentKey(agent)
	if err != nil {
		return guard.AgentSDK{}, false, nil
	}
	var row struct {
		SDK     string `db:"sdk"`
		Version string `db:"sdk_version"`
		SeenAt  int64  `db:"seen_at"`
	}
	err = s.r.GetContext(ctx, &row, s.q(`SELECT sdk, sdk_version, seen_at FROM agent_sdks WHERE agent_name = ?`), key)
	if errors.Is(err, sql.ErrNoRows) {
		return guard.AgentSDK{}, false, nil
	}
	if err != nil {
		return guard.AgentSDK{}, false, mapErr(err)
	}
	return guard.AgentSDK{SDK: row.SDK, Version: row.Version, SeenAt: toTime(row.SeenAt)}, true, nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
