package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestRunAgainstRealServer runs the demo against the real server over a temporary SQLite store, twice
// (the second run finds its controls already there and resets them), and checks what it prints.
func TestRunAgainstRealServer(t *testing.T) {
	t.Setenv(client.EnvAPIKey, "")
	t.Setenv("GUARD_ADMIN_API_KEY", "")
	h, err := server.New(storetest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	want := []string{
		"control demo-deny-ssn      id 1 linked to demo-agent",
		"control demo-steer-sql     id 2 linked to demo-agent",
		"chat: allowed      ok: (model) you said: What is the capital of France?",
		"chat: denied       DENIED by demo-deny-ssn",
		"run_sql: allowed   ok: [ada grace]",
		"run_sql: steered   STEERED by demo-steer-sql: Destructive statements are not run directly. (required: ask the user to confirm; use a soft delete)",
	}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var out bytes.Buffer
		err := run(ctx, []string{"-url", srv.URL}, &out)
		cancel()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out.String())
		}
		if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("run %d printed:\n%s\nwant:\n%s", i+1, out.String(), strings.Join(want, "\n"))
		}
	}
}

func TestRunWithoutServer(t *testing.T) {
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"-url", url}, &out)
	if err == nil || !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("run without a server: %v", err)
	}
	if err := run(ctx, []string{"-bogus"}, &out); err == nil {
		t.Fatal("an unknown flag was accepted")
	}
}
