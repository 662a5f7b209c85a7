package guard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/cases"
)

// TestCorpus runs every case of testdata/cases through Engine.Update, Evaluate, Check and Result.Err.
func TestCorpus(t *testing.T) {
	files, err := cases.Load("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		for _, c := range f.Cases {
			n++
			t.Run(f.Name+"/"+c.Name, func(t *testing.T) {
				if why, ok := knownCorpusBugs[f.Name+"/"+c.Name]; ok {
					t.Skip(why)
				}
				runCase(t, &c)
			})
		}
	}
	if n < 80 {
		t.Errorf("corpus has %d cases, want at least 80", n)
	}
}

// knownCorpusBugs are cases whose YAML does not say what the case means; each is reported to the
// corpus owner.
var knownCorpusBugs = map[string]string{
	"selectors/number is its JSON literal": "the unquoted YAML key n is the boolean false, so input.n does not exist",
}

func runCase(t *testing.T, c *cases.Case) {
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
				t.Fatalf("ParseControlData: %v", err)
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
				t.Fatalf("Update: %v (not a *ValidationError)", err)
			}
			for _, p := range ve.Problems {
				problems = append(problems, p.Field)
			}
		}
	}
	if c.Want.Invalid {
		if problems == nil {
			t.Fatalf("controls accepted, want problems %v", c.Want.Problems)
		}
		for _, want := range c.Want.Problems {
			if !hasProblem(problems, want) {
				t.Errorf("problems %v lack %q", problems, want)
			}
		}
		return
	}
	if problems != nil {
		t.Fatalf("unexpected problems: %v", problems)
	}
	var step guard.Step
	dec := json.NewDecoder(bytes.NewReader(c.Step))
	if err := dec.Decode(&step); err != nil {
		t.Fatalf("step: %v", err)
	}
	stage := guard.Stage(c.Stage)
	res, err := eng.Evaluate(context.Background(), &step, stage)
	if c.Want.EvalError {
		if err == nil {
			t.Fatalf("Evaluate succeeded, want an error")
		}
		if cerr := eng.Check(context.Background(), &step, stage); cerr == nil {
			t.Fatalf("Check succeeded, want an error")
		}
		return
	}
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if string(res.Decision) != c.Want.Decision {
		t.Errorf("decision = %s, want %s (reason %q)", res.Decision, c.Want.Decision, res.Reason)
	}
	if res.IsSafe != (res.Decision == guard.DecisionAllow) {
		t.Errorf("is_safe = %v with decision %s", res.IsSafe, res.Decision)
	}
	skip := c.Want.MaySkip
	compareNames(t, "matches", res.Matches, c.Want.Matches, skip)
	compareNames(t, "errors", res.Errors, c.Want.Errors, skip)
	if c.Want.NonMatches != nil {
		compareNames(t, "non_matches", res.NonMatches, *c.Want.NonMatches, skip)
	}
	if c.Want.SteeringMessage != nil {
		if res.SteeringContext == nil || res.SteeringContext.Message != *c.Want.SteeringMessage {
			t.Errorf("steering context = %+v, want message %q", res.SteeringContext, *c.Want.SteeringMessage)
		}
	}
	if c.Want.Confidence != nil && res.Confidence != *c.Want.Confidence {
		t.Errorf("confidence = %v, want %v", res.Confidence, *c.Want.Confidence)
	}
	assertCheckAgrees(t, eng, &step, stage, res)
}

// assertCheckAgrees checks that Check returns what Result.Err returns.
func assertCheckAgrees(t *testing.T, eng *guard.Engine, step *guard.Step, stage guard.Stage, res *guard.Result) {
	t.Helper()
	got := eng.Check(context.Background(), step, stage)
	want := res.Err()
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		var gv, wv *guard.ControlViolationError
		if errors.As(got, &gv) && errors.As(want, &wv) && gv.ControlID == wv.ControlID && gv.Message == wv.Message {
			return // equal but for map pointers
		}
		var gs, ws *guard.ControlSteerError
		if errors.As(got, &gs) && errors.As(want, &ws) && gs.ControlID == ws.ControlID && gs.Message == ws.Message {
			return
		}
		t.Errorf("Check = %v, Result.Err = %v", got, want)
	}
}

// hasProblem reports whether a problem is at field want or below it (the corpus may name the config
// object where validation names the offending key inside it).
func hasProblem(problems []string, want string) bool {
	for _, p := range problems {
		if p == want || strings.HasPrefix(p, want+".") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func compareNames(t *testing.T, list string, got []guard.ControlResult, want, skip []string) {
	t.Helper()
	var g, w []string
	for _, cr := range got {
		if !contains(skip, cr.ControlName) {
			g = append(g, cr.ControlName)
		}
	}
	for _, n := range want {
		if !contains(skip, n) {
			w = append(w, n)
		}
	}
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, ",") != strings.Join(w, ",") {
		t.Errorf("%s = %v, want %v", list, g, w)
	}
}
