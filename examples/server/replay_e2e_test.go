package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const replayPolicy = `controls:
  - name: block-drop
    data:
      scope: {stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: 'drop table'}}}
      action: {decision: deny}
agents:
  - name: support-bot
    controls: [block-drop]
`

// TestReplayEndToEnd: a server capturing support-bot's steps (with redaction); a replay before any step
// was captured is refused naming start_time; steps evaluated through the API, then a draft that tightens a control replayed through the API and `guard replay`, which show
// the one step whose decision would change; the captured steps survive a restart.
func TestReplayEndToEnd(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "guard.db")
	env := map[string]string{"DB_URL": db, "GUARD_CAPTURE_AGENTS": "support-bot", "GUARD_CAPTURE_REDACT": "context.user_email"}
	p := startServer(t, env, "serve", "--migrate")
	url := []string{"GUARD_URL=" + p.base}
	current := writePolicyFile(t, dir, "current.yaml", replayPolicy)
	tightened := writePolicyFile(t, dir, "tightened.yaml", strings.Replace(replayPolicy, "'drop table'", "'drop table|delete from'", 1))
	expectGuard(t, url, 0, []string{"Applied."}, "apply", "-f", current)
	// Nothing captured yet: the replay is refused with the field to change, not answered with an empty diff.
	expectGuard(t, url, 1, []string{"422 VALIDATION_ERROR", "start_time: no step of this agent was captured", "GUARD_CAPTURE_AGENTS"},
		"replay", "-f", tightened, "--agent", "support-bot")

	for _, in := range []string{"drop table users", "delete from users", "hello"} {
		p.call(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
			"step": map[string]any{"type": "llm", "name": "chat", "input": in, "context": map[string]any{"user_email": "jane@example.com"}}})
	}
	draft := map[string]any{"agent_name": "support-bot", "controls": []any{map[string]any{"name": "block-drop", "data": map[string]any{
		"scope":     map[string]any{"stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "drop table|delete from"}}},
		"action":    map[string]any{"decision": "deny"}}}}}
	res := waitForReplay(t, p, draft, 3)
	if res["steps_replayed"] != 3.0 || res["steps_changed"] != 1.0 || res["changes"].(map[string]any)["allow_to_deny"] != 1.0 {
		t.Fatalf("replay: %v", res)
	}
	sample := res["samples"].([]any)[0].(map[string]any)
	step := sample["step"].(map[string]any)
	if step["input"] != "delete from users" || step["context"].(map[string]any)["user_email"] != "[REDACTED]" {
		t.Fatalf("sample step %v", step)
	}

	want := []string{"Replayed 3 captured steps of agent support-bot", "1 of 3 steps would change decision:", "allow -> deny", "1",
		"Controls whose matches change:", "block-drop (id 1): matched 1 -> 2 steps (+1 newly, -0 no longer)",
		"Samples:", "[allow -> deny]", `"input":"delete from users"`, "current: allow", "draft:   deny (matched: block-drop)"}
	out := expectGuard(t, url, 0, want, "replay", "-f", tightened, "--agent", "support-bot", "--since", "1h")
	if strings.Contains(out, "jane@example.com") {
		t.Fatalf("the redacted e-mail was printed:\n%s", out)
	}
	expectGuard(t, url, 0, []string{"Replayed 3 captured steps", "No decision would change."}, "replay", "-f", current, "--agent", "support-bot")
	expectGuard(t, url, 1, []string{"agent not found", "agent_name: no agent has this name"}, "replay", "-f", current, "--agent", "ghost")

	// Captured steps are in the database: a restart keeps them.
	p.stop()
	p = startServer(t, env, "serve")
	expectGuard(t, []string{"GUARD_URL=" + p.base}, 0, []string{"Replayed 3 captured steps", "1 of 3 steps would change"},
		"replay", "-f", tightened, "--agent", "support-bot", "--since", "24h")
}

// waitForReplay posts the replay request body until it replays want steps and returns its result: the
// server writes captured steps in batches (every 2 s), and until the first batch a replay is refused
// (422, nothing captured).
func waitForReplay(t *testing.T, p *proc, body map[string]any, want float64) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, raw := p.do("POST", "/api/v1/controls/replay", body, nil)
		var job struct {
			Result map[string]any `json:"result"`
		}
		if code == 200 && json.Unmarshal(raw, &job) == nil && job.Result["steps_replayed"] == want {
			return job.Result
		}
		if (code != 200 && code != 422) || time.Now().After(deadline) {
			t.Fatalf("replay: %d %s", code, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
