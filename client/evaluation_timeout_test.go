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

// TestShadowSharesTheStageDeadline: issue 23. An enforced and a shadow sdk control that both backtrack
// on a catastrophic input each had a deadline of their own (the shadow pass first, then the enforced
// one), so a protected call took twice Config.EvaluationTimeout; with a server control evaluated
// in-process and its shadow, four times. Now one deadline bounds the stage: the call is refused (on_error
// deny) within it plus scheduling, and the shadow pass, run last, is counted as left short. The bound
// 2x the timeout is safe both ways: the old code took at least 2x by construction (two timers that
// never fire early).
func TestShadowSharesTheStageDeadline(t *testing.T) {
	const timeout = time.Second
	for _, tt := range []struct {
		name  string
		ex    guard.Execution
		local bool
	}{{"sdk controls", guard.ExecutionSDK, false}, {"server controls in local mode", guard.ExecutionServer, true}} {
		t.Run(tt.name, func(t *testing.T) {
			sh := ctl(2, "shadow-slow", tt.ex, guard.DecisionDeny, "input", `^(?=(a+)+$)`)
			sh.Control.Mode = guard.ModeShadow
			_, srv := newFakeAPI(t, ctl(1, "slow", tt.ex, guard.DecisionDeny, "input", `^(?=(a+)+$)`), sh)
			cfg := testConfig(srv.URL)
			cfg.EvaluationTimeout = timeout
			cfg.Observability = Bool(true)
			cfg.LocalServerControls = tt.local
			a := initAgent(t, cfg)
			p := Protect(a, echo, StepName("chat"))
			start := time.Now()
			_, err := p(context.Background(), strings.Repeat("a", 40)+"c")
			elapsed := time.Since(start)
			var v *guard.ControlViolationError
			if !errors.As(err, &v) {
				t.Fatalf("err %v, want a violation (on_error deny at the deadline)", err)
			}
			if elapsed >= 2*timeout {
				t.Fatalf("refused after %v: more than one deadline (%v)", elapsed, timeout)
			}
			if n := a.ShortShadowEvaluations(); n != 1 {
				t.Fatalf("ShortShadowEvaluations %d, want 1", n)
			}
		})
	}
}
