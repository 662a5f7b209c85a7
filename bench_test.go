package guard_test

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator" // the real regex and list evaluators
)

// The benchmark inputs: 200 characters of English with an order number, digits, hyphens and
// punctuation. benchNoMatch matches none of the benchmark controls; benchMatchFor(n) matches exactly
// one deny control of benchControls(n).
const benchNoMatch = "Hi, I placed order #A-2291-7743 on 12/03 for 3 items (total $48.20) and it still shows " +
	"'processing'. Could you check the shipping status, please? My zip code is 94107-1120. Thanks a lot, many thanks!!"

var benchWords = []string{"falcon", "orion", "nebula", "titan", "aurora", "phoenix", "zephyr", "atlas", "vega", "lyra"}

// benchTerm is term j of list control i.
func benchTerm(i, j int) string {
	return fmt.Sprintf("project %s %d", benchWords[(i+j)%len(benchWords)], i)
}

// benchMatchTarget is the list control that benchMatchFor(n) hits: the last even index below n.
func benchMatchTarget(n int) int { return (n - 1) &^ 1 }

// benchMatchFirst matches the first control of benchControls(n) (control-0, a list control), so that
// Evaluate stops after the first control: the case measures what an evaluation costs when it evaluates
// one control among many.
var benchMatchFirst = ("Re " + benchTerm(0, 2) + ": " + benchNoMatch)[:len(benchNoMatch)]

func benchMatchFor(n int) string {
	s := "Re " + benchTerm(benchMatchTarget(n), 2) + ": " + benchNoMatch
	return s[:len(benchNoMatch)]
}

// benchRegex returns the pattern of the k-th regex control: five families of patterns guardrails use,
// varied with k so that no two controls are the same.
func benchRegex(k int) string {
	verbs := []string{"ignore", "disregard", "forget", "override", "bypass"}
	objects := []string{"previous instructions", "prior instructions", "the system prompt", "your rules", "all guidelines"}
	prefixes := []string{"sk-", "ghp_", "AKIA", "xoxb-", "AIza", "glpat-", "sk_live_", "rk_live_", "hf_", "npm_"}
	switch k % 5 {
	case 0: // SSN, labelled or bare
		if k%10 == 0 {
			return fmt.Sprintf(`(?i)\b(?:ssn|social security(?: number)?)[^0-9]{0,%d}\d{3}-\d{2}-\d{4}\b`, 8+k%17)
		}
		return fmt.Sprintf(`\b\d{3}-\d{2}-\d{4,%d}\b`, 4+k%5)
	case 1: // payment card numbers
		return fmt.Sprintf(`\b(?:4\d{3}|5[1-5]\d{2}|6011|3[47]\d{2})[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,%d}\b`, 1+k%4)
	case 2: // e-mail addresses
		return fmt.Sprintf(`\b[A-Za-z0-9._%%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,%d}\b`, 6+k%10)
	case 3: // prompt injection
		return fmt.Sprintf(`(?i)\b%s\s+(?:all\s+)?%s\b`, verbs[k%5], objects[(k/5)%5])
	default: // API key shapes
		return fmt.Sprintf(`\b%s[A-Za-z0-9_\-]{%d,}`, prefixes[(k/5)%10], 16+k%16)
	}
}

// benchControls returns n deny controls scoped to stage pre and type llm: odd indexes are regex
// controls, even ones list controls with 5 terms each (whole-word contains, case-insensitive). With
// scoped, only the first 10 apply to the step name "chat"; the others name other steps.
func benchControls(n int, scoped bool) []guard.Control {
	out := make([]guard.Control, n)
	for i := range out {
		var leaf guard.Condition
		if i%2 == 1 {
			leaf = guard.Condition{
				Selector:  &guard.Selector{Path: "input"},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": benchRegex(i / 2)}},
			}
		} else {
			values := make([]any, 5)
			for j := range values {
				values[j] = benchTerm(i, j)
			}
			leaf = guard.Condition{
				Selector:  &guard.Selector{Path: "input"},
				Evaluator: &guard.EvaluatorSpec{Name: "list", Config: map[string]any{"values": values, "match_mode": "contains"}},
			}
		}
		scope := guard.Scope{Stages: []guard.Stage{guard.StagePre}, StepTypes: []string{"llm"}}
		if scoped {
			if i < 10 {
				scope.StepNames = []string{"chat"}
			} else {
				scope.StepNames = []string{fmt.Sprintf("step-%d", i)}
			}
		}
		out[i] = guard.Control{
			ID:   int64(i + 1),
			Name: fmt.Sprintf("control-%d", i),
			Data: guard.ControlData{
				Enabled:   true,
				Execution: guard.ExecutionServer,
				Scope:     scope,
				Condition: leaf,
				Action:    guard.Action{Decision: guard.DecisionDeny},
			},
		}
	}
	return out
}

type benchCase struct {
	name     string
	controls int
	scoped   bool
	input    string
	match    bool
}

func benchCases() []benchCase {
	var cs []benchCase
	for _, n := range []int{1, 10, 100, 1000, 10000} {
		cs = append(cs,
			benchCase{fmt.Sprintf("controls=%d/nomatch", n), n, false, benchNoMatch, false},
			benchCase{fmt.Sprintf("controls=%d/match", n), n, false, benchMatchFor(n), true})
		if n == 1000 {
			cs = append(cs, benchCase{"controls=1000/scoped", n, true, benchNoMatch, false})
		}
		if n >= 1000 {
			cs = append(cs, benchCase{fmt.Sprintf("controls=%d/matchfirst", n), n, false, benchMatchFirst, true})
		}
	}
	return cs
}

var benchEngines = map[string]*guard.Engine{}

// loop runs f b.N times and reports, besides wall time, the process CPU time per operation
// ("cpu-ns/op"): on a shared machine whose cores are oversubscribed, wall time mostly measures waiting
// for a core, CPU time measures the work.
func loop(b *testing.B, f func()) {
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if cpu := processCPU() - start; cpu > 0 && n > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

func benchEngine(b *testing.B, n int, scoped bool) *guard.Engine {
	key := fmt.Sprint(n, scoped)
	if e, ok := benchEngines[key]; ok {
		return e
	}
	e := guard.New()
	if err := e.Update(benchControls(n, scoped)); err != nil {
		b.Fatal(err)
	}
	benchEngines[key] = e
	return e
}

// verifyBenchCase makes sure a case measures what its name says.
func verifyBenchCase(b *testing.B, e *guard.Engine, step *guard.Step, bc benchCase) {
	res, err := e.Evaluate(context.Background(), step, guard.StagePre)
	if err != nil {
		b.Fatal(err)
	}
	if bc.match {
		want := fmt.Sprintf("control-%d", benchMatchTarget(bc.controls))
		if bc.input == benchMatchFirst {
			want = "control-0"
		}
		if res.Decision != guard.DecisionDeny || len(res.Matches) != 1 || res.Matches[0].ControlName != want {
			b.Fatalf("%s: decision %s, matches %v, want one deny by %s", bc.name, res.Decision, names(res.Matches), want)
		}
	} else if res.Decision != guard.DecisionAllow || len(res.Matches)+len(res.Errors) != 0 {
		b.Fatalf("%s: decision %s, matches %v, errors %v", bc.name, res.Decision, names(res.Matches), names(res.Errors))
	}
	if bc.scoped && len(res.NonMatches) != 10 {
		b.Fatalf("%s: %d controls evaluated, want 10", bc.name, len(res.NonMatches))
	}
}

func names(crs []guard.ControlResult) []string {
	out := make([]string, len(crs))
	for i, cr := range crs {
		out[i] = cr.ControlName
	}
	return out
}

func BenchmarkEvaluate(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name, func(b *testing.B) {
			e := benchEngine(b, bc.controls, bc.scoped)
			step := &guard.Step{Type: "llm", Name: "chat", Input: bc.input}
			verifyBenchCase(b, e, step, bc)
			ctx := context.Background()
			loop(b, func() {
				if _, err := e.Evaluate(ctx, step, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkCheck(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name, func(b *testing.B) {
			e := benchEngine(b, bc.controls, bc.scoped)
			step := &guard.Step{Type: "llm", Name: "chat", Input: bc.input}
			verifyBenchCase(b, e, step, bc)
			ctx := context.Background()
			loop(b, func() {
				if err := e.Check(ctx, step, guard.StagePre); (err != nil) != bc.match {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("controls=%d", n), func(b *testing.B) {
			controls := benchControls(n, false)
			e := guard.New()
			loop(b, func() {
				if err := e.Update(controls); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	// distinct: no two regex controls have the same pattern (benchControls repeats about 200 patterns
	// among 5000 regex controls, which the compiler builds once each).
	b.Run("controls=10000/distinct", func(b *testing.B) {
		controls := benchDistinct(benchControls(10000, false))
		e := guard.New()
		loop(b, func() {
			if err := e.Update(controls); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// benchDistinct makes every regex pattern of controls unique with an optional group that changes no match.
func benchDistinct(controls []guard.Control) []guard.Control {
	for i := range controls {
		ev := controls[i].Data.Condition.Evaluator
		if ev.Name == "regex" {
			ev.Config = map[string]any{"pattern": fmt.Sprintf("(?:%s)(?:zq%dzq)?", ev.Config["pattern"], i)}
		}
	}
	return controls
}

// BenchmarkLoadedHeap reports the live heap an engine holds once it has loaded N benchmark controls
// ("live-MiB": runtime.MemStats.HeapAlloc after a GC with the engine loaded, minus the same before it was
// made, the control definitions excluded since they exist before either measure).
func BenchmarkLoadedHeap(b *testing.B) {
	for _, n := range []int{1000, 10000, -10000} {
		name := fmt.Sprintf("controls=%d", n)
		if n < 0 {
			name = fmt.Sprintf("controls=%d/distinct", -n)
		}
		b.Run(name, func(b *testing.B) {
			controls := benchControls(max(n, -n), false)
			if n < 0 {
				controls = benchDistinct(controls)
			}
			var live float64
			b.ReportAllocs()
			for b.Loop() {
				live = loadedHeap(b, controls)
			}
			b.ReportMetric(live/(1<<20), "live-MiB")
		})
	}
}

// loadedHeap is the live heap, in bytes, of an engine that has loaded controls.
func loadedHeap(tb testing.TB, controls []guard.Control) float64 {
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC() // the second cycle frees what the first one's finalizers (sync.Pool) released
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	e := guard.New()
	if err := e.Update(controls); err != nil {
		tb.Fatal(err)
	}
	after := heap()
	runtime.KeepAlive(e)
	return float64(after) - float64(before)
}

func TestBenchInputs(t *testing.T) {
	if len(benchNoMatch) != 200 || len(benchMatchFor(10)) != 200 {
		t.Fatalf("inputs are %d and %d bytes, want 200", len(benchNoMatch), len(benchMatchFor(10)))
	}
	if !strings.Contains(benchMatchFor(10000), benchTerm(9998, 2)) {
		t.Fatal("match input lacks its term")
	}
}

// BenchmarkBaselineRegex is the calibration for the figures above: one Go regexp (the card-number
// pattern of the benchmark controls, whose required literals 4 and 5 occur in benchNoMatch, so that only
// the run prefilter rules it out: the input has no run of 13 digits, spaces and hyphens) searched in the
// benchmark input, with no engine around it: what a control costs when no prefilter rules it out.
func BenchmarkBaselineRegex(b *testing.B) {
	re := regexp.MustCompile(benchRegex(1))
	loop(b, func() {
		if re.MatchString(benchNoMatch) {
			b.Fatal("matched")
		}
	})
}

// BenchmarkEngineOverhead measures the engine alone: 10 list controls (the even ones of benchControls(20))
// whose literals the prefilter rules out on benchNoMatch, so no evaluator runs: index lookup, selector,
// one automaton scan, ten tree walks, and for Evaluate the full result.
func BenchmarkEngineOverhead(b *testing.B) {
	var lists []guard.Control
	for i, c := range benchControls(20, false) {
		if i%2 == 0 {
			lists = append(lists, c)
		}
	}
	e := guard.New()
	if err := e.Update(lists); err != nil {
		b.Fatal(err)
	}
	step := &guard.Step{Type: "llm", Name: "chat", Input: benchNoMatch}
	ctx := context.Background()
	b.Run("evaluate", func(b *testing.B) {
		loop(b, func() {
			if res, err := e.Evaluate(ctx, step, guard.StagePre); err != nil || len(res.NonMatches) != 10 {
				b.Fatal(err)
			}
		})
	})
	b.Run("check", func(b *testing.B) {
		loop(b, func() {
			if err := e.Check(ctx, step, guard.StagePre); err != nil {
				b.Fatal(err)
			}
		})
	})
}
