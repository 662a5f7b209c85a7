package templates_test

import (
	"context"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/templates"
)

// BenchmarkTemplateCompile measures, for every shipped template rendered with its defaults and examples,
// what a control made from it costs to load and to save (cpu-ns/op: the process's CPU time):
//   - compile/cold: a new engine's Update with the one control, every pattern parsed and split anew
//     (evaluator.ResetRegexCache before each);
//   - compile: the same once the process has compiled the template's patterns (the case of every control
//     after the first made from a template, and of a save, whose validation compiles them first);
//   - save/cold: what the server does when the control is saved: validation and the control's tests run.
//
// Targets: compile at most 5 ms, save at most 20 ms.
//
//	go test -run '^$' -bench BenchmarkTemplateCompile -benchtime 10x ./templates/
func BenchmarkTemplateCompile(b *testing.B) {
	for _, tpl := range templates.Shipped().List() {
		r, err := tpl.Render(context.Background(), examples(tpl))
		if err != nil {
			b.Fatal(err)
		}
		d := r.Data
		d.Enabled = true
		controls := []guard.Control{{ID: 1, Name: tpl.Name, Data: d}}
		compile := func() {
			if err := guard.New().Update(controls); err != nil {
				b.Fatal(err)
			}
		}
		save := func() {
			v := d
			if err := v.Validate(); err != nil {
				b.Fatal(err)
			}
			if err := guard.CheckControlTests(context.Background(), tpl.Name, v); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(tpl.Name+"/compile/cold", func(b *testing.B) { cpuLoop(b, evaluator.ResetRegexCache, compile) })
		b.Run(tpl.Name+"/compile", func(b *testing.B) { cpuLoop(b, nil, compile) })
		b.Run(tpl.Name+"/save/cold", func(b *testing.B) { cpuLoop(b, evaluator.ResetRegexCache, save) })
	}
}

// cpuLoop runs f b.N times, each after before (outside the timer), and reports the process's CPU time per
// run as cpu-ns/op.
func cpuLoop(b *testing.B, before, f func()) {
	var cpu int64
	for i := 0; i < b.N; i++ {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		start := processCPU()
		f()
		cpu += int64(processCPU() - start)
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
