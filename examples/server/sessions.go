package main

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/sessionredis"
)

// openSessionStore opens the store of session state: in memory unless GUARD_SESSION_STORE names a Redis,
// which must answer at start (a replica that cannot share sessions must not serve: its session controls
// would deny every step).
func openSessionStore(ctx context.Context, cfg *Config, logger *zap.Logger) (guard.SessionStore, error) {
	if cfg.SessionStore == "" {
		return guard.NewMemorySessionStore(cfg.SessionTTL, 0), nil
	}
	st, err := sessionredis.Open(ctx, cfg.SessionStore, sessionredis.Options{Prefix: cfg.SessionPrefix, TTL: cfg.SessionTTL})
	if err != nil {
		return nil, fmt.Errorf("GUARD_SESSION_STORE: %w", err)
	}
	logger.Info("session state is shared in Redis", zap.String("prefix", cfg.SessionPrefix))
	return st, nil
}
