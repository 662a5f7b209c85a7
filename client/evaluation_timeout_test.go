package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// TestInProcessEvaluationDeadline: sdk controls whose look-around pattern backtracks for its whole 1 s
// timeout would hold the protected call for 30 s one after another; under Config.EvaluationTimeout the
// call is refused (on_error deny) soon after the deadline, and the protected function never runs.
func TestInProcessEvaluationDeadline(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
	}{
		{"explicit", 200 * time.Millisecond},
		{"default", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var controls []guard.AgentControl
			for i := int64(1); i <= 30; i++ {
				controls = append(controls, ctl(i, fmt.Sprintf("slow-%d", i), guard.ExecutionSDK, guard.DecisionDeny, "input", `^(?=(a+)+$)`))
			}
			_, srv := newFakeAPI(t, controls...)
			cfg := testConfig(srv.URL)
			cfg.EvaluationTimeout = tt.timeout
			a := initAgent(t, cfg)
			called := false
			p := Protect(a, func(_ context.Context, s string) (string, error) { called = true; return s, nil }, StepName("chat"))
			done := make(chan error, 1)
			go func() {
				_, err := p(context.Background(), strings.Repeat("a", 40)+"c")
				done <- err
			}()
			select {
			case err := <-done:
				var v *guard.ControlViolationError
				if !errors.As(err, &v) || called {
					t.Fatalf("err %v, function called %v", err, called)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the protected call was still being evaluated long after the evaluation deadline")
			}
		})
	}
}

func TestEvaluationTimeoutDefault(t *testing.T) {
	s, err := Config{AgentName: "a"}.resolve()
	if err != nil || s.EvaluationTimeout != guard.DefaultEvaluationTimeout {
		t.Fatalf("%v %v", s.EvaluationTimeout, err)
	}
}
