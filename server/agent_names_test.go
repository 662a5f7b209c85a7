package server

import (
	"net/url"
	"strings"
	"testing"
)

// TestCompatibilityAgentNamesAreRefused: with agents "k-agent" and "istanbul" registered, spellings
// that Unicode case folding maps onto them (Kelvin sign U+212A, İ U+0130) are a 422 naming the field
// wherever an agent name is accepted, never another name for the ASCII agent.
func TestCompatibilityAgentNamesAreRefused(t *testing.T) {
	ts, _ := fullServer(t)
	ts.initAgent("k-agent")
	ts.initAgent("istanbul")
	for _, name := range []string{"\u212a-agent", "\u0130stanbul", "\uff4b-agent", "k-agent\u00a0"} {
		esc := url.PathEscape(name)
		step := map[string]any{"type": "llm", "name": "chat", "input": "x"}
		tests := []struct {
			method, path string
			body         any
			field        string
		}{
			{"GET", "/api/v1/agents/" + esc, nil, "agent_name"},
			{"PATCH", "/api/v1/agents/" + esc, map[string]any{"agent_description": "x"}, "agent_name"},
			{"GET", "/api/v1/agents/" + esc + "/controls", nil, "agent_name"},
			{"POST", "/api/v1/agents/" + esc + "/controls/1", nil, "agent_name"},
			{"DELETE", "/api/v1/agents/" + esc + "/controls/1", nil, "agent_name"},
			{"POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": name}, "steps": []any{}}, "agent.agent_name"},
			{"POST", "/api/v1/evaluation", map[string]any{"agent_name": name, "stage": "pre", "step": step}, "agent_name"},
			{"GET", "/api/v1/agents?name=" + url.QueryEscape(name), nil, "name"},
			{"GET", "/api/v1/observability/stats?agent_name=" + url.QueryEscape(name), nil, "agent_name"},
			{"POST", "/api/v1/observability/events/query", map[string]any{"agent_name": name}, "agent_name"},
			{"POST", "/api/v1/observability/events", map[string]any{"events": []any{map[string]any{
				"agent_name": name, "control_id": 1, "control_name": "c", "check_stage": "pre", "step_type": "llm",
				"action": "deny", "matched": true, "confidence": 1, "timestamp": "2026-01-01T00:00:00Z",
				"control_execution_id": "00000000-0000-4000-8000-000000000001", "trace_id": "0123456789abcdef0123456789abcdef",
				"span_id": "0123456789abcdef", "step_name": "chat"}}}, "events.0.agent_name"},
		}
		for _, tt := range tests {
			r := ts.do(tt.method, tt.path, tt.body)
			if r.Code != 422 {
				t.Errorf("%q: %s %s: status %d: %.300s", name, tt.method, tt.path, r.Code, r.Body)
				continue
			}
			b := r.problem(t)
			found := false
			for _, e := range b.Errors {
				found = found || e.Field == tt.field
			}
			if !found {
				t.Errorf("%q: %s %s: no error on %s: %s", name, tt.method, tt.path, tt.field, r.Body)
			}
			// instance is the request's own path (RFC 9457); what the server says about the name is elsewhere.
			said := b.Detail
			for _, e := range b.Errors {
				said += e.Message
			}
			if strings.Contains(said, name) {
				t.Errorf("%q: %s %s: the body echoes the name: %s", name, tt.method, tt.path, r.Body)
			}
		}
	}
	// The ASCII spellings still work, in any case.
	ts.ok(200, "GET", "/api/v1/agents/K-Agent", nil)
	ts.ok(200, "GET", "/api/v1/agents/ISTANBUL", nil)
	m := ts.ok(200, "GET", "/api/v1/agents?name=K-AG", nil)
	if agents, _ := m["agents"].([]any); len(agents) != 1 {
		t.Fatalf("name filter: %v", m)
	}
}
