package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestDescribeDatabase(t *testing.T) {
	for _, tc := range []struct{ url, kind, where string }{
		{"postgres://guard:hunter2@db.internal:5432/guard?sslmode=require&sslpassword=x", "postgres", "db.internal:5432/guard"},
		{"postgresql://db/guard", "postgres", "db/guard"},
		{"guard.db", "sqlite", "guard.db"},
		{"sqlite:///var/lib/guard/guard.db", "sqlite", "/var/lib/guard/guard.db"},
		{"file:/data/g.db?cache=private", "sqlite", "/data/g.db"},
	} {
		kind, where := describeDatabase(tc.url)
		if kind != tc.kind || where != tc.where || strings.Contains(where, "hunter2") {
			t.Errorf("%s: %s %s, want %s %s", tc.url, kind, where, tc.kind, tc.where)
		}
	}
}

func TestRedact(t *testing.T) {
	vars := env(map[string]string{"DATABASE_URL": "postgres://u:p%40ss-word@h/db", "GUARD_ADMIN_API_KEYS": "adm-key-1, adm-key-2",
		"DB_URL": "postgres://u:other-pw@h:bad/db"})
	base := errors.New("boom")
	err := redact(errors.Join(base, errors.New("p@ss-word p%40ss-word adm-key-2 other-pw")), vars)
	if msg := err.Error(); strings.Contains(msg, "ss-word") || strings.Contains(msg, "adm-key") || strings.Contains(msg, "other-pw") {
		t.Fatalf("not redacted: %q", msg)
	}
	if !errors.Is(err, base) {
		t.Fatal("the redacted error does not unwrap")
	}
	if plain := errors.New("nothing secret"); redact(plain, vars) != plain {
		t.Fatal("an error without secrets was rewrapped")
	}
}

// TestStartupLineCounts: the start-up line counts the controls and the agents the database holds (the
// end-to-end test starts on an empty database, where a constant 0 would pass).
func TestStartupLineCounts(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	data, err := guard.ParseControlData([]byte(`{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "x"}}}, "action": {"decision": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		if _, err := st.CreateControl(ctx, name, &data); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a1", "a2"} {
		if _, _, err := st.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	core, logs := observer.New(zapcore.InfoLevel)
	logStartup(ctx, zap.New(core), io.Discard, Config{DatabaseURL: "sqlite:///data/guard.db", Host: "127.0.0.1", AuthEnabled: true},
		st, "127.0.0.1:8000")
	lines := logs.FilterMessage("guard started").AllUntimed()
	if len(lines) != 1 {
		t.Fatalf("%d start-up lines, want 1", len(lines))
	}
	f := lines[0].ContextMap()
	if f["controls"] != int64(3) || f["agents"] != int64(2) || f["database"] != "sqlite" || f["database_at"] != "/data/guard.db" ||
		f["auth"] != true || f["addr"] != "127.0.0.1:8000" || f["version"] != version {
		t.Fatalf("start-up line: %v", f)
	}
}
