package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSeveralApprovalControlsEndToEnd (issue 32, items 3 and 4) runs through the real server process: two
// approval controls refuse one refund, whose note carries an e-mail address a log+redact pii control
// hides. One request covers both controls; approved once, the refund runs exactly once (also after a
// restart), the grant cannot be used again, and a rejection refuses. Neither the evaluation's answer, the
// request, the webhook notice, the captured steps nor the events hold the address.
func TestSeveralApprovalControlsEndToEnd(t *testing.T) {
	const email = "jane.doe@example.com"
	var mu sync.Mutex
	var notices [][]byte
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		notices = append(notices, b)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	const agentKey, adminKey = "agent-key-e2e", "admin-key-e2e"
	env := map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db"), "GUARD_API_KEY_ENABLED": "true",
		"GUARD_API_KEYS": agentKey, "GUARD_ADMIN_API_KEYS": adminKey, "GUARD_APPROVAL_WEBHOOK_URL": hook.URL,
		"GUARD_CAPTURE_AGENTS": "support-bot"}
	p := startServer(t, env, "serve", "--migrate")
	noEmail := func(what string, raw []byte) {
		t.Helper()
		if strings.Contains(string(raw), email) {
			t.Errorf("%s holds the e-mail: %s", what, raw)
		}
	}
	call := func(want int, key, method, path string, body any) map[string]any {
		t.Helper()
		code, _, raw := p.do(method, path, body, map[string]string{"X-API-Key": key})
		if code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, raw)
		}
		noEmail(method+" "+path, raw)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	scope := map[string]any{"step_types": []string{"tool"}, "step_names": []string{"refund"}, "stages": []string{"pre"}}
	regex := func(path, pattern string) map[string]any {
		return map[string]any{"selector": map[string]any{"path": path}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}}
	}
	controls := []map[string]any{
		{"name": "refund-over-limit", "data": map[string]any{"scope": scope, "condition": regex("input.amount", "^[0-9]{4,}"),
			"action": map[string]any{"decision": "deny", "approval": map[string]any{"message": "Refund of 1000 or more", "approvers": []string{"finance"}}}}},
		{"name": "orders-a-need-accounts", "data": map[string]any{"scope": scope, "condition": regex("input.order", "^A-"),
			"action": map[string]any{"decision": "deny", "approval": map[string]any{"message": "Orders A- need the account team", "approvers": []string{"accounts"}}}}},
		{"name": "hide-emails", "data": map[string]any{"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "pii", "config": map[string]any{"entities": []string{"email"}}}},
			"action": map[string]any{"decision": "log", "redact": map[string]any{}}}},
	}
	call(200, adminKey, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"},
		"steps": []map[string]any{{"type": "tool", "name": "refund"}}})
	for _, c := range controls {
		id := call(200, adminKey, "PUT", "/api/v1/controls", c)["control_id"].(float64)
		call(200, adminKey, "POST", "/api/v1/agents/support-bot/controls/"+itoa(int64(id)), nil)
	}
	refund := func(amount int, grant string) map[string]any {
		t.Helper()
		step := map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"order": "A-17", "amount": amount, "note": "send the receipt to " + email}}
		if grant != "" {
			step["context"] = map[string]any{"guard_approval_grant": grant}
		}
		return call(200, agentKey, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre", "step": step})
	}
	approval := func(res map[string]any) map[string]any {
		t.Helper()
		a, ok := res["approval"].(map[string]any)
		if !ok {
			t.Fatalf("no approval: %v", res)
		}
		return a
	}
	names := func(v any) string {
		var out []string
		for _, c := range v.([]any) {
			out = append(out, c.(map[string]any)["control_name"].(string))
		}
		return strings.Join(out, ",")
	}

	res := refund(2500, "")
	a := approval(res)
	reqID, _ := a["id"].(string)
	if res["decision"] != "deny" || reqID == "" || names(a["controls"]) != "refund-over-limit,orders-a-need-accounts" {
		t.Fatalf("refused with one request for both controls? %v", res)
	}
	shown := call(200, agentKey, "GET", "/api/v1/approvals/"+reqID, nil)
	if names(shown["controls"]) != "refund-over-limit,orders-a-need-accounts" || !strings.Contains(shown["step"].(map[string]any)["input"].(map[string]any)["note"].(string), "[REDACTED:email]") {
		t.Fatalf("request: %v", shown)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(notices)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook receiver got nothing")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	notice := notices[0]
	mu.Unlock()
	noEmail("the webhook notice", notice)
	if !strings.Contains(string(notice), "orders-a-need-accounts") || !strings.Contains(string(notice), "[REDACTED:email]") {
		t.Fatalf("notice: %s", notice)
	}

	grant := call(200, adminKey, "POST", "/api/v1/approvals/"+reqID, map[string]any{"decision": "approve"})["grant"].(string)
	// Nothing lost on restart: the grant lets the refund through once, after it.
	p.stop()
	p = startServer(t, env, "serve")
	if ran := refund(2500, grant); ran["decision"] != "allow" || approval(ran)["status"] != "granted" {
		t.Fatalf("with the grant: %v", ran)
	}
	if used := call(200, agentKey, "GET", "/api/v1/approvals/"+reqID, nil); used["used_at"] == nil || used["grant"] != nil {
		t.Fatalf("not consumed: %v", used)
	}
	again := refund(2500, grant)
	if again["decision"] != "deny" || approval(again)["grant_error"] == nil || approval(again)["id"] == reqID {
		t.Fatalf("the grant twice: %v", again)
	}
	rejected := call(200, adminKey, "POST", "/api/v1/approvals/"+approval(again)["id"].(string), map[string]any{"decision": "reject", "comment": "no"})
	if rejected["status"] != "rejected" || rejected["grant"] != nil {
		t.Fatalf("reject: %v", rejected)
	}
	if r := refund(2500, ""); r["decision"] != "deny" {
		t.Fatalf("after the rejection: %v", r)
	}

	// The captured steps and the events, written by the time the server stopped.
	p.stop()
	p = startServer(t, env, "serve")
	steps := call(200, adminKey, "GET", "/api/v1/steps/captured?agent_name=support-bot&limit=100", nil)["steps"].([]any)
	if len(steps) < 4 {
		t.Fatalf("%d captured steps, want 4", len(steps))
	}
	for _, s := range steps {
		if b, _ := json.Marshal(s); !strings.Contains(string(b), "[REDACTED:email]") {
			t.Errorf("a captured step is not redacted: %s", b)
		}
	}
	if ev := call(200, adminKey, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "support-bot", "limit": 100}); ev["total"] == float64(0) {
		t.Fatalf("no events: %v", ev)
	}
}
