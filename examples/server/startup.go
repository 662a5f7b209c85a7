package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// describeDatabase names the database for the logs without its credentials: the kind ("postgres" or
// "sqlite") and where it is (host:port/dbname, or the SQLite file path). The user, the password and the
// query (which may hold sslpassword and the like) are left out.
func describeDatabase(raw string) (kind, where string) {
	lower := strings.ToLower(raw)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "postgres", "(unparsable URL)"
		}
		return "postgres", u.Host + u.EscapedPath()
	}
	path := raw
	if strings.HasPrefix(lower, "sqlite://") {
		path = raw[len("sqlite://"):]
	}
	path = strings.TrimPrefix(path, "file:")
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	return "sqlite", path
}

// logStartup writes the one start-up line: what runs, where, on which database (never its password),
// with which switches, and how much policy it holds. Then, when the server listens beyond loopback with
// authentication off, a warning that cannot be missed: on the log and as plain text on stderr.
func logStartup(ctx context.Context, logger *zap.Logger, stderr io.Writer, cfg Config, st guard.Store, addr string) {
	b := currentBuild()
	kind, where := describeDatabase(cfg.DatabaseURL)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	controls, agents := -1, -1 // -1: the count failed (the line is still written)
	if _, page, err := st.ListControls(cctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1}); err == nil {
		controls = page.Total
	}
	if _, page, err := st.ListAgents(cctx, guard.AgentFilter{}, guard.PageRequest{Limit: 1}); err == nil {
		agents = page.Total
	}
	logger.Info("guard started",
		zap.String("version", b.Version), zap.String("commit", b.ShortCommit()), zap.String("go", b.GoVersion),
		zap.String("addr", addr), zap.String("database", kind), zap.String("database_at", where),
		zap.Bool("auth", cfg.AuthEnabled), zap.Bool("observability", cfg.ObservabilityEnabled),
		zap.Bool("access_log", cfg.AccessLog), zap.Bool("pprof", cfg.Pprof),
		zap.Int("controls", controls), zap.Int("agents", agents))
	if cfg.ExposedWithoutAuth() {
		msg := fmt.Sprintf("authentication is OFF and the server listens on %s, reachable from other machines: "+
			"anyone who can connect can read and change every control. Set GUARD_API_KEY_ENABLED=true with "+
			"GUARD_ADMIN_API_KEYS/GUARD_API_KEYS, or HOST=127.0.0.1", addr)
		logger.Warn(msg)
		fmt.Fprintln(stderr, "WARNING: "+msg)
	}
}
