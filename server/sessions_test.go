package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

const ruleOfTwoJSON = `{"enabled": true, "scope": {"stages": ["pre"]},
  "condition": {"selector": {"path": "session.labels"}, "evaluator": {"name": "list", "config": {"values": ["untrusted", "sensitive", "egress"], "logic": "all"}}},
  "action": {"decision": "deny", "session": {"label_steps": [
    {"label": "untrusted", "steps": ["fetch_page"]}, {"label": "sensitive", "steps": ["read_file"]}, {"label": "egress", "steps": ["http_post"]}]}}}`

func ruleOfTwoData(t *testing.T) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(ruleOfTwoJSON), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (ts *tserver) sessionStep(agent, tool, session string) map[string]any {
	return ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre",
		"step": map[string]any{"type": "tool", "name": tool, "context": map[string]any{"session_id": session}}})
}

// TestSessionEvents: events carry the session id, the deciding control's event names the history, and
// the events query filters by session.
func TestSessionEvents(t *testing.T) {
	ts, rec := fullServer(t)
	ts.initAgent("bot")
	r2 := ts.createControl("rule-of-two", ruleOfTwoData(t))
	ts.link("bot", r2)
	for _, tool := range []string{"fetch_page", "read_file"} {
		if d := decision(ts.sessionStep("bot", tool, "s1")); d != "allow" {
			t.Fatalf("%s: %s", tool, d)
		}
	}
	// The agent's controls change (its engine is rebuilt): the session goes on.
	ts.link("bot", ts.createControl("other", regexData("nothing-matches-this", "deny")))
	res := ts.sessionStep("bot", "http_post", "s1")
	if decision(res) != "deny" || !strings.Contains(res["reason"].(string), "step 2 (read_file) added label sensitive") {
		t.Fatalf("step 3: %v", res)
	}
	ts.sessionStep("bot", "fetch_page", "s2")
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "bot", "session_id": "s1", "control_ids": []int64{r2}})
	evs := q["events"].([]any)
	if len(evs) != 3 {
		t.Fatalf("events of s1: %v", q)
	}
	deny := evs[0].(map[string]any) // newest first
	md, _ := deny["metadata"].(map[string]any)
	hist, _ := md["session_history"].([]any)
	if deny["session_id"] != "s1" || deny["action"] != "deny" || deny["matched"] != true || len(hist) != 3 {
		t.Fatalf("deny event %v", deny)
	}
	if h := hist[1].(map[string]any); h["label"] != "sensitive" || h["step"] != float64(2) || h["step_name"] != "read_file" {
		t.Fatalf("history %v", hist)
	}
	for _, e := range evs[1:] {
		if m, _ := e.(map[string]any)["metadata"].(map[string]any); m["session_history"] != nil {
			t.Fatalf("an allowed step's event has a history: %v", e)
		}
	}
	q = ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"session_id": "s2"})
	if evs := q["events"].([]any); len(evs) != 2 || evs[0].(map[string]any)["session_id"] != "s2" {
		t.Fatalf("events of s2: %v", q)
	}
	p := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/observability/events/query", map[string]any{"session_id": strings.Repeat("x", 129)})
	if len(p.Errors) != 1 || p.Errors[0].Field != "session_id" {
		t.Fatalf("%+v", p)
	}
}

// TestSessionBadID: a session id over the cap, or not a string, is a 422 naming the field, for every agent.
func TestSessionBadID(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("bot")
	for _, id := range []any{strings.Repeat("x", guard.MaxSessionIDBytes+1), 12} {
		p := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
			"step": map[string]any{"type": "tool", "name": "x", "context": map[string]any{"session_id": id}}})
		if len(p.Errors) != 1 || p.Errors[0].Field != "step.context.session_id" {
			t.Fatalf("%v: %+v", id, p)
		}
	}
}

type downStore struct{}

func (downStore) Load(context.Context, string, string, bool, time.Time) (*guard.SessionState, *guard.SessionState, error) {
	return nil, nil, errors.New("connection refused")
}
func (downStore) Commit(context.Context, *guard.SessionCommit) (bool, *guard.SessionState, error) {
	return false, nil, errors.New("connection refused")
}

// TestSessionStoreDownMetric: with the store down, session controls fail closed and the metric counts it;
// agents without session controls are unaffected.
func TestSessionStoreDownMetric(t *testing.T) {
	st := storetest.SQLite(t)
	m, err := observability.NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTSOn(t, st, WithMetrics(m), WithSessionStore(downStore{}))
	ts.initAgent("bot")
	ts.initAgent("plain")
	ts.link("bot", ts.createControl("rule-of-two", ruleOfTwoData(t)))
	ts.link("plain", ts.createControl("regex", regexData("bad", "deny")))
	res := ts.sessionStep("bot", "fetch_page", "s1")
	if decision(res) != "deny" || !strings.Contains(res["reason"].(string), "fails closed") {
		t.Fatalf("%v", res)
	}
	if d := decision(ts.sessionStep("plain", "fetch_page", "s1")); d != "allow" {
		t.Fatalf("plain: %s", d)
	}
	body := string(ts.do("GET", "/metrics", nil).Body)
	if !strings.Contains(body, "guard_session_store_errors_total 1\n") {
		t.Fatalf("metric: %s", body[strings.Index(body, "guard_session"):][:200])
	}
}
