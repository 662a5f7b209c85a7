package server

import (
	"fmt"
	"strings"
	"testing"

	// The detector evaluators (issue 15) register themselves on import, as in examples/server; the
	// decision corpus (testdata/cases/detectors.yaml) needs them too.
	_ "github.com/guardrail-control/guard/evaluator/jsonvalidate"
	_ "github.com/guardrail-control/guard/evaluator/pii"
	_ "github.com/guardrail-control/guard/evaluator/promptattack"
	_ "github.com/guardrail-control/guard/evaluator/secrets"
	_ "github.com/guardrail-control/guard/evaluator/sqlguard"
)

// TestDetectorsListed: GET /evaluators lists each detector with its config schema.
func TestDetectorsListed(t *testing.T) {
	ts := newTS(t)
	m := ts.ok(200, "GET", "/api/v1/evaluators", nil)
	want := map[string]string{"sql": "required_column_values", "secrets": "rule_groups", "pii": "min_confidence", "json": "field_patterns"}
	for _, e := range evaluatorValues(t, m) {
		e := e.(map[string]any)
		key, ok := want[e["name"].(string)]
		if !ok {
			continue
		}
		props := e["config_schema"].(map[string]any)["properties"].(map[string]any)
		if props[key] == nil || props["on_error"] == nil || props["timeout_ms"] == nil {
			t.Errorf("%s: schema properties %v lack %s, on_error or timeout_ms", e["name"], props, key)
		}
		delete(want, e["name"].(string))
	}
	if len(want) > 0 {
		t.Fatalf("not listed: %v", want)
	}
}

// TestDetectorsThroughAPI saves a control using each detector, evaluates a step that trips it and one
// that does not, and checks that the result never carries the detected value.
func TestDetectorsThroughAPI(t *testing.T) {
	ts := newTS(t)
	tests := []struct {
		name      string
		condition map[string]any
		stage     string
		bad, good map[string]any
		hidden    string // must not appear in the evaluation response
	}{
		{
			name:      "secrets",
			condition: map[string]any{"selector": map[string]any{"path": "output"}, "evaluator": map[string]any{"name": "secrets", "config": map[string]any{}}},
			stage:     "post",
			bad:       map[string]any{"type": "llm", "name": "chat", "output": "token ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT"},
			good:      map[string]any{"type": "llm", "name": "chat", "output": "all clear"},
			hidden:    "R8x2Lq9ZtV4mN7cW1pK3",
		},
		{
			name:      "pii",
			condition: map[string]any{"selector": map[string]any{"path": "output"}, "evaluator": map[string]any{"name": "pii", "config": map[string]any{"entities": []any{"us_ssn", "email"}}}},
			stage:     "post",
			bad:       map[string]any{"type": "llm", "name": "chat", "output": "SSN 536-22-1234, mail jane@example.com"},
			good:      map[string]any{"type": "llm", "name": "chat", "output": "no personal data"},
			hidden:    "536-22-1234",
		},
		{
			name: "sql",
			condition: map[string]any{"selector": map[string]any{"path": "*"}, "evaluator": map[string]any{"name": "sql", "config": map[string]any{
				"query_field": "input.query", "required_column_values": map[string]any{"tenant_id": "tenant_id"}}}},
			stage:  "pre",
			bad:    map[string]any{"type": "llm", "name": "chat", "input": map[string]any{"query": "SELECT * FROM t WHERE tenant_id = 'other'"}, "context": map[string]any{"tenant_id": "acme"}},
			good:   map[string]any{"type": "llm", "name": "chat", "input": map[string]any{"query": "SELECT * FROM t WHERE tenant_id = 'acme'"}, "context": map[string]any{"tenant_id": "acme"}},
			hidden: "'other'",
		},
		{
			name:      "json",
			condition: map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "json", "config": map[string]any{"required_fields": []any{"to"}, "field_constraints": map[string]any{"amount": map[string]any{"max": 100}}}}},
			stage:     "pre",
			bad:       map[string]any{"type": "llm", "name": "chat", "input": map[string]any{"to": "ann", "amount": 987654321}},
			good:      map[string]any{"type": "llm", "name": "chat", "input": map[string]any{"to": "ann", "amount": 50}},
			// Long enough never to occur by chance in a control_execution_id (a random UUID: "5000" did).
			hidden: "987654321",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := "detector-" + tt.name
			id := ts.createControl("ctl-"+tt.name, map[string]any{"condition": tt.condition, "action": map[string]any{"decision": "deny"}})
			ts.initAgent(agent)
			ts.link(agent, id)
			for _, c := range []struct {
				step map[string]any
				want string
			}{{tt.bad, "deny"}, {tt.good, "allow"}} {
				r := ts.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": tt.stage, "step": c.step})
				if r.Code != 200 {
					t.Fatalf("evaluation: %d %s", r.Code, r.Body)
				}
				if got := decision(r.obj(t)); got != c.want {
					t.Fatalf("decision %s, want %s: %s", got, c.want, r.Body)
				}
				if c.want == "deny" && strings.Contains(string(r.Body), tt.hidden) {
					t.Fatalf("the response carries the detected value: %s", r.Body)
				}
			}
		})
	}
}

// TestDetectorConfigProblems: a bad detector config is a 422 naming the field, without its value.
func TestDetectorConfigProblems(t *testing.T) {
	ts := newTS(t)
	tests := []struct {
		config map[string]any
		name   string
		field  string
		secret string
	}{
		{map[string]any{"allow_patterns": []any{"(hunter2"}}, "secrets", "data.condition.evaluator.config.allow_patterns.0", "hunter2"},
		{map[string]any{"countries": []any{"ZZ-hunter2"}}, "pii", "data.condition.evaluator.config.countries.0", "hunter2"},
		{map[string]any{"blocked_operations": []any{"hunter2"}}, "sql", "data.condition.evaluator.config.blocked_operations.0", "hunter2"},
		{map[string]any{"field_patterns": map[string]any{"a": "(hunter2"}}, "json", "data.condition.evaluator.config.field_patterns.a", "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"name": "bad-" + tt.name, "data": map[string]any{
				"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": tt.name, "config": tt.config}},
				"action":    map[string]any{"decision": "deny"}}}
			r := ts.do("PUT", "/api/v1/controls", body)
			if r.Code != 422 {
				t.Fatalf("status %d: %s", r.Code, r.Body)
			}
			b := r.problem(t)
			var fields []string
			for _, p := range b.Errors {
				fields = append(fields, p.Field)
			}
			if !strings.Contains(fmt.Sprint(fields), tt.field) {
				t.Fatalf("problem fields %v, want %s", fields, tt.field)
			}
			if strings.Contains(string(r.Body), tt.secret) {
				t.Fatalf("the problem echoes the config value: %s", r.Body)
			}
		})
	}
}
