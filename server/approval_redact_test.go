package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestRefusedStepKeepsRedactions (issue 32, item 4): a step refused by an approval control (or a plain
// deny) carries an e-mail that a log+redact pii control hides. Nothing guard keeps or sends about it holds
// the address: the evaluation's answer, the request (GET /approvals/{id} and the list), the webhook
// notice, the captured step and the events.
func TestRefusedStepKeepsRedactions(t *testing.T) {
	const email = "alice.smith@example.com"
	hook := &hookRecorder{}
	hs := httptest.NewServer(hook)
	t.Cleanup(hs.Close)
	st := storetest.SQLite(t)
	obs := observability.NewRecorder(st, observability.RecorderConfig{})
	t.Cleanup(func() { _ = obs.Close(context.Background()) })
	rec, err := capture.New(st, capture.Config{Agents: []string{"support-bot"}, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	ts := newTSOn(t, st, WithApprovalWebhook(hs.URL), WithCapture(rec), WithObservability(true, obs))
	ts.initAgent("support-bot")
	refundScope := map[string]any{"step_types": []string{"tool"}, "step_names": []string{"refund"}, "stages": []string{"pre"}}
	amountOver := map[string]any{"selector": map[string]any{"path": "input.amount"},
		"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "^[0-9]{4,}"}}}
	approvalDeny := ts.createControl("refund-over-limit", map[string]any{"scope": refundScope, "condition": amountOver,
		"action": map[string]any{"decision": "deny", "approval": map[string]any{"message": "Refund of 1000 or more"}}})
	ts.link("support-bot", approvalDeny)
	ts.link("support-bot", ts.createControl("hide-emails", map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "pii", "config": map[string]any{"entities": []string{"email"}}}},
		"action": map[string]any{"decision": "log", "redact": map[string]any{}}}))

	evaluate := func(name string, amount int) map[string]any {
		return ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
			"step": map[string]any{"type": "tool", "name": name, "input": map[string]any{"order": "A-17", "amount": amount, "note": "refund to " + email}}})
	}
	clean := func(what string, v any) string {
		t.Helper()
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), email) || strings.Contains(string(b), "alice.smith") {
			t.Errorf("%s holds the e-mail: %s", what, b)
		}
		return string(b)
	}

	// Refused for approval: a request opens.
	res := evaluate("refund", 2500)
	clean("the evaluation's answer", res)
	if decision(res) != "deny" {
		t.Fatalf("decision %s", decision(res))
	}
	id := approvalOf(t, res)["id"].(string)
	got := ts.ok(200, "GET", "/api/v1/approvals/"+id, nil)
	if s := clean("GET /approvals/{id}", got); !strings.Contains(s, "refund to [REDACTED:email]") || !strings.Contains(s, `"amount":2500`) {
		t.Fatalf("the request's step is not the redacted step: %s", s)
	}
	clean("GET /approvals", ts.ok(200, "GET", "/api/v1/approvals", nil))
	notice := hook.waitFor(t, 1)[0]
	if s := clean("the webhook notice", notice); !strings.Contains(s, "[REDACTED:email]") {
		t.Fatalf("webhook = %s", s)
	}
	// A plain deny (an approval control without an approval store would be one too) and an allowed step.
	ts.link("support-bot", ts.createControl("no-transfers", map[string]any{
		"scope":     map[string]any{"step_names": []string{"transfer"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input.order"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "A-"}}},
		"action":    map[string]any{"decision": "deny"}}))
	clean("a plain deny's answer", evaluate("transfer", 10))
	clean("an allowed step's answer", evaluate("refund", 10))

	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := obs.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	steps, _, err := st.CapturedSteps(context.Background(), guard.CaptureQuery{Limit: 10})
	if err != nil || len(steps) != 3 {
		t.Fatalf("%d captured steps (%v), want 3", len(steps), err)
	}
	for i, s := range steps {
		if got := clean(fmt.Sprintf("captured step %d", i), s); !strings.Contains(got, "[REDACTED:email]") {
			t.Errorf("captured step %d not redacted: %s", i, got)
		}
	}
	evs, _, err := st.QueryEvents(context.Background(), guard.EventQuery{AgentName: "support-bot", Limit: 100})
	if err != nil || len(evs) == 0 {
		t.Fatalf("%d events (%v)", len(evs), err)
	}
	clean("the events", evs)
	clean("POST /observability/events/query", ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{}))
}
