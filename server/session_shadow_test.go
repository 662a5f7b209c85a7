package server

import (
	"fmt"
	"strings"
	"testing"
)

// toolLoopData is a tool-loop control: more than 3 calls of one tool in a session are denied.
func toolLoopData(mode string) map[string]any {
	return map[string]any{"enabled": true, "mode": mode, "scope": map[string]any{"stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "session.count", "window": "1h"},
			"evaluator": map[string]any{"name": "threshold", "config": map[string]any{"gt": 3}}},
		"action": map[string]any{"decision": "deny"}}
}

// TestShadowSessionEvents (issue 32, item 6): a shadow tool-loop numbers its events as the enforced one
// does, and would deny exactly the calls the enforced one denies, whether an enforced control keeps
// the same counter ("both") or the shadow control is the agent's only session control ("shadow-only",
// which then keeps a would-be counter of its own).
func TestShadowSessionEvents(t *testing.T) {
	ts, rec := fullServer(t)
	ts.initAgent("both")
	ts.initAgent("shadow-only")
	ts.link("both", ts.createControl("loop", toolLoopData("enforce")))
	ts.link("both", ts.createControl("loop-shadow", toolLoopData("shadow")))
	ts.link("shadow-only", ts.createControl("loop-shadow-only", toolLoopData("shadow")))
	var decisions []string
	for range 5 {
		decisions = append(decisions, decision(ts.sessionStep("both", "search", "s1")))
		ts.sessionStep("shadow-only", "search", "s1")
	}
	if strings.Join(decisions, " ") != "allow allow allow deny deny" {
		t.Fatalf("enforced tool-loop: %v", decisions)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// events returns "step:matched" of the agent's events (enforced or shadow), oldest first.
	events := func(agent string, shadow bool) string {
		q := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": agent, "session_id": "s1", "shadow": shadow})
		evs := q["events"].([]any)
		got := make([]string, len(evs))
		for i, e := range evs { // newest first
			ev := e.(map[string]any)
			md, _ := ev["metadata"].(map[string]any)
			got[len(evs)-1-i] = fmt.Sprintf("%v:%v", md["session_step"], ev["matched"])
		}
		return strings.Join(got, " ")
	}
	const want = "1:false 2:false 3:false 4:true 5:true"
	for _, tc := range []struct {
		agent  string
		shadow bool
	}{{"both", false}, {"both", true}, {"shadow-only", true}} {
		if got := events(tc.agent, tc.shadow); got != want {
			t.Errorf("%s, shadow %t: events %s, want %s", tc.agent, tc.shadow, got, want)
		}
	}
	// The session view shows the shadow control's would-be counter apart: the 3 calls it let through.
	st := ts.ok(200, "GET", "/api/v1/agents/shadow-only/sessions/s1", nil)
	cs, _ := st["counters"].([]any)
	if len(cs) != 1 || st["steps_seen"] != float64(5) {
		t.Fatalf("session view %v", st)
	}
	if c := cs[0].(map[string]any); c["kind"] != "count" || c["name"] != "search" || c["value"] != float64(3) || c["shadow"] != true {
		t.Fatalf("counter %v", c)
	}
	st = ts.ok(200, "GET", "/api/v1/agents/both/sessions/s1", nil)
	if cs, _ := st["counters"].([]any); len(cs) != 1 || cs[0].(map[string]any)["shadow"] != nil {
		t.Fatalf("session view of both %v", st)
	}
}
