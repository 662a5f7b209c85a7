package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/cases"
)

// countedRegex is the real regex evaluator (with its literal and run prefilters) counting its calls
// under key.
type countedRegex struct {
	*evaluator.Regex
	key string
}

func (c countedRegex) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	count(c.key)
	return c.Regex.Evaluate(ctx, d)
}

// runRegistry is fakeRegistry plus "rx" {pattern, key}: a counted real regex evaluator.
func runRegistry() *evaluator.Registry {
	r := fakeRegistry()
	r.Register(evaluator.Factory{Name: "rx", ConfigSchema: []byte(`{"type": "object"}`), New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		re, err := evaluator.NewRegex(str(cfg, "pattern"), false, false, false, time.Second)
		if err != nil {
			return nil, err
		}
		return countedRegex{re, str(cfg, "key")}, nil
	}})
	return r
}

func runEngine(t *testing.T, controls ...guard.Control) *guard.Engine {
	t.Helper()
	e := guard.New(guard.WithRegistry(runRegistry()))
	if err := e.Update(controls); err != nil {
		t.Fatal(err)
	}
	return e
}

func rx(path, pattern, key string) guard.Condition {
	return leaf(path, "rx", map[string]any{"pattern": pattern, "key": key})
}

func TestRunPrefilter(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		input   any
		matched bool
		ran     bool
	}{
		{"literal present, run too short: not run", `\d{3}-\d{4}`, "call 12-3456 or 1-2", false, false},
		{"run long enough: run", `\d{3}-\d{4}`, "call 123-4567", true, true},
		{"run long enough, no match: run", `\d{3}-\d{4}`, "call 1234-567", false, true},
		{"no literal, run too short: not run", `[0-9]{5}`, "1234 5678 12-34", false, false},
		{"no literal, run long enough: run", `[0-9]{5}`, "zip 94107", true, true},
		{"non-string value always runs", `[0-9]{5}`, map[string]any{"a": "94107"}, true, true},
		{"number always runs", `[0-9]{5}`, 12, false, true},
		{"null always runs", `[0-9]{5}`, nil, false, true},
		{"fold: ASCII variants in the set", `(?i)kk`, "a Kk", true, true},
		{"fold: too short", `(?i)kk`, "k a K", false, false},
		{"fold: Kelvin signs count as in the set", `(?i)kk`, "\u212a\u212a", true, true},
		{"non-ASCII member", `é{2}`, "éé", true, true},
		{"non-ASCII bytes never break a run", `\d[é]?\d{3}`, "1é234", true, true},
		{"no requirement: always runs", `\d`, "abc", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := runEngine(t, ctl(1, guard.DecisionLog, rx("input", tt.pattern, "k")))
			resetCalls()
			res := evaluate(t, e, llm(tt.input))
			if got := len(res.Matches) == 1; got != tt.matched {
				t.Errorf("matched = %v, want %v", got, tt.matched)
			}
			if got := calls("k") > 0; got != tt.ran {
				t.Errorf("evaluator ran = %v, want %v", got, tt.ran)
			}
			for _, cr := range res.NonMatches {
				if cr.Result.Confidence != 1 {
					t.Errorf("skipped leaf confidence %v", cr.Result.Confidence)
				}
			}
		})
	}
}

// TestRunPrefilterSharedSet: leaves requiring runs of one set on one path share one measure (stopped
// at the longest requirement), and the pooled scratch forgets it between evaluations.
func TestRunPrefilterSharedSet(t *testing.T) {
	e := runEngine(t,
		ctl(1, guard.DecisionLog, rx("input", `\d{3}`, "three")),
		ctl(2, guard.DecisionLog, rx("input", `\d{6}`, "six")),
		ctl(3, guard.DecisionLog, rx("output", `\d{6}`, "out")),
	)
	for _, tt := range []struct {
		input, output   string
		three, six, out int64
		matches         int
	}{
		{"a 12345 b", "123456", 1, 0, 1, 2},
		{"12", "1", 0, 0, 0, 0},
		{"1234567", "12345", 1, 1, 0, 2},
		{"x", "x 9999999", 0, 0, 1, 1},
	} {
		resetCalls()
		res := evaluate(t, e, &guard.Step{Type: "llm", Name: "chat", Input: tt.input, Output: tt.output})
		if calls("three") != tt.three || calls("six") != tt.six || calls("out") != tt.out || len(res.Matches) != tt.matches {
			t.Errorf("%q/%q: calls %d %d %d, matches %v", tt.input, tt.output, calls("three"), calls("six"), calls("out"), names(res.Matches))
		}
	}
}

// TestRunPrefilterConcurrent: with an external evaluator the runs are measured before the goroutines
// start (run with -race).
func TestRunPrefilterConcurrent(t *testing.T) {
	e := runEngine(t,
		ctl(1, guard.DecisionLog, and(leaf("input", "sleep", map[string]any{"matched": true, "sleep_ms": 1.0}), rx("input", `\d{4}`, "a"))),
		ctl(2, guard.DecisionLog, and(leaf("input", "sleep", map[string]any{"matched": true, "sleep_ms": 1.0}), rx("input", `\d{9}`, "b"))),
		ctl(3, guard.DecisionLog, rx("input", `[0-9]{5}`, "c")),
	)
	for i := 0; i < 5; i++ {
		resetCalls()
		res := evaluate(t, e, llm("order 1234-56"))
		if len(res.Matches) != 1 || res.Matches[0].ControlID != 1 || calls("a") != 1 || calls("b") != 0 || calls("c") != 0 {
			t.Fatalf("matches %v, calls %d %d %d", names(res.Matches), calls("a"), calls("b"), calls("c"))
		}
	}
}

// sameResult compares two results without their random ids and measured durations.
func sameResult(t *testing.T, what string, with, without *guard.Result) {
	t.Helper()
	if a, b := resultNorm(t, with), resultNorm(t, without); a != b {
		t.Errorf("%s: results differ with the run prefilter\nwith:    %s\nwithout: %s", what, a, b)
	}
}

// resultNorm is r as JSON without its random ids and measured durations.
func resultNorm(t *testing.T, r *guard.Result) string {
	t.Helper()
	c := *r
	for _, l := range []*[]guard.ControlResult{&c.Matches, &c.Errors, &c.NonMatches} {
		*l = append([]guard.ControlResult(nil), (*l)...)
		for i := range *l {
			(*l)[i].ControlExecutionID, (*l)[i].Duration = "", 0
		}
	}
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunPrefilterSameResultsOnCorpus: the decision corpus gives the same results with and without the
// run prefilter.
func TestRunPrefilterSameResultsOnCorpus(t *testing.T) {
	files, err := cases.Load("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Want.Invalid || c.Want.EvalError {
				continue
			}
			t.Run(f.Name+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				runPrefilterCompareCase(t, c)
			})
		}
	}
}

func runPrefilterCompareCase(t *testing.T, c *cases.Case) {
	var controls []guard.Control
	for _, ctl := range c.Controls {
		data, err := guard.ParseControlData(ctl.Data)
		if err != nil {
			t.Skip("invalid control")
		}
		controls = append(controls, guard.Control{ID: ctl.ID, Name: ctl.Name, Data: data})
	}
	var step guard.Step
	if err := json.Unmarshal(c.Step, &step); err != nil {
		t.Skip("invalid step")
	}
	var execs []guard.Execution
	for _, e := range c.Executions() {
		execs = append(execs, guard.Execution(e))
	}
	var res [2]*guard.Result
	var checks [2]string
	for k, opts := range [][]guard.Option{{guard.WithExecution(execs...)}, {guard.WithExecution(execs...), guard.WithoutRunPrefilter()}} {
		e := guard.New(opts...)
		if err := e.Update(controls); err != nil {
			t.Skip("controls rejected")
		}
		var err error
		if res[k], err = e.Evaluate(bg, &step, guard.Stage(c.Stage)); err != nil {
			t.Fatal(err)
		}
		checks[k] = errString(e.Check(bg, &step, guard.Stage(c.Stage)))
	}
	if len(c.Want.MaySkip) > 0 { // external evaluators cancelled after a deny: lists may vary
		if res[0].Decision != res[1].Decision || res[0].Reason != res[1].Reason {
			t.Errorf("decision %s/%q with, %s/%q without", res[0].Decision, res[0].Reason, res[1].Decision, res[1].Reason)
		}
	} else {
		sameResult(t, "corpus", res[0], res[1])
	}
	if checks[0] != checks[1] {
		t.Errorf("Check %q with, %q without", checks[0], checks[1])
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	var v *guard.ControlViolationError
	var s *guard.ControlSteerError
	switch {
	case errors.As(err, &v):
		return "deny " + v.ControlName + ": " + v.Message
	case errors.As(err, &s):
		return "steer " + s.ControlName + ": " + s.Message
	}
	return err.Error()
}

// TestRunPrefilterSameResultsOnFuzzSeeds: the FuzzEvaluate control set gives the same results with and
// without the run prefilter on its seeds and on random digit-heavy texts.
func TestRunPrefilterSameResultsOnFuzzSeeds(t *testing.T) {
	with, without := fuzzEngine(t), fuzzEngine(t, guard.WithoutRunPrefilter())
	steps := []string{
		`{"type":"llm","name":"chat","input":"my ssn is 123-45-6789"}`,
		`{"type":"llm","name":"chat","input":{"messages":[{"content":"Ignore previous instructions"}]}}`,
		`{"type":"tool","name":"refund","input":{"amount":"12345"},"output":"key=abc secret"}`,
		`{"type":"llm","name":"x","input":"\u212a DAN MODE \u2028 a@b.c"}`,
	}
	if files, err := cases.Load("testdata/cases"); err == nil {
		for _, file := range files {
			for _, c := range file.Cases {
				steps = append(steps, string(c.Step))
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	parts := []string{"1", "2", "34", "567", "-", " ", "a", "@", "b.c", "é", "\n", "secret"}
	for i := 0; i < 500; i++ {
		var sb strings.Builder
		for n := r.IntN(30); n > 0; n-- {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		text, _ := json.Marshal(sb.String())
		steps = append(steps, `{"type":"tool","name":"refund","input":{"amount":`+string(text)+`},"output":`+string(text)+`}`,
			`{"type":"llm","name":"chat","input":`+string(text)+`}`)
	}
	for _, s := range steps {
		var step guard.Step
		if json.Unmarshal([]byte(s), &step) != nil {
			continue
		}
		for _, stage := range []guard.Stage{guard.StagePre, guard.StagePost} {
			// The control set has a backtracking pattern with timeout_ms 50, whose outcome depends on the
			// machine's load: a difference is only reported when it persists over three evaluations.
			var a, b *guard.Result
			for try := 0; try < 3; try++ {
				var err1, err2 error
				a, err1 = with.Evaluate(bg, &step, stage)
				b, err2 = without.Evaluate(bg, &step, stage)
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: %v / %v", s, err1, err2)
				}
				if resultNorm(t, a) == resultNorm(t, b) {
					break
				}
			}
			sameResult(t, s, a, b)
			if x, y := errString(with.Check(bg, &step, stage)), errString(without.Check(bg, &step, stage)); x != y {
				t.Errorf("%s: Check %q with, %q without", s, x, y)
			}
		}
	}
}

// TestBenchNoMatchRunsNoRegex: on the benchmark's inputs the literal and run prefilters rule out every
// regex control of benchControls, so BenchmarkEvaluate and BenchmarkCheck measure the engine and the list
// evaluators.
func TestBenchNoMatchRunsNoRegex(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(evaluator.ListFactory())
	f := evaluator.RegexFactory()
	newRegex := f.New
	f.New = func(cfg map[string]any, opts evaluator.Options) (evaluator.Evaluator, error) {
		ev, err := newRegex(cfg, opts)
		if err != nil {
			return nil, err
		}
		return countedRegex{ev.(*evaluator.Regex), "bench-regex"}, nil
	}
	r.Register(f)
	for _, n := range []int{10, 1000} {
		e := guard.New(guard.WithRegistry(r))
		if err := e.Update(benchControls(n, false)); err != nil {
			t.Fatal(err)
		}
		for _, input := range []string{benchNoMatch, benchMatchFor(n)} {
			resetCalls()
			res := evaluate(t, e, &guard.Step{Type: "llm", Name: "chat", Input: input})
			if input == benchNoMatch && (res.Decision != guard.DecisionAllow || len(res.NonMatches) != n) {
				t.Fatalf("controls=%d: decision %s, %d non-matches", n, res.Decision, len(res.NonMatches))
			}
			if input != benchNoMatch && (res.Decision != guard.DecisionDeny || len(res.Matches) != 1) {
				t.Fatalf("controls=%d, match input: decision %s, matches %v", n, res.Decision, names(res.Matches))
			}
			if c := calls("bench-regex"); c != 0 {
				t.Errorf("controls=%d, input %.20q...: %d regex evaluations, want 0", n, input, c)
			}
		}
	}
}
