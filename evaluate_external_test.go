package guard_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

func sleepLeaf(key string, ms, timeoutMS int, matched bool) guard.Condition {
	return leaf("input", "sleep", map[string]any{"key": key, "sleep_ms": float64(ms), "timeout_ms": float64(timeoutMS), "matched": matched})
}

// waitCancelled waits (with a deadline) until the sleep evaluator key reports its context ended.
//
// An evaluator the engine never started passes too: no evaluator starts once the evaluation is cancelled,
// so a goroutine that reached the leaf after the cancellation skips it.
func waitCancelled(t *testing.T, key string) {
	t.Helper()
	grace := time.After(time.Second) // long enough for a goroutine that got past the check to start it
	deadline := time.After(5 * time.Second)
	for {
		select {
		case k := <-cancelled:
			if k == key {
				return
			}
		case <-grace:
			if calls(key) == 0 {
				return
			}
		case <-deadline:
			t.Fatalf("evaluator %s was not cancelled", key)
		}
	}
}

func drainCancelled() {
	for {
		select {
		case <-cancelled:
		default:
			return
		}
	}
}

func TestExternalEvaluatorsRunConcurrently(t *testing.T) {
	e := newEngine(t,
		ctl(1, guard.DecisionLog, sleepLeaf("a", 200, 300, true)),
		ctl(2, guard.DecisionWarn, sleepLeaf("b", 200, 300, true)),
		ctl(3, guard.DecisionSteer, sleepLeaf("c", 200, 300, false)),
		ctl(4, guard.DecisionLog, has("x")),
	)
	start := time.Now()
	res, err := e.Evaluate(bg, llm("x"), guard.StagePre)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 3 || len(res.NonMatches) != 1 || len(res.Errors) != 0 {
		t.Fatalf("matches %v non_matches %v errors %+v", names(res.Matches), names(res.NonMatches), res.Errors)
	}
	// Sequentially this takes 600 ms; concurrently about 200 ms.
	if elapsed >= 500*time.Millisecond {
		t.Errorf("three 200 ms external evaluators took %v", elapsed)
	}
	// Evaluation order is kept in the lists: steer first, then by id.
	if got := names(res.Matches); strings.Join(got, ",") != "c1,c2,c4" {
		t.Errorf("matches order %v", got)
	}
}

func TestExternalTimeoutIsAnEvaluatorError(t *testing.T) {
	e := newEngine(t,
		ctl(1, guard.DecisionDeny, sleepLeaf("slow", 5000, 50, true)),
	)
	drainCancelled()
	start := time.Now()
	res, err := e.Evaluate(bg, llm("x"), guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("a 50 ms timeout took %v", time.Since(start))
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Result.Error, "timed out") || res.Decision != guard.DecisionDeny {
		t.Fatalf("result %+v", res)
	}
	waitCancelled(t, "slow")
}

func TestDenyCancelsExternalEvaluators(t *testing.T) {
	tests := []struct {
		name     string
		controls []guard.Control
		winner   int64
		// checkSkips: Check does not even start the slow control (it cannot change the decision).
		checkSkips bool
	}{
		{"local deny", []guard.Control{
			ctl(1, guard.DecisionLog, sleepLeaf("slow", 10000, 20000, true)),
			ctl(2, guard.DecisionDeny, has("x")),
		}, 2, true},
		{"fast external deny after a slow one", []guard.Control{
			ctl(1, guard.DecisionDeny, sleepLeaf("slow", 10000, 20000, true)),
			ctl(2, guard.DecisionDeny, sleepLeaf("fast", 20, 20000, true)),
		}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.controls...)
			for _, check := range []bool{false, true} {
				drainCancelled()
				resetCalls()
				start := time.Now()
				var err error
				if check {
					err = e.Check(bg, llm("x"), guard.StagePre)
				} else {
					var res *guard.Result
					res, err = e.Evaluate(bg, llm("x"), guard.StagePre)
					if err == nil {
						if len(res.Matches) != 1 || res.Matches[0].ControlID != tt.winner {
							t.Fatalf("matches %v", names(res.Matches))
						}
						err = res.Err()
					}
				}
				if time.Since(start) > 5*time.Second {
					t.Fatalf("took %v", time.Since(start))
				}
				var v *guard.ControlViolationError
				if !errors.As(err, &v) || v.ControlID != tt.winner {
					t.Fatalf("check=%v: %v", check, err)
				}
				if check && tt.checkSkips {
					if calls("slow") != 0 {
						t.Errorf("Check started a control that cannot change the decision")
					}
					continue
				}
				waitCancelled(t, "slow")
			}
		})
	}
}

func TestConcurrencyBound(t *testing.T) {
	var controls []guard.Control
	for i := int64(1); i <= 4; i++ {
		controls = append(controls, ctl(i, guard.DecisionLog, sleepLeaf("b", 100, 1000, true)))
	}
	e := guard.New(guard.WithRegistry(fakeRegistry()), guard.WithMaxConcurrency(1))
	if err := e.Update(controls); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := e.Evaluate(bg, llm("x"), guard.StagePre)
	if err != nil || len(res.Matches) != 4 {
		t.Fatalf("%v %+v", err, res)
	}
	if time.Since(start) < 400*time.Millisecond {
		t.Errorf("four 100 ms evaluators with concurrency 1 took %v", time.Since(start))
	}
}
