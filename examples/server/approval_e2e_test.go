package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestApprovalEndToEnd runs the approval flow through the real server process, on SQLite and on
// PostgreSQL: a refund above the limit is refused with an approval request, the webhook receiver gets it,
// an approval through the API lets exactly that refund run once (also after a restart); the same refund
// again, a different amount, a grant after the control changed are refused; a rejection says so.
func TestApprovalEndToEnd(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testApprovalE2E(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db")})
	})
	t.Run("postgres", func(t *testing.T) {
		testApprovalE2E(t, map[string]string{"DATABASE_URL": storetest.PostgresURL(t)})
	})
}

func testApprovalE2E(t *testing.T, env map[string]string) {
	var mu sync.Mutex
	var notices []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		notices = append(notices, m)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	const agentKey, adminKey = "agent-key-e2e", "admin-key-e2e"
	env["GUARD_API_KEY_ENABLED"] = "true"
	env["GUARD_API_KEYS"] = agentKey
	env["GUARD_ADMIN_API_KEYS"] = adminKey
	env["GUARD_APPROVAL_WEBHOOK_URL"] = hook.URL
	env["GUARD_CAPTURE_REDACT"] = "context.customer_email"
	p := startServer(t, env, "serve", "--migrate")
	as := func(key string) map[string]string { return map[string]string{"X-API-Key": key} }
	call := func(want int, key, method, path string, body any) map[string]any {
		t.Helper()
		code, _, raw := p.do(method, path, body, as(key))
		if code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, raw)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	control := func(pattern string) map[string]any {
		return map[string]any{
			"scope": map[string]any{"step_types": []string{"tool"}, "step_names": []string{"refund"}, "stages": []string{"pre"}},
			"condition": map[string]any{"selector": map[string]any{"path": "input.amount"},
				"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
			"action": map[string]any{"decision": "deny", "approval": map[string]any{"message": "Refund of 1000 or more", "approvers": []string{"finance"}}},
		}
	}
	id := call(200, adminKey, "PUT", "/api/v1/controls", map[string]any{"name": "refund-over-limit", "data": control("^[0-9]{4,}")})["control_id"].(float64)
	call(200, adminKey, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"},
		"steps": []map[string]any{{"type": "tool", "name": "refund"}}})
	call(200, adminKey, "POST", "/api/v1/agents/support-bot/controls/"+itoa(int64(id)), nil)

	refund := func(amount int, grant string) map[string]any {
		t.Helper()
		step := map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"order": "A-17", "amount": amount},
			"context": map[string]any{"customer_email": "jane@example.com"}}
		if grant != "" {
			step["context"].(map[string]any)["guard_approval_grant"] = grant
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

	// Refused, with a request; the webhook receiver gets it.
	res := refund(2500, "")
	a := approval(res)
	reqID, _ := a["id"].(string)
	if res["decision"] != "deny" || a["status"] != "required" || reqID == "" || a["url"] != "/api/v1/approvals/"+reqID {
		t.Fatalf("refused: %v", res)
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
	got := notices[0]
	mu.Unlock()
	if got["approval"].(map[string]any)["id"] != reqID || got["text"] == "" {
		t.Fatalf("notice: %v", got)
	}
	shown := call(200, agentKey, "GET", "/api/v1/approvals/"+reqID, nil)
	if shown["step"].(map[string]any)["context"].(map[string]any)["customer_email"] != "[REDACTED]" {
		t.Fatalf("the approver sees an unredacted step: %v", shown["step"])
	}

	// Approved through the API by the admin key, recorded as its fingerprint.
	dec := call(200, adminKey, "POST", "/api/v1/approvals/"+reqID, map[string]any{"decision": "approve", "comment": "customer called"})
	sum := sha256.Sum256([]byte(adminKey))
	grant, _ := dec["grant"].(string)
	if dec["status"] != "approved" || grant == "" || dec["decided_by"] != "key:"+hex.EncodeToString(sum[:])[:12] {
		t.Fatalf("decision: %v", dec)
	}

	// Nothing lost on restart: the grant still works once, after it.
	p.stop()
	p = startServer(t, env, "serve")
	if ran := refund(2500, grant); ran["decision"] != "allow" || approval(ran)["status"] != "granted" {
		t.Fatalf("with the grant: %v", ran)
	}
	// The same refund again: refused.
	if again := refund(2500, grant); again["decision"] != "deny" || approval(again)["grant_error"] == nil {
		t.Fatalf("again: %v", again)
	}
	// A different amount with a fresh grant for 2500: refused.
	second := approval(refund(2500, ""))["id"].(string)
	g2 := call(200, adminKey, "POST", "/api/v1/approvals/"+second, map[string]any{"decision": "approve"})["grant"].(string)
	if other := refund(2600, g2); other["decision"] != "deny" || approval(other)["grant_error"] == nil {
		t.Fatalf("another amount: %v", other)
	}
	// After the control changed: refused.
	call(200, adminKey, "PUT", "/api/v1/controls/"+itoa(int64(id))+"/data", map[string]any{"data": control("^[0-9]{4,}$")})
	if changed := refund(2500, g2); changed["decision"] != "deny" || approval(changed)["grant_error"] != "the control changed since the approval" {
		t.Fatalf("changed control: %v", changed)
	}
	// A rejection says so, to the agent waiting for it.
	third := approval(refund(4000, ""))["id"].(string)
	call(200, adminKey, "POST", "/api/v1/approvals/"+third, map[string]any{"decision": "reject", "comment": "no"})
	if w := call(200, agentKey, "GET", "/api/v1/approvals/"+third+"?wait=5", nil); w["status"] != "rejected" || w["grant"] != nil || w["comment"] != "no" {
		t.Fatalf("rejected: %v", w)
	}
	list := call(200, agentKey, "GET", "/api/v1/approvals?agent_name=support-bot", nil)["approvals"].([]any)
	if len(list) < 4 {
		t.Fatalf("list: %v", list)
	}

	// The CLI: list, show, approve and reject, with the keys each needs.
	agentEnv := []string{"GUARD_URL=" + p.base, "GUARD_API_KEY=" + agentKey}
	adminEnv := []string{"GUARD_URL=" + p.base, "GUARD_API_KEY=" + adminKey}
	fourth := approval(refund(5000, ""))["id"].(string)
	expectGuard(t, agentEnv, 0, []string{"ID", "STATUS", fourth, "pending", "support-bot", "refund-over-limit", "tool refund"},
		"approvals", "list", "--status", "pending")
	out := expectGuard(t, agentEnv, 0, []string{"Request " + fourth + ": pending", "Agent:    support-bot", "refund-over-limit",
		"Step:     tool refund, stage pre", "Payload hash: sha256:", "What would run:", `"customer_email": "[REDACTED]"`, `"amount": 5000`},
		"approvals", "show", fourth)
	if strings.Contains(out, "jane@example.com") {
		t.Fatalf("show printed the redacted e-mail:\n%s", out)
	}
	expectGuard(t, agentEnv, 1, []string{"admin key", "approve permission"}, "approvals", "approve", fourth)
	expectGuard(t, adminEnv, 0, []string{"Request " + fourth + " is approved.", "may now run this exact step once"},
		"approvals", "approve", fourth, "--comment", "ok")
	expectGuard(t, adminEnv, 1, []string{"409", "APPROVAL_DECIDED"}, "approvals", "reject", fourth)
	fifth := approval(refund(6000, ""))["id"].(string)
	expectGuard(t, adminEnv, 0, []string{"Request " + fifth + " is rejected."}, "approvals", "reject", fifth, "--comment", "no")
	expectGuard(t, adminEnv, 0, []string{"Decided:", "by key:", `"no"`}, "approvals", "show", fifth)
	expectGuard(t, adminEnv, 2, []string{"unknown action"}, "approvals", "frobnicate")
	expectGuard(t, adminEnv, 2, []string{"needs one request id"}, "approvals", "approve")
}
