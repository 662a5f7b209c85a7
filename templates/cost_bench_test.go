package templates_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/costtext"
	"github.com/guardrail-control/guard/templates"
)

// costCase is one shipped template made ready to evaluate texts of any length: an engine holding the
// template (rendered with its defaults and examples) and the shape of the step its first catching test
// sends, whose string leaves the text replaces.
type costCase struct {
	name   string
	eng    *guard.Engine
	shape  guard.Step
	stage  guard.Stage
	attack string // the longest string of that test's payload: the attack appended to prose
}

// textTemplates are the shipped templates whose cost depends on the text of the step (the others read
// the session, the step's name or a number).
var textTemplates = []string{"command-injection", "dangerous-uris", "destructive-shell", "destructive-sql",
	"jailbreak-markers", "payment-cards", "phone-numbers", "pii-in-outputs", "pii-redact-outputs",
	"prompt-injection", "secrets-in-inputs", "secrets-in-outputs", "sql-injection", "system-prompt-extraction",
	"us-ssn"}

func newCostCase(tb testing.TB, name string) *costCase {
	tb.Helper()
	tpl, ok := templates.Shipped().Get(name)
	if !ok {
		tb.Fatalf("no template %s", name)
	}
	r, err := tpl.Render(context.Background(), examples(tpl))
	if err != nil {
		tb.Fatal(err)
	}
	d := r.Data
	d.Enabled = true
	c := &costCase{name: name, eng: guard.New(guard.WithExecution(guard.ExecutionServer, guard.ExecutionSDK))}
	if err := c.eng.Update([]guard.Control{{ID: 1, Name: name, Data: d}}); err != nil {
		tb.Fatal(err)
	}
	for _, tc := range d.Tests {
		if tc.Expect.Match != guard.ExpectMatch && tc.Expect.Decision != guard.DecisionDeny && tc.Expect.Redacted == nil {
			continue
		}
		c.shape, c.stage = tc.Step, tc.Stage
		payload := tc.Step.Input
		if tc.Stage == guard.StagePost {
			payload = tc.Step.Output
		}
		c.attack = longestString(payload)
		break
	}
	if c.attack == "" {
		tb.Fatalf("%s: no catching test with a string payload", name)
	}
	return c
}

// step returns the test's step with every string of its payload (input at pre, output at post) replaced
// by text.
func (c *costCase) step(text string) *guard.Step {
	s := c.shape
	if c.stage == guard.StagePost {
		s.Output = replaceStrings(s.Output, text)
	} else {
		s.Input = replaceStrings(s.Input, text)
	}
	return &s
}

// text is the text of a kind and length for this template (its own attack for costtext.Attack).
func (c *costCase) text(kind string, n int) string {
	if kind == costtext.Attack {
		return costtext.WithAttack(c.attack, n)
	}
	return costtext.Text(kind, n)
}

func longestString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		best := ""
		for _, e := range x {
			if s := longestString(e); len(s) > len(best) {
				best = s
			}
		}
		return best
	case []any:
		best := ""
		for _, e := range x {
			if s := longestString(e); len(s) > len(best) {
				best = s
			}
		}
		return best
	}
	return ""
}

func replaceStrings(v any, text string) any {
	switch x := v.(type) {
	case string:
		return text
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = replaceStrings(e, text)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = replaceStrings(e, text)
		}
		return out
	}
	return v
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%dKB", n>>10)
}

// BenchmarkTemplateCost evaluates every shipped text template on ordinary prose, prose dense in trigger
// words and prose with the template's attack at the end, from 1 KB to 1 MB, one evaluation per
// iteration with no deadline. us/KB is the cost per kilobyte (target: at most 30, and t(4x) <= 4.5 t(x));
// cpu-ns/op the process's CPU time per evaluation.
//
//	go test -run '^$' -bench BenchmarkTemplateCost -benchtime 3x ./templates/
func BenchmarkTemplateCost(b *testing.B) {
	for _, name := range textTemplates {
		c := newCostCase(b, name)
		for _, kind := range []string{costtext.Ordinary, costtext.Triggers, costtext.Attack} {
			for _, n := range costtext.Sizes {
				step := c.step(c.text(kind, n))
				b.Run(name+"/"+kind+"/"+sizeName(n), func(b *testing.B) {
					ctx := context.Background()
					if _, err := c.eng.Evaluate(ctx, step, c.stage); err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					b.ResetTimer()
					cpu := processCPU()
					for i := 0; i < b.N; i++ {
						if _, err := c.eng.Evaluate(ctx, step, c.stage); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n>>10), "us/KB")
					if d := processCPU() - cpu; d > 0 {
						b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
					}
				})
			}
		}
	}
}
