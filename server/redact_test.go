package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestRedactionIsAnsweredAndNeverStored: POST /evaluation answers the redacted output of a redacting
// control, and neither the captured step nor the events (enforced and shadow) hold the secret.
func TestRedactionIsAnsweredAndNeverStored(t *testing.T) {
	const token = "ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT"
	st := storetest.SQLite(t)
	obs := observability.NewRecorder(st, observability.RecorderConfig{})
	t.Cleanup(func() { _ = obs.Close(context.Background()) })
	rec, err := capture.New(st, capture.Config{Agents: []string{"bot"}, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	ts := newTSOn(t, st, WithCapture(rec), WithObservability(true, obs))
	ts.initAgent("bot")
	secrets := func(mode string) map[string]any {
		return map[string]any{"mode": mode,
			"condition": map[string]any{"selector": map[string]any{"path": "output.text"}, "evaluator": map[string]any{"name": "secrets", "config": map[string]any{}}},
			"action":    map[string]any{"decision": "warn", "redact": map[string]any{}}}
	}
	ts.link("bot", ts.createControl("hide-creds", secrets("enforce")))
	ts.link("bot", ts.createControl("hide-creds-shadow", secrets("shadow")))

	tests := []struct {
		name, stage  string
		output       map[string]any
		wantRedacted any
	}{
		{"post with a token", "post", map[string]any{"text": "push with " + token, "n": 1},
			map[string]any{"output": map[string]any{"text": "push with [REDACTED:github-pat]", "n": float64(1)}}},
		{"post without a token", "post", map[string]any{"text": "nothing to hide"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": tc.stage,
				"step": map[string]any{"type": "llm", "name": "chat", "input": "x", "output": tc.output}})
			if decision(res) != "allow" {
				t.Fatalf("decision %s", decision(res))
			}
			got, _ := json.Marshal(res["redacted"])
			want, _ := json.Marshal(tc.wantRedacted)
			if string(got) != string(want) {
				t.Errorf("redacted %s, want %s", got, want)
			}
		})
	}

	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := obs.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	steps, _, err := st.CapturedSteps(context.Background(), guard.CaptureQuery{Limit: 10})
	if err != nil || len(steps) != 2 {
		t.Fatalf("%d captured steps (%v), want 2", len(steps), err)
	}
	found := false
	for _, s := range steps {
		if strings.Contains(string(s.Step), "ghp_") {
			t.Errorf("a captured step holds the token: %s", s.Step)
		}
		found = found || strings.Contains(string(s.Step), "push with [REDACTED:github-pat]")
	}
	if !found {
		t.Errorf("no captured step holds the redacted output: %+v", steps)
	}
	for _, shadow := range []bool{false, true} {
		page := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"shadow": shadow})
		raw, _ := json.Marshal(page)
		if page["total"] != float64(2) || strings.Contains(string(raw), "ghp_") {
			t.Errorf("events (shadow %v): %s", shadow, raw)
		}
	}
}
