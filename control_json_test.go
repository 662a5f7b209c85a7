package guard_test

import (
	"encoding/json"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestSteeringContextJSON: both fields are always written, required_actions as [] when there are none.
func TestSteeringContextJSON(t *testing.T) {
	tests := []struct {
		sc   guard.SteeringContext
		want string
	}{
		{guard.SteeringContext{Message: "m"}, `{"message":"m","required_actions":[]}`},
		{guard.SteeringContext{Message: "m", RequiredActions: []string{}}, `{"message":"m","required_actions":[]}`},
		{guard.SteeringContext{Message: "m", RequiredActions: []string{"a"}}, `{"message":"m","required_actions":["a"]}`},
	}
	for _, tt := range tests {
		for _, v := range []any{tt.sc, &tt.sc, guard.Action{Decision: guard.DecisionSteer, SteeringContext: &tt.sc}} {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if _, isAction := v.(guard.Action); isAction {
				want := `{"decision":"steer","steering_context":` + tt.want + `}`
				if string(b) != want {
					t.Errorf("Action JSON = %s, want %s", b, want)
				}
				continue
			}
			if string(b) != tt.want {
				t.Errorf("JSON = %s, want %s", b, tt.want)
			}
		}
	}
}

// TestScopeJSONKeepsEmptyLists: nil lists are left out (no restriction), empty ones are written as [] so
// that Validate refuses a Go-built scope that could never apply, as it refuses the same JSON.
func TestScopeJSONKeepsEmptyLists(t *testing.T) {
	tests := []struct {
		scope guard.Scope
		want  string
	}{
		{guard.Scope{}, `{}`},
		{guard.Scope{Stages: []guard.Stage{}}, `{"stages":[]}`},
		{guard.Scope{StepTypes: []string{}, StepNames: []string{"a"}, StepNameRegex: "^x"}, `{"step_types":[],"step_names":["a"],"step_name_regex":"^x"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.scope)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("JSON = %s, want %s", b, tt.want)
		}
	}
	for _, scope := range []guard.Scope{{Stages: []guard.Stage{}}, {StepTypes: []string{}}, {StepNames: []string{}}} {
		d := guard.ControlData{
			Enabled: true,
			Scope:   scope,
			Condition: guard.Condition{Selector: &guard.Selector{Path: "input"},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": "x"}}},
			Action: guard.Action{Decision: guard.DecisionDeny},
		}
		if err := d.Validate(); err == nil {
			t.Errorf("Validate accepted the never-applying scope %+v", scope)
		}
	}
}
