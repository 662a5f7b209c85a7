package server

import (
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// TestReferenceSDKRoutes: the routes the reference's newest SDK init() and dashboard read (issue 32):
// an agent's config is the reference's answer for an agent without one, a trace is its events (an
// empty list for a trace without any), and /controls/schema is a 404 that says so, not a control id.
func TestReferenceSDKRoutes(t *testing.T) {
	ts, _ := fullServer(t)
	ts.initAgent("bot")
	c := ts.ok(200, "GET", "/api/v1/agents/Bot/config", nil)
	want := map[string]any{"agent_name": "bot", "body": nil, "body_format": "text", "prompt_enabled": true, "prompt_source": "none",
		"model_id": nil, "model_provider": nil, "model_allowed": true, "model_cost_tier": nil, "model_source": "code",
		"delivery_state": "blocked_insecure_auth", "etag": nil, "current_version": 0.0, "source_instruction": nil,
		"source_reported_at": nil, "updated_by_hash": nil, "created_at": nil, "updated_at": nil}
	if len(c) != len(want) {
		t.Fatalf("config %v", c)
	}
	for k, v := range want {
		if got, ok := c[k]; !ok || got != v {
			t.Errorf("config %s = %v, want %v", k, got, v)
		}
	}
	ts.expectProblem(404, problem.CodeAgentNotFound, "GET", "/api/v1/agents/nobody/config", nil)
	ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/agents/no%20spaces/config", nil)

	trace := "4bf92f3577b34da6a3ce929d0e0e4736"
	ts.ok(202, "POST", "/api/v1/observability/events", map[string]any{"events": []any{map[string]any{
		"control_execution_id": "0f8fad5b-d9cb-469f-a165-70867728950e", "trace_id": trace, "span_id": "00f067aa0ba902b7",
		"agent_name": "bot", "control_id": 1, "control_name": "deny-x", "check_stage": "pre", "applies_to": "llm_call",
		"action": "deny", "matched": true, "confidence": 1, "timestamp": "2026-01-01T00:00:00Z"}}})
	tr := ts.ok(200, "GET", "/api/v1/observability/traces/"+trace, nil)
	if tr["trace_id"] != trace || tr["total"] != 1.0 || len(tr["events"].([]any)) != 1 {
		t.Fatalf("trace %v", tr)
	}
	empty := ts.ok(200, "GET", "/api/v1/observability/traces/0000000000000000000000000000dead", nil)
	if empty["total"] != 0.0 || len(empty["events"].([]any)) != 0 {
		t.Fatalf("a trace without events: %v", empty)
	}

	p := ts.expectProblem(404, problem.CodeNotFound, "GET", "/api/v1/controls/schema", nil)
	if len(p.Errors) != 0 {
		t.Fatalf("%+v", p)
	}
}
