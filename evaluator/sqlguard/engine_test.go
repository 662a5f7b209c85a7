package sqlguard_test

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/sqlguard"
)

// TestEngineTenantFilter runs the sql evaluator through the engine on the whole step (selector "*"),
// so that it sees the query in the tool input and the tenant in the context.
func TestEngineTenantFilter(t *testing.T) {
	data, err := guard.ParseControlData([]byte(`{
	  "scope": {"step_types": ["tool"], "step_names": ["run_sql"], "stages": ["pre"]},
	  "condition": {"selector": {"path": "*"}, "evaluator": {"name": "sql", "config": {
	    "query_field": "input.query", "allowed_operations": ["SELECT"], "allow_multi_statements": false,
	    "required_column_values": {"tenant_id": "tenant_id"}, "require_limit": true, "max_limit": 1000}}},
	  "action": {"decision": "deny"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := guard.New()
	if err := eng.Update([]guard.Control{{ID: 1, Name: "tenant-sql", Data: data}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		query string
		want  guard.Decision
	}{
		{"SELECT * FROM orders WHERE tenant_id = 'acme' LIMIT 10", guard.DecisionAllow},
		{"SELECT * FROM orders WHERE tenant_id = 'globex' LIMIT 10", guard.DecisionDeny},
		{"DELETE FROM orders WHERE tenant_id = 'acme'", guard.DecisionDeny},
		{"SELECT * FROM orders WHERE tenant_id = 'acme' LIMIT 10; DROP TABLE orders", guard.DecisionDeny},
	} {
		step := &guard.Step{Type: "tool", Name: "run_sql", Input: map[string]any{"query": tt.query}, Context: map[string]any{"tenant_id": "acme"}}
		res, err := eng.Evaluate(context.Background(), step, guard.StagePre)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != tt.want {
			t.Fatalf("%q: decision %s, want %s (%v)", tt.query, res.Decision, tt.want, res.Matches)
		}
	}
}
