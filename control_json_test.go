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
