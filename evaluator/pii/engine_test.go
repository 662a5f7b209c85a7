package pii_test

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/pii"
)

// TestEngineFlagsPersonalDataInOutput runs the pii evaluator through the engine at post stage.
func TestEngineFlagsPersonalDataInOutput(t *testing.T) {
	data, err := guard.ParseControlData([]byte(`{
	  "scope": {"stages": ["post"]},
	  "condition": {"selector": {"path": "output"}, "evaluator": {"name": "pii", "config": {"entities": ["credit_card", "us_ssn", "email"]}}},
	  "action": {"decision": "deny"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := guard.New()
	if err := eng.Update([]guard.Control{{ID: 1, Name: "no-pii", Data: data}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		output any
		want   guard.Decision
	}{
		{"The card on file is 5555 5555 5555 4444.", guard.DecisionDeny},
		{map[string]any{"customer": map[string]any{"email": "jane@example.com"}}, guard.DecisionDeny},
		{"Order 12345 shipped on 2024-05-01.", guard.DecisionAllow},
	} {
		res, err := eng.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Output: tt.output}, guard.StagePost)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != tt.want {
			t.Fatalf("%v: decision %s, want %s", tt.output, res.Decision, tt.want)
		}
	}
}
