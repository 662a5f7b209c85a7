package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvaluationDeadlineE2E: against the binary, 70 controls whose look-around pattern backtracks for
// its whole 1 s timeout (70 s one after another: past the 60 s write timeout, which dropped the
// connection with no answer) get a complete 200 within EVALUATION_TIMEOUT_MS, every control an evaluator
// error that fails closed.
func TestEvaluationDeadlineE2E(t *testing.T) {
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db"), "EVALUATION_TIMEOUT_MS": "500"},
		"serve", "--migrate")
	p.call(http.StatusOK, "POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": "slow-agent"}, "steps": []any{map[string]any{"type": "llm", "name": "chat"}}})
	const n = 70
	for i := range n {
		m := p.call(http.StatusOK, "PUT", "/api/v1/controls", map[string]any{"name": fmt.Sprintf("slow-%d", i), "data": map[string]any{
			"condition": map[string]any{"selector": map[string]any{"path": "input"},
				"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": `^(?=(a+)+$)`}}},
			"action": map[string]any{"decision": "deny"}}})
		p.call(http.StatusOK, "POST", fmt.Sprintf("/api/v1/agents/slow-agent/controls/%d", int64(m["control_id"].(float64))), nil)
	}
	res := p.call(http.StatusOK, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "slow-agent", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": strings.Repeat("a", 40) + "c"}})
	errs, _ := res["errors"].([]any)
	if res["decision"] != "deny" || len(errs) != n {
		t.Fatalf("decision %v with %d errors", res["decision"], len(errs))
	}
	last := errs[n-1].(map[string]any)["result"].(map[string]any)
	if last["error"] != "regex: evaluation deadline exceeded" {
		t.Fatalf("error %v", last["error"])
	}
}

// TestEvaluationTimeoutAboveWriteTimeoutStops: a deadline the write timeout would cut is refused at start.
func TestEvaluationTimeoutAboveWriteTimeoutStops(t *testing.T) {
	bin := buildServer(t)
	out, err := runBin(bin, []string{"EVALUATION_TIMEOUT_MS=60000", "DB_URL=" + filepath.Join(t.TempDir(), "x.db")}, "serve", "--migrate")
	if err == nil || !strings.Contains(out, "EVALUATION_TIMEOUT_MS") {
		t.Fatalf("%v\n%s", err, out)
	}
}
