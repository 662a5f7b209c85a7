package server

import (
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// TestOverwriteNeedsAdminKey: conflict_mode overwrite that would change a registered agent is a 403 for a
// regular key (issue 32; the reference allows it only to admin keys) and changes nothing; creating an
// agent, re-registering it unchanged (the clients' default at every start) and strict registration stay
// open to a regular key; an admin key may overwrite.
func TestOverwriteNeedsAdminKey(t *testing.T) {
	ts := newTS(t, WithAuth(true, []string{"reg"}, []string{"adm"}))
	reg, adm := []string{"X-API-Key", "reg"}, []string{"X-API-Key", "adm"}
	body := func(desc string, steps ...string) map[string]any {
		var ss []any
		for _, n := range steps {
			ss = append(ss, map[string]any{"type": "tool", "name": n, "input_schema": map[string]any{"type": "object"}})
		}
		return map[string]any{"agent": map[string]any{"agent_name": "bot", "agent_description": desc, "agent_metadata": map[string]any{"env": "test"}},
			"steps": ss, "conflict_mode": "overwrite"}
	}
	if r := ts.ok(200, "POST", "/api/v1/agents/initAgent", body("d", "search", "refund"), reg...); r["created"] != true {
		t.Fatalf("create: %v", r)
	}
	// The same registration again: nothing to overwrite.
	if r := ts.ok(200, "POST", "/api/v1/agents/initAgent", body("d", "search", "refund"), reg...); r["overwrite_applied"] != false {
		t.Fatalf("unchanged: %v", r)
	}
	for name, b := range map[string]map[string]any{
		"a step removed":        body("d", "search"),
		"a description changed": body("other", "search", "refund"),
	} {
		p := ts.expectProblem(403, problem.CodeAuthInsufficient, "POST", "/api/v1/agents/initAgent", b, reg...)
		if p.Detail == "" {
			t.Fatalf("%s: %+v", name, p)
		}
	}
	a := ts.ok(200, "GET", "/api/v1/agents/bot", nil, reg...)
	if steps, _ := a["steps"].([]any); len(steps) != 2 {
		t.Fatalf("the refused overwrite changed the agent: %v", a)
	}
	// Strict registration of a new step stays open to a regular key.
	strict := body("d", "search", "refund", "lookup")
	strict["conflict_mode"] = "strict"
	ts.ok(200, "POST", "/api/v1/agents/initAgent", strict, reg...)
	// An admin key overwrites.
	if r := ts.ok(200, "POST", "/api/v1/agents/initAgent", body("d", "search"), adm...); r["overwrite_applied"] != true {
		t.Fatalf("admin overwrite: %v", r)
	}
}
