package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestShadowAndControlTestsEndToEnd runs the operator's path of issue 14 against the real binary: a
// policy file with a shadow control and its tests is validated, tested and applied; a version that
// contradicts its tests is refused by the server; real traffic is never denied by the shadow control but
// recorded (and its steps captured); statistics show what it would have denied; `guard replay` of an edit
// says what the edit would match; re-applying the file with mode enforce promotes it.
func TestShadowAndControlTestsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	const body = `controls:
  - name: block-secret
    data:
      mode: %MODE%
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: %PATTERN%}}}
      action: {decision: deny}
      tests:
        - {name: finds it, step: {type: llm, name: chat, input: "a secret"}, stage: pre, expect: match}
        - {name: clean, step: {type: llm, name: chat, input: "hello"}, stage: pre, expect: no_match}
agents:
  - name: bot
    controls: [block-secret]
`
	file := func(name, mode, pattern string) string {
		return writePolicyFile(t, dir, name, strings.NewReplacer("%MODE%", mode, "%PATTERN%", pattern).Replace(body))
	}
	shadow, promoted, broken := file("shadow.yaml", "shadow", "secret"), file("promoted.yaml", "enforce", "secret"), file("broken.yaml", "shadow", "hello")

	expectGuard(t, nil, 0, []string{"ok: 1 file valid"}, "validate", "-f", shadow)
	expectGuard(t, nil, 0, []string{"ok\t2 tests passed"}, "test", "-f", shadow)
	expectGuard(t, nil, 1, []string{"data.tests.0: test failed: expected a match; the control did not match (decision allow)"}, "validate", "-f", broken)

	edited := file("edited.yaml", "shadow", "'secret|bye'")
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(dir, "guard.db"), "OBSERVABILITY_ENABLED": "true",
		"OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "0.1", "GUARD_CAPTURE_AGENTS": "bot"}, "serve", "--migrate")
	env := []string{"GUARD_URL=" + p.base}
	expectGuard(t, env, 0, []string{"created control block-secret", "Applied."}, "apply", "-f", shadow)
	// The server refuses a version that contradicts its own tests, whoever sends it.
	_, _, stderr := guardCLI(t, env, "apply", "-f", broken)
	if !strings.Contains(stderr, "data.tests.0") {
		t.Fatalf("apply of a control failing its tests: %s", stderr)
	}

	for _, in := range []string{"a secret", "hello", "another secret", "bye"} {
		if got := p.evalWithKey(t, "", "bot", in); got != "allow" {
			t.Fatalf("%q: decision %s, want allow while in shadow", in, got)
		}
	}
	// Events are written in the background: wait for them.
	var stats struct {
		Totals struct {
			ExecutionCount int `json:"execution_count"`
		} `json:"totals"`
		Shadow []struct {
			ControlName    string `json:"control_name"`
			ExecutionCount int    `json:"execution_count"`
			ActionCounts   struct {
				Deny int `json:"deny"`
			} `json:"action_counts"`
		} `json:"shadow"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.callInto(http.StatusOK, "GET", "/api/v1/observability/stats?agent_name=bot&time_range=24h", nil, &stats)
		if len(stats.Shadow) == 1 && stats.Shadow[0].ExecutionCount == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shadow statistics never showed 4 evaluations: %+v", stats)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := stats.Shadow[0]; s.ControlName != "block-secret" || s.ActionCounts.Deny != 2 || stats.Totals.ExecutionCount != 0 {
		t.Fatalf("stats %+v: want 2 denies of 4 in shadow, nothing in the totals", stats)
	}
	page := p.call(http.StatusOK, "POST", "/api/v1/observability/events/query", map[string]any{"shadow": true, "matched": true})
	if page["total"] != float64(2) {
		t.Fatalf("matched shadow events: %v", page["total"])
	}

	// Replay an edit of the shadow control against the captured traffic: no decision changes (it is
	// still in shadow), and the control's line says what the edit would match.
	waitForReplay(t, p, map[string]any{"agent_name": "bot", "controls": []any{map[string]any{"name": "block-secret",
		"data": map[string]any{"mode": "shadow", "condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "secret"}}}, "action": map[string]any{"decision": "deny"}}}}}, 4)
	expectGuard(t, env, 0, []string{"Replayed 4 captured steps of agent bot", "No decision would change.",
		"block-secret (id 1): matched 2 -> 3 steps (+1 newly, -0 no longer)"}, "replay", "-f", edited, "--agent", "bot", "--since", "1h")
	// The promotion, replayed first: the two steps the control matches would be denied.
	expectGuard(t, env, 0, []string{"2 of 4 steps would change decision:", "allow -> deny", "2"}, "replay", "-f", promoted, "--agent", "bot")

	expectGuard(t, env, 0, []string{"updated control block-secret", "Applied."}, "apply", "-f", promoted)
	if got := p.evalWithKey(t, "", "bot", "a secret"); got != "deny" {
		t.Fatalf("decision after promotion: %s", got)
	}
}
