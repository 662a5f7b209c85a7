package server

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
)

const toolLoopJSON = `{"enabled": true, "scope": {"step_types": ["tool"], "stages": ["pre"]},
  "condition": {"selector": {"path": "session.count", "window": "1m"}, "evaluator": {"name": "threshold", "config": {"gt": 5}}},
  "action": {"decision": "deny"}}`

// TestSessionRead: GET /agents/{agent}/sessions/{id} answers the session's live state (labels with the
// step that added each, counters named as the selectors name them, step records in order), and a clear
// problem for a bad id, an unknown agent, a session with no state.
func TestSessionRead(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("bot")
	ts.initAgent("other")
	ts.link("bot", ts.createControl("rule-of-two", ruleOfTwoData(t)))
	ts.link("bot", ts.createControl("tool-loop", decodeJSON(t, toolLoopJSON)))
	for i, tool := range []string{"fetch_page", "fetch_page", "read_file", "http_post"} {
		want := "allow"
		if i == 3 {
			want = "deny"
		}
		if d := decision(ts.sessionStep("bot", tool, "conv 1/é")); d != want {
			t.Fatalf("step %d %s: %s", i+1, tool, d)
		}
	}
	ts.sessionStep("bot", "fetch_page", "conv-2")

	got := ts.ok(200, "GET", "/api/v1/agents/bot/sessions/"+url.PathEscape("conv 1/é"), nil)
	if got["agent_name"] != "bot" || got["session_id"] != "conv 1/é" || got["steps_seen"] != float64(4) {
		t.Fatalf("head: %v", got)
	}
	labels := fmt.Sprint(got["labels"])
	if labels != "[map[by:label_steps of control rule-of-two label:untrusted step:1 step_name:fetch_page] map[by:label_steps of control rule-of-two label:sensitive step:3 step_name:read_file]]" {
		t.Fatalf("labels: %s", labels)
	}
	var steps []string
	for _, s := range got["steps"].([]any) {
		m := s.(map[string]any)
		steps = append(steps, fmt.Sprintf("%v:%v:%v", m["seq"], m["name"], m["decision"]))
	}
	if strings.Join(steps, " ") != "1:fetch_page:allow 2:fetch_page:allow 3:read_file:allow 4:http_post:deny" {
		t.Fatalf("steps: %v", steps)
	}
	counts := map[string]float64{}
	for _, c := range got["counters"].([]any) {
		m := c.(map[string]any)
		if m["kind"] != "count" || m["window"] != "1m0s" || m["window_start"] == nil {
			t.Fatalf("counter %v", m)
		}
		counts[m["name"].(string)] = m["value"].(float64)
	}
	// The tool loop counts each tool apart (session.count: steps named like this one), the steps let
	// through only: the denied http_post is not counted.
	if counts["fetch_page"] != 2 || counts["read_file"] != 1 || len(counts) != 2 {
		t.Fatalf("counters: %v", got["counters"])
	}

	for _, tc := range []struct {
		name, path string
		status     int
		code       string
		field      string
	}{
		{"no state", "/api/v1/agents/bot/sessions/never-seen", 404, CodeSessionNotFound, ""},
		{"another agent's session", "/api/v1/agents/other/sessions/conv-2", 404, CodeSessionNotFound, ""},
		{"unknown agent", "/api/v1/agents/ghost/sessions/conv-2", 404, "AGENT_NOT_FOUND", ""},
		{"bad agent name", "/api/v1/agents/" + strings.Repeat("a", 300) + "/sessions/conv-2", 422, "VALIDATION_ERROR", "agent_name"},
		{"id over the cap", "/api/v1/agents/bot/sessions/" + strings.Repeat("s", guard.MaxSessionIDBytes+1), 422, "VALIDATION_ERROR", "session_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ts.expectProblem(tc.status, tc.code, "GET", tc.path, nil)
			if tc.field != "" && (len(p.Errors) != 1 || p.Errors[0].Field != tc.field) {
				t.Fatalf("%+v", p)
			}
		})
	}
}

// TestSessionReadScoped: a key scoped to alpha-* reads alpha-1's sessions, and gets the 404 of a missing
// agent for bravo-1's live session.
func TestSessionReadScoped(t *testing.T) {
	keys, err := ParseKeys([]byte(`{"keys": [{"name": "ops", "key": "global-secret", "admin": true},
		{"name": "alpha-runtime", "key": "alpha-secret", "agents": ["alpha-*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTS(t, WithAuth(true, nil, nil), WithKeys(keys))
	g, a := []string{APIKeyHeader, "global-secret"}, []string{APIKeyHeader, "alpha-secret"}
	for _, agent := range []string{"alpha-1", "bravo-1"} {
		ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": agent}, "steps": []any{}}, g...)
		c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": agent + "-r2", "data": ruleOfTwoData(t)}, g...)
		ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, int64(c["control_id"].(float64))), nil, g...)
		ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre",
			"step": map[string]any{"type": "tool", "name": "fetch_page", "context": map[string]any{"session_id": "s1"}}}, g...)
	}
	ts.ok(200, "GET", "/api/v1/agents/bravo-1/sessions/s1", nil, g...)
	ts.ok(200, "GET", "/api/v1/agents/alpha-1/sessions/s1", nil, a...)
	r := ts.do("GET", "/api/v1/agents/bravo-1/sessions/s1", nil, a...)
	if r.Code != 404 || !strings.Contains(string(r.Body), "AGENT_NOT_FOUND") || strings.Contains(string(r.Body), "fetch_page") {
		t.Fatalf("scoped key on bravo-1's session: %d %s", r.Code, r.Body)
	}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSessionReadStoreDown: a session store that does not answer is a 503 SESSION_STORE_UNAVAILABLE, not a
// 500 and not a 404.
func TestSessionReadStoreDown(t *testing.T) {
	ts := newTS(t, WithSessionStore(downStore{}))
	ts.initAgent("bot")
	ts.expectProblem(503, "SESSION_STORE_UNAVAILABLE", "GET", "/api/v1/agents/bot/sessions/s1", nil)
}

// TestSessionEventsCarryStep: every server event of a session step carries the step's number in
// metadata.session_step (the session view numbers and orders steps by it); events of an agent without
// session controls carry no metadata, session id or not.
func TestSessionEventsCarryStep(t *testing.T) {
	ts, rec := fullServer(t)
	ts.initAgent("bot")
	ts.initAgent("plain")
	ts.link("bot", ts.createControl("rule-of-two", ruleOfTwoData(t)))
	ts.link("bot", ts.createControl("regex", regexData("never-matches-this", "deny")))
	ts.link("plain", ts.createControl("plain-regex", regexData("never-matches-this-either", "deny")))
	for _, tool := range []string{"fetch_page", "read_file", "http_post"} {
		ts.sessionStep("bot", tool, "s1")
		ts.sessionStep("plain", tool, "s1")
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	q := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "bot", "session_id": "s1"})
	var got []string
	for _, e := range q["events"].([]any) { // newest first
		ev := e.(map[string]any)
		md, _ := ev["metadata"].(map[string]any)
		got = append(got, fmt.Sprintf("%v:%v:%v", md["session_step"], ev["step_name"], md["session_history"] != nil))
	}
	// The denied step stops at the deny: its other control is not evaluated.
	if strings.Join(got, " ") != "3:http_post:true 2:read_file:false 2:read_file:false 1:fetch_page:false 1:fetch_page:false" {
		t.Fatalf("events of s1: %v", got)
	}
	q = ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "plain"})
	for _, e := range q["events"].([]any) {
		if md := e.(map[string]any)["metadata"].(map[string]any); len(md) != 0 {
			t.Fatalf("an event of an agent without session controls has metadata: %v", e)
		}
	}
}
