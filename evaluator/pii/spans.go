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
	return spansOf(e.Scan(evaluator.ScanText(d))), nil
}

// EvaluateSpans implements evaluator.SpanEvaluator: one Scan gives both the Result and the spans.
func (e *Evaluator) EvaluateSpans(ctx context.Context, d *evaluator.Data) (evaluator.Result, evaluator.Found, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return evaluator.Result{Confidence: 1}, evaluator.Found{}, nil
	}
	if err := ctx.Err(); err != nil {
		return evaluator.Result{}, evaluator.Found{}, err
	}
	fs := e.Scan(evaluator.ScanText(d))
	return e.result(fs), evaluator.Found{Spans: spansOf(fs)}, nil
}

// spansOf is the spans of findings fs.
func spansOf(fs []Finding) []evaluator.Span {
	if len(fs) == 0 {
		return nil
	}
	out := make([]evaluator.Span, len(fs))
	for i, f := range fs {
		out[i] = evaluator.Span{Start: f.Start, End: f.End, Type: f.Type}
	}
	return out
}
