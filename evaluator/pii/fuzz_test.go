package pii

import (
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// FuzzScan: arbitrary text never panics, and findings lie inside it, in order, without overlap.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"jane@example.com", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00",
		"078-05-1121", "+1 (415) 555-2671", "2001:db8::1", "192.168.0.1", "((((", "+", "@@", "1.1.1.1.1"} {
		f.Add(s)
	}
	e := build(f, map[string]any{"min_confidence": 0})
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		for _, x := range e.Scan(text) {
			if x.Start < prev || x.End > len(text) || x.Start >= x.End {
				t.Fatalf("finding %+v out of place (prev end %d, len %d)", x, prev, len(text))
			}
			prev = x.End
		}
	})
}

// FuzzConfig: arbitrary entity, country and context word values give an error or an evaluator.
func FuzzConfig(f *testing.F) {
	f.Add("email", "US", "phone", "call", 0.5)
	r := evaluator.NewRegistry()
	r.Register(Factory())
	f.Fuzz(func(t *testing.T, entity, country, ctxEntity, word string, minConf float64) {
		_, _ = r.Build(Name, map[string]any{"entities": []any{entity}, "countries": []any{country},
			"context_words": map[string]any{ctxEntity: []any{word}}, "min_confidence": minConf})
	})
}
