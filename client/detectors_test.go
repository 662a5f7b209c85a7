package client

import (
	"context"
	"errors"
	"testing"

	guard "github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/pii"
	_ "github.com/guardrail-control/guard/evaluator/promptattack"
	_ "github.com/guardrail-control/guard/evaluator/secrets"
	_ "github.com/guardrail-control/guard/evaluator/sqlguard"
)

// detectorCtl is an sdk control (evaluated in-process) using one of the detector evaluators.
func detectorCtl(id int64, name, path, evaluatorName string, config map[string]any, stage guard.Stage) guard.AgentControl {
	d := guard.ControlData{
		Enabled:   true,
		Execution: guard.ExecutionSDK,
		Scope:     guard.Scope{Stages: []guard.Stage{stage}},
		Condition: guard.Condition{
			Selector:  &guard.Selector{Path: path},
			Evaluator: &guard.EvaluatorSpec{Name: evaluatorName, Config: config},
		},
		Action: guard.Action{Decision: guard.DecisionDeny},
	}
	return guard.AgentControl{ID: id, ControlID: id, Name: name, Enabled: true, Control: d}
}

// TestDetectorsInProcess protects functions with sdk controls that use the secrets, pii and sql
// evaluators: the client evaluates them in-process (the evaluators are registered by import).
func TestDetectorsInProcess(t *testing.T) {
	_, srv := newFakeAPI(t,
		detectorCtl(1, "no-creds", "output", "secrets", map[string]any{}, guard.StagePost),
		detectorCtl(2, "no-cards", "output", "pii", map[string]any{"entities": []any{"credit_card"}}, guard.StagePost),
		detectorCtl(3, "read-only", "input", "sql", map[string]any{"allowed_operations": []any{"SELECT"}}, guard.StagePre),
	)
	a := initAgent(t, testConfig(srv.URL))
	echo := Protect(a, func(_ context.Context, s string) (string, error) { return s, nil }, StepName("chat"))
	tests := []struct {
		in       string
		violates bool
	}{
		{"SELECT 1 FROM t", false},
		{"DELETE FROM t", true},
		{"SELECT 'ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT' FROM t", true},
		{"SELECT '4111 1111 1111 1111' FROM t", true},
	}
	for _, tt := range tests {
		_, err := echo(context.Background(), tt.in)
		var v *guard.ControlViolationError
		if got := errors.As(err, &v); got != tt.violates {
			t.Fatalf("%q: err %v, want a violation: %v", tt.in, err, tt.violates)
		}
	}
}
