package pii

import (
	"context"

	"github.com/guardrail-control/guard/evaluator"
)

// Spans implements evaluator.Spanner: the findings of Scan (those that reach min_confidence, without
// overlaps), typed by their entity (email, credit_card, phone...).
func (e *Evaluator) Spans(ctx context.Context, d *evaluator.Data) ([]evaluator.Span, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fs := e.Scan(d.Text)
	if len(fs) == 0 {
		return nil, nil
	}
	out := make([]evaluator.Span, len(fs))
	for i, f := range fs {
		out[i] = evaluator.Span{Start: f.Start, End: f.End, Type: f.Type}
	}
	return out, nil
}
