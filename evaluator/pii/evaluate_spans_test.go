package pii

import (
	"context"
	"reflect"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestEvaluateSpans: one Scan answers what Evaluate and Spans answer.
func TestEvaluateSpans(t *testing.T) {
	e, err := New(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, text := range []string{"", "Mail jane.doe@example.com, card 4111 1111 1111 1111.", "nothing personal here"} {
		d := &evaluator.Data{Value: text, Text: text}
		wantRes, _ := e.Evaluate(ctx, d)
		wantSpans, _ := e.Spans(ctx, d)
		res, found, err := e.EvaluateSpans(ctx, d)
		if err != nil || found.Err != nil || !reflect.DeepEqual(res, wantRes) || !reflect.DeepEqual(found.Spans, wantSpans) {
			t.Errorf("%q: EvaluateSpans %+v %+v %v; Evaluate %+v, Spans %v", text, res, found, err, wantRes, wantSpans)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := e.EvaluateSpans(cctx, &evaluator.Data{Value: "x", Text: "x"}); err == nil {
		t.Error("EvaluateSpans on a done context succeeded")
	}
}
