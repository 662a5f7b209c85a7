package jsonvalidate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/jsonvalidate"
)

// TestEngineBlocksBadToolArguments runs the json evaluator through the engine: a deny control on the
// arguments of a tool blocks a call whose arguments violate the rules and lets a good one through.
func TestEngineBlocksBadToolArguments(t *testing.T) {
	data, err := guard.ParseControlData([]byte(`{
	  "scope": {"step_types": ["tool"], "step_names": ["transfer"], "stages": ["pre"]},
	  "condition": {"selector": {"path": "input"}, "evaluator": {"name": "json", "config": {
	    "required": ["amount", "to"],
	    "field_types": {"amount": "number"},
	    "constraints": {"amount": {"min": 0, "max": 1000}, "currency": {"enum": ["EUR", "USD"]}}
	  }}},
	  "action": {"decision": "deny"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := guard.New()
	if err := eng.Update([]guard.Control{{ID: 1, Name: "transfer-args", Data: data}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		input any
		want  guard.Decision
	}{
		{"good arguments", map[string]any{"amount": 20.0, "to": "ann", "currency": "EUR"}, guard.DecisionAllow},
		{"amount too high", map[string]any{"amount": 5000.0, "to": "ann"}, guard.DecisionDeny},
		{"missing recipient", map[string]any{"amount": 1.0}, guard.DecisionDeny},
		{"arguments as JSON text", `{"amount": 20, "to": "ann"}`, guard.DecisionAllow},
		{"arguments not JSON", `amount=20&to=ann`, guard.DecisionDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eng.Evaluate(context.Background(), &guard.Step{Type: "tool", Name: "transfer", Input: tt.input}, guard.StagePre)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision != tt.want || len(res.Errors) != 0 {
				t.Fatalf("decision %s (errors %v), want %s", res.Decision, res.Errors, tt.want)
			}
			if tt.want == guard.DecisionDeny && res.Matches[0].Result.Message == "" {
				t.Fatal("a deny without a message")
			}
		})
	}
}

// TestSaveReportsSchemaProblemsByPath checks that a bad schema in a control is reported with the path
// the API returns in its 422.
func TestSaveReportsSchemaProblemsByPath(t *testing.T) {
	_, err := guard.ParseControlData([]byte(`{
	  "condition": {"selector": {"path": "input"}, "evaluator": {"name": "json", "config": {
	    "schema": {"properties": {"age": {"type": "whole number"}}},
	    "constraints": {"to": {"pattern": "(unclosed"}}
	  }}},
	  "action": {"decision": "deny"}
	}`))
	var ve *guard.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *guard.ValidationError", err)
	}
	want := map[string]bool{
		"condition.evaluator.config.schema.properties.age.type": false,
		"condition.evaluator.config.constraints.to.pattern":     false,
	}
	for _, p := range ve.Problems {
		if _, ok := want[p.Field]; ok {
			want[p.Field] = true
		}
		if strings.Contains(p.Message, "whole number") || strings.Contains(p.Message, "unclosed") {
			t.Errorf("problem %+v echoes the config", p)
		}
	}
	for f, seen := range want {
		if !seen {
			t.Errorf("no problem on %s in %+v", f, ve.Problems)
		}
	}
}
