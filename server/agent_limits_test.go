package server

import (
	"fmt"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// nested returns a JSON object nested depth levels deep: {"a":{"a":...{}}}.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// big returns a JSON object whose encoding is a little over n bytes.
func big(n int) string { return `{"a":"` + strings.Repeat("x", n) + `"}` }

// TestAgentFreeJSONLimits: every free-form JSON document an agent registration stores has the depth
// limit of control data (64 levels) and a size limit (64 KiB encoded): past either, a 422 naming the
// field, for initAgent and PATCH alike; at the limits the registration is stored.
func TestAgentFreeJSONLimits(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("limits")
	step := func(field, doc string) string {
		return `{"agent":{"agent_name":"limits-x"},"steps":[{"type":"llm","name":"chat"},{"type":"tool","name":"t","` + field + `":` + doc + `}]}`
	}
	tests := []struct {
		name, method, path, body string
		field, code              string // "": accepted
	}{
		{"agent metadata 9,990 levels", "POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"limits-x","agent_metadata":` + nested(9990) + `}}`, "agent.agent_metadata", guard.CodeMaxDepth},
		{"agent metadata 65 levels", "POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"limits-x","agent_metadata":` + nested(65) + `}}`, "agent.agent_metadata", guard.CodeMaxDepth},
		{"agent metadata too large", "POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"limits-x","agent_metadata":` + big(guard.MaxFreeJSONBytes) + `}}`, "agent.agent_metadata", guard.CodeTooLong},
		{"input_schema too deep", "POST", "/api/v1/agents/initAgent", step("input_schema", nested(65)), "steps.1.input_schema", guard.CodeMaxDepth},
		{"output_schema too large", "POST", "/api/v1/agents/initAgent", step("output_schema", big(guard.MaxFreeJSONBytes)), "steps.1.output_schema", guard.CodeTooLong},
		{"step metadata too deep", "POST", "/api/v1/agents/initAgent", step("metadata", nested(200)), "steps.1.metadata", guard.CodeMaxDepth},
		{"patch metadata too deep", "PATCH", "/api/v1/agents/limits", `{"agent_metadata":` + nested(9990) + `}`, "agent_metadata", guard.CodeMaxDepth},
		{"patch metadata too large", "PATCH", "/api/v1/agents/limits", `{"agent_metadata":` + big(guard.MaxFreeJSONBytes) + `}`, "agent_metadata", guard.CodeTooLong},
		{"64 levels are fine", "POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"limits-ok","agent_metadata":` + nested(64) + `},"steps":[{"type":"t","name":"n","input_schema":` + nested(64) + `}]}`, "", ""},
		{"patch 64 levels is fine", "PATCH", "/api/v1/agents/limits", `{"agent_metadata":` + nested(64) + `}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.do(tt.method, tt.path, tt.body)
			if tt.field == "" {
				if r.Code != 200 {
					t.Fatalf("status %d: %.300s", r.Code, r.Body)
				}
				return
			}
			if r.Code != 422 {
				t.Fatalf("status %d: %.300s", r.Code, r.Body)
			}
			b := r.problem(t)
			if len(b.Errors) != 1 || b.Errors[0].Field != tt.field || b.Errors[0].Code != tt.code {
				t.Fatalf("errors %+v", b.Errors)
			}
		})
	}
	// Nothing of the refused registrations was stored.
	ts.expectProblem(404, "AGENT_NOT_FOUND", "GET", "/api/v1/agents/limits-x", nil)
}

// TestInitAgentStepLimit: at most MaxAgentSteps steps per registration, and per agent after a strict
// registration adds to its steps; a list of exactly that many is stored in order (in several batches).
func TestInitAgentStepLimit(t *testing.T) {
	ts := newTS(t)
	steps := func(from, n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"type": "tool", "name": fmt.Sprintf("t%d", from+i)}
		}
		return out
	}
	body := func(steps []map[string]any, mode string) map[string]any {
		return map[string]any{"agent": map[string]any{"agent_name": "many"}, "steps": steps, "conflict_mode": mode}
	}
	b := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/agents/initAgent", body(steps(0, guard.MaxAgentSteps+1), "strict"))
	if len(b.Errors) != 1 || b.Errors[0].Field != "steps" {
		t.Fatalf("errors %+v", b.Errors)
	}
	ts.ok(200, "POST", "/api/v1/agents/initAgent", body(steps(0, guard.MaxAgentSteps), "strict"))
	m := ts.ok(200, "GET", "/api/v1/agents/many", nil)
	got, _ := m["steps"].([]any)
	if len(got) != guard.MaxAgentSteps {
		t.Fatalf("%d steps stored", len(got))
	}
	for _, i := range []int{0, 499, 500, 501, guard.MaxAgentSteps - 1} {
		if name := got[i].(map[string]any)["name"]; name != fmt.Sprintf("t%d", i) {
			t.Fatalf("step %d is %v", i, name)
		}
	}
	// Strict mode adds to the stored steps: not past the limit.
	b = ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/agents/initAgent", body(steps(guard.MaxAgentSteps, 1), "strict"))
	if len(b.Errors) != 1 || b.Errors[0].Field != "steps" {
		t.Fatalf("errors %+v", b.Errors)
	}
	// Overwrite replaces them: fine.
	ts.ok(200, "POST", "/api/v1/agents/initAgent", body(steps(guard.MaxAgentSteps, 3), "overwrite"))
}
