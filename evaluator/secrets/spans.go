package secrets

import (
	"context"

	"github.com/guardrail-control/guard/evaluator"
)

// Spans implements evaluator.Spanner: the secrets Scan finds, typed by the id of the rule that found each
// (github-pat, aws-access-token...). A span covers the secret itself, not the key or assignment around it.
func (e *Evaluator) Spans(ctx context.Context, d *evaluator.Data) ([]evaluator.Span, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return nil, nil
	}
	fs, err := e.Scan(ctx, d.Text)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	out := make([]evaluator.Span, len(fs))
	for i, f := range fs {
		out[i] = evaluator.Span{Start: f.Start, End: f.End, Type: f.Rule}
	}
	return out, nil
}
