package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/cases"
)

// TestCorpus runs every case of testdata/cases through ParseControlData, Engine.Update, Evaluate,
// Check and Applies, as subtests named file/case, and checks the result against the case and against the
// invariants of the contract (is_safe, lists never nil, one execution id per evaluated control, Check
// agreeing with Evaluate).
func TestCorpus(t *testing.T) {
	files, err := cases.Load("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			t.Run(f.Name+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				corpusRun(t, c)
			})
		}
	}
}

func corpusRun(t *testing.T, c *cases.Case) {
	var execs []guard.Execution
	for _, e := range c.Executions() {
		execs = append(execs, guard.Execution(e))
	}
	eng := guard.New(guard.WithExecution(execs...))

	controls := make([]guard.Control, 0, len(c.Controls))
	var problems []string
	for i, ctl := range c.Controls {
		data, err := guard.ParseControlData(ctl.Data)
		if err != nil {
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("ParseControlData returned %T, want *guard.ValidationError: %v", err, err)
			}
			for _, p := range ve.WithPrefix(fmt.Sprintf("controls.%d", i)).Problems {
				problems = append(problems, p.Field)
			}
			continue
		}
		controls = append(controls, guard.Control{ID: ctl.ID, Name: ctl.Name, Data: data})
	}
	if problems == nil {
		if err := eng.Update(controls); err != nil {
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Update returned %T, want *guard.ValidationError: %v", err, err)
			}
			for _, p := range ve.Problems {
				problems = append(problems, p.Field)
			}
			if len(problems) == 0 {
				t.Fatal("Update failed with a ValidationError without problems")
			}
		}
	}
	if c.Want.Invalid {
		if problems == nil {
			t.Fatalf("controls accepted, want problems %v", c.Want.Problems)
		}
		corpusCompareProblems(t, problems, c.Want.Problems)
		return
	}
	if problems != nil {
		t.Fatalf("unexpected problems: %v", problems)
	}

	var step guard.Step
	if err := json.Unmarshal(c.Step, &step); err != nil {
		t.Fatalf("step: %v", err)
	}
	ctx := context.Background()
	stage := guard.Stage(c.Stage)
	res, err := eng.Evaluate(ctx, &step, stage)
	if c.Want.EvalError {
		if err == nil {
			t.Error("Evaluate succeeded, want an error")
		}
		if err := eng.Check(ctx, &step, stage); err == nil {
			t.Error("Check succeeded, want an error")
		}
		return
	}
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if res == nil {
		t.Fatal("Evaluate returned a nil result")
	}

	if string(res.Decision) != c.Want.Decision {
		t.Errorf("decision = %s, want %s (reason %q)", res.Decision, c.Want.Decision, res.Reason)
	}
	corpusCompareNames(t, "matches", res.Matches, c.Want.Matches, c.Want.MaySkip)
	corpusCompareNames(t, "errors", res.Errors, c.Want.Errors, c.Want.MaySkip)
	if c.Want.NonMatches != nil {
		corpusCompareNames(t, "non_matches", res.NonMatches, *c.Want.NonMatches, c.Want.MaySkip)
	}
	if c.Want.SteeringMessage != nil && (res.SteeringContext == nil || res.SteeringContext.Message != *c.Want.SteeringMessage) {
		t.Errorf("steering_context = %+v, want message %q", res.SteeringContext, *c.Want.SteeringMessage)
	}
	if c.Want.Confidence != nil && res.Confidence != *c.Want.Confidence {
		t.Errorf("confidence = %v, want %v", res.Confidence, *c.Want.Confidence)
	}
	corpusInvariants(t, c, controls, res)
	if len(c.Want.Redacted) > 0 {
		got, err := json.Marshal(res.Redacted)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := c.Want.SameRedacted(got); err != nil || !ok {
			t.Errorf("redacted = %s, want %s (%v)", got, c.Want.Redacted, err)
		}
	}

	// Check is the decision-only form: it must agree with Evaluate.
	cerr := eng.Check(ctx, &step, stage)
	var violation *guard.ControlViolationError
	var steer *guard.ControlSteerError
	switch res.Decision {
	case guard.DecisionAllow:
		if cerr != nil {
			t.Errorf("Check = %v, want nil for decision allow", cerr)
		}
	case guard.DecisionDeny:
		if !errors.As(cerr, &violation) {
			t.Errorf("Check = %v, want *ControlViolationError", cerr)
		}
	case guard.DecisionSteer:
		if !errors.As(cerr, &steer) {
			t.Errorf("Check = %v, want *ControlSteerError", cerr)
		} else if res.SteeringContext != nil && steer.SteeringContext.Message != res.SteeringContext.Message {
			t.Errorf("Check steering message %q, Evaluate %q", steer.SteeringContext.Message, res.SteeringContext.Message)
		}
	}
	// Result.Err returns the same kind of error as Check.
	rerr := res.Err()
	if (rerr == nil) != (cerr == nil) || errors.As(rerr, &violation) != errors.As(cerr, &violation) ||
		errors.As(rerr, &steer) != errors.As(cerr, &steer) {
		t.Errorf("Result.Err = %v, Check = %v", rerr, cerr)
	}

	// Applies: a result without a deny lists every applicable control, so it applies exactly when some
	// control was evaluated.
	if res.Decision != guard.DecisionDeny {
		evaluated := len(res.Matches)+len(res.Errors)+len(res.NonMatches) > 0
		if got := eng.Applies(&step, stage); got != evaluated {
			t.Errorf("Applies = %v, but %d controls were evaluated", got, len(res.Matches)+len(res.Errors)+len(res.NonMatches))
		}
	}
}

// corpusInvariants checks what every result must satisfy whatever the case.
func corpusInvariants(t *testing.T, c *cases.Case, controls []guard.Control, res *guard.Result) {
	t.Helper()
	if res.IsSafe != (res.Decision != guard.DecisionDeny && res.Decision != guard.DecisionSteer) {
		t.Errorf("is_safe = %v with decision %s", res.IsSafe, res.Decision)
	}
	if (res.SteeringContext != nil) != (res.Decision == guard.DecisionSteer) {
		t.Errorf("steering_context = %+v with decision %s", res.SteeringContext, res.Decision)
	}
	if res.Matches == nil || res.Errors == nil || res.NonMatches == nil {
		t.Error("a result list is nil; lists are always present")
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	for _, key := range []string{`"matches":[`, `"errors":[`, `"non_matches":[`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("result JSON lacks %s: %s", key, raw)
		}
	}
	byID := make(map[int64]guard.Control, len(controls))
	for _, ctl := range controls {
		byID[ctl.ID] = ctl
	}
	ids := map[string]bool{}
	denyBlocked := false
	for _, list := range [][]guard.ControlResult{res.Matches, res.Errors, res.NonMatches} {
		for _, cr := range list {
			if cr.ControlExecutionID == "" || ids[cr.ControlExecutionID] {
				t.Errorf("control %q has a missing or repeated control_execution_id %q", cr.ControlName, cr.ControlExecutionID)
			}
			ids[cr.ControlExecutionID] = true
			ctl, ok := byID[cr.ControlID]
			if !ok || ctl.Name != cr.ControlName {
				t.Errorf("result names control %d %q, which the case does not have", cr.ControlID, cr.ControlName)
				continue
			}
			// Results carry the effective decision: observe is reported as the log it behaves as.
			if want := ctl.Data.Action.Decision; cr.Action != want { // observe is reported as written
				t.Errorf("control %q: action = %s, want %s", cr.ControlName, cr.Action, want)
			}
			if cr.Action == guard.DecisionDeny {
				denyBlocked = true
			}
		}
	}
	if res.Decision == guard.DecisionDeny && !denyBlocked {
		t.Error("decision deny without a deny control in matches or errors")
	}
	for _, cr := range res.Matches {
		// The action's metadata is returned with a match.
		if ctl, ok := byID[cr.ControlID]; ok && ctl.Data.Action.Metadata != nil && !reflect.DeepEqual(cr.Metadata, ctl.Data.Action.Metadata) {
			t.Errorf("control %q: match metadata = %v, want the action's %v", cr.ControlName, cr.Metadata, ctl.Data.Action.Metadata)
		}
	}
	for _, cr := range res.Errors {
		if cr.Result.Error == "" {
			t.Errorf("control %q is listed in errors without an error message", cr.ControlName)
		}
	}
	if len(res.Matches)+len(res.Errors)+len(res.NonMatches) == 0 && res.Confidence != 1 {
		t.Errorf("confidence = %v with no applicable control, want 1", res.Confidence)
	}
}

// corpusCompareNames compares control names in a result list with the expected ones, in any order,
// leaving out the names the engine may skip.
func corpusCompareNames(t *testing.T, list string, got []guard.ControlResult, want, skip []string) {
	t.Helper()
	g := []string{}
	for _, cr := range got {
		if !corpusContains(skip, cr.ControlName) {
			g = append(g, cr.ControlName)
		}
	}
	w := []string{}
	for _, n := range want {
		if !corpusContains(skip, n) {
			w = append(w, n)
		}
	}
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, ",") != strings.Join(w, ",") {
		t.Errorf("%s = %v, want %v", list, g, w)
	}
}

// corpusCompareProblems checks that every expected path is reported (exactly or as the parent of a
// reported path) and that every reported path is expected.
func corpusCompareProblems(t *testing.T, got, want []string) {
	t.Helper()
	covers := func(w, g string) bool { return g == w || strings.HasPrefix(g, w+".") }
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || covers(w, g)
		}
		if !found {
			t.Errorf("problem %q not reported; got %v", w, got)
		}
	}
	for _, g := range got {
		found := false
		for _, w := range want {
			found = found || covers(w, g)
		}
		if !found {
			t.Errorf("unexpected problem %q; want %v", g, want)
		}
	}
}

func corpusContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
