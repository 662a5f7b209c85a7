package templates_test

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/templates"
)

// BenchmarkRender renders templates with their defaults: checks, substitution, validation and the test run
// (the test run dominates: it builds an engine per render).
func BenchmarkRender(b *testing.B) {
	for _, name := range []string{"tool-allow-list", "us-ssn", "destructive-sql"} {
		tpl, _ := templates.Shipped().Get(name)
		params := examples(tpl)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tpl.Render(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
