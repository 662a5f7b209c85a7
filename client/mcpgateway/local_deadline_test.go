package mcpgateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
	"github.com/guardrail-control/guard/evaluator"
)

// slowEval answers "no match" after a second, as an evaluator that spends its whole timeout_ms does,
// unless its context ends first. (A backtracking regex would leave regexp2's clock goroutine running
// past the test, which goleak reports.)
type slowEval struct{}

func (slowEval) Evaluate(ctx context.Context, _ *evaluator.Data) (evaluator.Result, error) {
	select {
	case <-ctx.Done():
		return evaluator.Result{}, ctx.Err()
	case <-time.After(time.Second):
		return evaluator.Result{Confidence: 1}, nil
	}
}

// TestLocalGuardDeadline: issue 23. guard mcp --controls evaluated with the call's context, which has no
// deadline: five controls that each spend a second held the call 5 s. One deadline
// (guard.DefaultEvaluationTimeout, 2 s) now bounds the stage; the controls it cuts fall to on_error deny.
// The bound (4 s) is safe both ways: the old code took at least 5 s by construction (five timers that
// never fire early), the new one the deadline plus scheduling.
func TestLocalGuardDeadline(t *testing.T) {
	reg := evaluator.NewRegistry()
	reg.Register(evaluator.Factory{Name: "slow", Description: "test", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) { return slowEval{}, nil }})
	var controls []guard.Control
	for i := range 5 {
		controls = append(controls, guard.Control{ID: int64(i + 1), Name: fmt.Sprintf("slow-%d", i), Data: guard.ControlData{Enabled: true,
			Condition: guard.Condition{Selector: &guard.Selector{Path: "input"}, Evaluator: &guard.EvaluatorSpec{Name: "slow", Config: map[string]any{}}},
			Action:    guard.Action{Decision: guard.DecisionDeny}}})
	}
	g, err := mcpgateway.NewLocalGuard(controls, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := guard.Step{Type: mcpgateway.StepType, Name: "t", Input: map[string]any{"q": "x"}}
	start := time.Now()
	err = g.CheckStep(context.Background(), &step, guard.StagePre)
	elapsed := time.Since(start)
	var v *guard.ControlViolationError
	if !errors.As(err, &v) {
		t.Fatalf("err %v, want a violation (on_error deny at the deadline)", err)
	}
	if bound := 2 * guard.DefaultEvaluationTimeout; elapsed >= bound {
		t.Fatalf("refused after %v, past one deadline (%v) plus margin", elapsed, guard.DefaultEvaluationTimeout)
	}
}
