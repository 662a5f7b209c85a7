package guard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

// catastrophic is a look-around pattern that backtracks exponentially on catastrophicInput: each match
// runs until its timeout.
const catastrophic = `^(?=(a+)+$)`

var catastrophicInput = strings.Repeat("a", 40) + "c"

// catastrophicControls are n controls of decision d whose regex runs until its timeout (timeout_ms, or
// 1 s when 0).
func catastrophicControls(n int, d guard.Decision, onError string, timeoutMS float64) []guard.Control {
	cfg := map[string]any{"pattern": catastrophic}
	if timeoutMS > 0 {
		cfg["timeout_ms"] = timeoutMS
	}
	if onError != "" {
		cfg["on_error"] = onError
	}
	out := make([]guard.Control, n)
	for i := range out {
		out[i] = ctl(int64(i+1), d, leaf("input", "regex", cfg))
	}
	return out
}

// outcome is what one Evaluate or Check call returned.
type outcome struct {
	res *guard.Result
	err error
}

// runWithin calls Evaluate (or Check) in a goroutine and waits for it with a generous deadline: below
// the time one control's match alone would take (10 s), far above what a bounded evaluation needs. It
// reports false when the call was still running at the deadline.
func runWithin(ctx context.Context, e *guard.Engine, check bool) (outcome, bool) {
	done := make(chan outcome, 1)
	go func() {
		if check {
			done <- outcome{err: e.Check(ctx, llm(catastrophicInput), guard.StagePre)}
			return
		}
		res, err := e.Evaluate(ctx, llm(catastrophicInput), guard.StagePre)
		done <- outcome{res: res, err: err}
	}()
	select {
	case o := <-done:
		return o, true
	case <-time.After(6 * time.Second):
		return outcome{}, false
	}
}

// TestDeadlineBoundsWholeEvaluation: 30 controls that each run 10 s (timeout_ms) take 300 s one after
// another; with a context deadline the evaluation ends soon after it (the match in flight stops at the
// deadline, no other starts), every control that could not run is an error naming the deadline, and
// on_error decides.
func TestDeadlineBoundsWholeEvaluation(t *testing.T) {
	const n = 30
	tests := []struct {
		name     string
		onError  string
		decision guard.Decision
	}{
		{"on_error deny blocks", "", guard.DecisionDeny},
		{"on_error allow lets through", "allow", guard.DecisionAllow},
	}
	for _, tt := range tests {
		for _, check := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: " Evaluate", true: " Check"}[check], func(t *testing.T) {
				e := guard.New()
				if err := e.Update(catastrophicControls(n, guard.DecisionDeny, tt.onError, 10000)); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				o, ok := runWithin(ctx, e, check)
				if !ok {
					t.Fatal("the evaluation was still running long after its deadline")
				}
				if check {
					var v *guard.ControlViolationError
					if blocked := errors.As(o.err, &v); blocked != (tt.decision == guard.DecisionDeny) {
						t.Fatalf("Check = %v, want decision %s", o.err, tt.decision)
					}
					return
				}
				if o.err != nil {
					t.Fatal(o.err)
				}
				if o.res.Decision != tt.decision || len(o.res.Errors) != n || len(o.res.Matches)+len(o.res.NonMatches) != 0 {
					t.Fatalf("decision %s, %d errors, %d matches, %d non-matches", o.res.Decision, len(o.res.Errors),
						len(o.res.Matches), len(o.res.NonMatches))
				}
				for _, cr := range o.res.Errors {
					if cr.Result.Error != "regex: "+guard.ErrEvaluationDeadline.Error() {
						t.Fatalf("control %d: error %q", cr.ControlID, cr.Result.Error)
					}
					if cr.Result.Matched != (tt.decision == guard.DecisionDeny) {
						t.Fatalf("control %d: matched %v with on_error %q", cr.ControlID, cr.Result.Matched, tt.onError)
					}
				}
			})
		}
	}
}

// TestCancelStopsBacktracking: once the caller cancels (a client that went away), no new match starts,
// so the evaluation goroutine returns after at most the match that was running (1 s), not after the 30
// the controls would run one after another. (A match cannot be interrupted by a cancel, only bounded by
// a deadline: a context with no deadline leaves the match in flight its timeout_ms.)
func TestCancelStopsBacktracking(t *testing.T) {
	e := guard.New()
	if err := e.Update(catastrophicControls(30, guard.DecisionLog, "", 0)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Evaluate(ctx, llm(catastrophicInput), guard.StagePre)
		done <- outcome{res, err}
	}()
	cancel()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		if len(o.res.Errors) != 30 {
			t.Fatalf("%d errors", len(o.res.Errors))
		}
		last := o.res.Errors[len(o.res.Errors)-1]
		if last.Result.Error != "regex: "+guard.ErrEvaluationCancelled.Error() {
			t.Fatalf("error %q", last.Result.Error)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("the evaluation goroutine kept matching after its context was cancelled")
	}
}

// TestDeadlinePassedRunsNoEvaluator: with a context already past its deadline, no evaluator runs.
func TestDeadlinePassedRunsNoEvaluator(t *testing.T) {
	resetCalls()
	e := newEngine(t, ctl(1, guard.DecisionDeny, constLeaf(false, 1, "a")), ctl(2, guard.DecisionLog, constLeaf(true, 1, "b")))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	res, err := e.Evaluate(ctx, llm("x"), guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	if calls("a")+calls("b") != 0 || len(res.Errors) != 2 || res.Decision != guard.DecisionDeny {
		t.Fatalf("calls a=%d b=%d, result %+v", calls("a"), calls("b"), res)
	}
	if !strings.HasSuffix(res.Errors[0].Result.Error, guard.ErrEvaluationDeadline.Error()) {
		t.Fatalf("error %q", res.Errors[0].Result.Error)
	}
}
