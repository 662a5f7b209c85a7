package jsonvalidate

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// BenchmarkJSONEvaluator checks typical tool arguments (a transfer with five fields) against a schema
// plus field rules.
func BenchmarkJSONEvaluator(b *testing.B) {
	e := mustNew(b, map[string]any{
		"schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"amount":   map[string]any{"type": "number", "minimum": 0},
				"currency": map[string]any{"enum": []any{"EUR", "USD", "GBP"}},
				"to":       map[string]any{"type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$"},
			},
			"required":             []any{"amount", "currency", "to"},
			"additionalProperties": false,
		},
	})
	fields := mustNew(b, map[string]any{
		"required":    []any{"amount", "currency", "to"},
		"field_types": map[string]any{"amount": "number", "memo": "string"},
		"constraints": map[string]any{"amount": map[string]any{"max": 10000}, "memo": map[string]any{"max_length": 140}},
	})
	valid := map[string]any{"amount": 120.5, "currency": "EUR", "to": "DE89370400440532013000"}
	invalid := map[string]any{"amount": -3.0, "currency": "XXX", "extra": true}
	text := `{"amount": 120.5, "currency": "EUR", "to": "DE89370400440532013000"}`
	cases := []struct {
		name string
		e    *Evaluator
		d    *evaluator.Data
	}{
		{"schema/valid-object", e, &evaluator.Data{Value: valid}},
		{"schema/invalid-object", e, &evaluator.Data{Value: invalid}},
		{"schema/valid-text", e, &evaluator.Data{Value: text, Text: text}},
		{"fields/valid-object", fields, &evaluator.Data{Value: valid}},
	}
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.e.Evaluate(ctx, c.d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
