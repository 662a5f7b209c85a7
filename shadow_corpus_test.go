package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/cases"
)

// TestShadowNeverChangesDecisions is the property of shadow mode over the corpus: adding any control of
// the corpus in shadow, alone or all of them at once, leaves every Evaluate result (but execution ids
// and durations) and every Check answer of every case as it was, and EvaluateShadow reports for the
// added control what that control alone, enforced, decides.
func TestShadowNeverChangesDecisions(t *testing.T) {
	files, err := cases.Load("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	// Every control of the corpus that compiles on its own, as a shadow control with a fresh id.
	var pool []guard.Control
	seen := map[string]bool{}
	both := guard.WithExecution(guard.ExecutionServer, guard.ExecutionSDK)
	for _, f := range files {
		for _, c := range f.Cases {
			for _, ctl := range c.Controls {
				d, err := guard.ParseControlData(ctl.Data)
				if err != nil || seen[string(ctl.Data)] {
					continue
				}
				seen[string(ctl.Data)] = true
				d.Mode, d.Enabled = guard.ModeShadow, true
				sc := guard.Control{ID: int64(1_000_000 + len(pool)), Name: fmt.Sprintf("shadow-%d", len(pool)), Data: d}
				if guard.New(both).Update([]guard.Control{sc}) != nil {
					continue
				}
				pool = append(pool, sc)
			}
		}
	}
	t.Logf("%d distinct corpus controls in the pool", len(pool))
	if len(pool) < 50 {
		t.Fatalf("only %d corpus controls compile: the property would prove little", len(pool))
	}
	checked := 0
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Want.Invalid || c.Want.EvalError {
				continue
			}
			idx := checked
			t.Run(f.Name+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				shadowCase(t, c, idx, pool)
			})
			checked++
		}
	}
	if checked < 100 || checked*shadowPerCase < len(pool) {
		t.Fatalf("only %d corpus cases evaluated for %d pool controls", checked, len(pool))
	}
}

// shadowPerCase is how many pool controls each case adds alone.
const shadowPerCase = 8

func shadowCase(t *testing.T, c *cases.Case, caseIndex int, pool []guard.Control) {
	var execs []guard.Execution
	for _, e := range c.Executions() {
		execs = append(execs, guard.Execution(e))
	}
	var controls []guard.Control
	for _, ctl := range c.Controls {
		d, err := guard.ParseControlData(ctl.Data)
		if err != nil {
			t.Fatal(err)
		}
		controls = append(controls, guard.Control{ID: ctl.ID, Name: ctl.Name, Data: d})
	}
	var step guard.Step
	if err := json.Unmarshal(c.Step, &step); err != nil {
		t.Fatal(err)
	}
	stage := guard.Stage(c.Stage)
	ctx := context.Background()
	decide := func(extra ...guard.Control) (*guard.Engine, *guard.Result, string) {
		t.Helper()
		eng := guard.New(guard.WithExecution(execs...))
		if err := eng.Update(append(append([]guard.Control(nil), controls...), extra...)); err != nil {
			t.Fatalf("Update: %v", err)
		}
		res, err := eng.Evaluate(ctx, &step, stage)
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		cerr := eng.Check(ctx, &step, stage)
		return eng, res, fmt.Sprintf("%T %v", cerr, cerr)
	}
	base, want, wantCheck := decide()
	if base.HasShadow() {
		t.Fatal("an engine without shadow controls reports HasShadow")
	}
	if sr, err := base.EvaluateShadow(ctx, &step, stage); sr != nil || err != nil {
		t.Fatalf("EvaluateShadow without shadow controls = %v, %v; want nil, nil", sr, err)
	}
	same := func(label string, extra ...guard.Control) *guard.Engine {
		t.Helper()
		eng, got, gotCheck := decide(extra...)
		if timedOut(got) != timedOut(want) {
			return eng // one ran out of time, the other not: decided by the clock, not by the controls
		}
		if !reflect.DeepEqual(strip(got), strip(want)) {
			t.Errorf("%s: Evaluate changed:\n got %+v\nwant %+v", label, strip(got), strip(want))
		}
		if gotCheck != wantCheck {
			t.Errorf("%s: Check changed: got %s, want %s", label, gotCheck, wantCheck)
		}
		return eng
	}
	same("all shadow controls", pool...)
	// One by one: the case's own controls as shadow copies, and a slice of the pool that rotates with
	// the case, so that every pool control is added alone to some cases without the test costing
	// cases x pool engines.
	var one []guard.Control
	for i, ctl := range controls {
		ctl.ID, ctl.Name = int64(2_000_000+i), "shadow-own-"+ctl.Name
		ctl.Data.Mode, ctl.Data.Enabled = guard.ModeShadow, true
		one = append(one, ctl)
	}
	for i := 0; i < shadowPerCase; i++ {
		one = append(one, pool[(caseIndex*shadowPerCase+i)%len(pool)])
	}
	for _, sc := range one {
		eng := same(sc.Name, sc)
		shadow, err := eng.EvaluateShadow(ctx, &step, stage)
		if err != nil {
			t.Fatalf("EvaluateShadow: %v", err)
		}
		// What the control alone, enforced, decides.
		alone := sc
		alone.Data.Mode = guard.ModeEnforce
		ae := guard.New(guard.WithExecution(execs...))
		if err := ae.Update([]guard.Control{alone}); err != nil {
			t.Fatal(err)
		}
		ar, err := ae.Evaluate(ctx, &step, stage)
		if err != nil {
			t.Fatal(err)
		}
		applies := len(ar.Matches)+len(ar.Errors)+len(ar.NonMatches) > 0
		if (shadow != nil) != eng.HasShadow() || (shadow == nil && applies) {
			t.Fatalf("%s: EvaluateShadow = %v with HasShadow %v, the control alone evaluated %v", sc.Name, shadow, eng.HasShadow(), applies)
		}
		if shadow == nil || timedOut(shadow) != timedOut(ar) {
			continue
		}
		if shadow.Redacted != nil {
			t.Errorf("%s: EvaluateShadow redacted %+v; a shadow control never redacts", sc.Name, shadow.Redacted)
		}
		ar.Redacted = nil // what the control would redact enforced: a shadow result never carries it
		if !reflect.DeepEqual(strip(shadow), strip(ar)) {
			t.Errorf("%s: EvaluateShadow\n got %+v\nwant %+v (the control alone, enforced)", sc.Name, strip(shadow), strip(ar))
		}
	}
}

// strip returns a copy of res without what differs from run to run (execution ids, durations).
func strip(res *guard.Result) guard.Result {
	out := *res
	for _, l := range []*[]guard.ControlResult{&out.Matches, &out.Errors, &out.NonMatches} {
		cp := append([]guard.ControlResult{}, (*l)...)
		for i := range cp {
			cp[i].ControlExecutionID, cp[i].Duration = "", 0
		}
		*l = cp
	}
	return out
}

// timedOut reports whether an evaluator of res ran out of time: such an outcome depends on the load of the
// machine (the corpus has catastrophic patterns under timeout_ms), so two evaluations may differ.
func timedOut(res *guard.Result) bool {
	for _, e := range res.Errors {
		if strings.Contains(e.Result.Error, "timed out") || strings.Contains(e.Result.Error, "deadline") {
			return true
		}
	}
	return false
}
