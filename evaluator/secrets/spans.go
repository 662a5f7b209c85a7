package secrets

import (
	"context"
	"errors"

	"github.com/guardrail-control/guard/evaluator"
)

// errTooManySecrets is the error of Spans for a text holding more secrets than Scan reports.
var errTooManySecrets = errors.New("too many secrets to locate each one")

// Spans implements evaluator.Spanner: the secrets Scan finds, typed by the id of the rule that found each
// (github-pat, aws-access-token...). A span covers the secret itself, not the key or assignment around it.
// A text with maxTotalFindings secrets or more is an error (Scan stops there; redaction must not miss one).
func (e *Evaluator) Spans(ctx context.Context, d *evaluator.Data) ([]evaluator.Span, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return nil, nil
	}
	fs, err := e.Scan(ctx, evaluator.ScanText(d))
	if err != nil {
		return nil, err
	}
	return spansOf(fs)
}

// EvaluateSpans implements evaluator.SpanEvaluator: one Scan gives both the Result and the spans.
func (e *Evaluator) EvaluateSpans(ctx context.Context, d *evaluator.Data) (evaluator.Result, evaluator.Found, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return evaluator.Result{Confidence: 1}, evaluator.Found{}, nil
	}
	fs, err := e.Scan(ctx, evaluator.ScanText(d))
	if err != nil {
		return evaluator.Result{}, evaluator.Found{}, err
	}
	spans, err := spansOf(fs)
	return e.result(fs), evaluator.Found{Spans: spans, Err: err}, nil
}

// spansOf is the spans of findings fs, or errTooManySecrets when Scan stopped at its bound.
func spansOf(fs []Finding) ([]evaluator.Span, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	if len(fs) >= maxTotalFindings {
		// Scan stops looking at this bound, so there may be more: the engine then redacts the whole text.
		return nil, errTooManySecrets
	}
	out := make([]evaluator.Span, len(fs))
	for i, f := range fs {
		out[i] = evaluator.Span{Start: f.Start, End: f.End, Type: f.Rule}
	}
	return out, nil
}
