package secrets

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestEvaluateSpans: one Scan answers what Evaluate and Spans answer, including a match whose spans
// cannot all be located (too many secrets): matched, with Found.Err.
func TestEvaluateSpans(t *testing.T) {
	e, err := New(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	for i := 0; i < maxTotalFindings+5; i++ {
		fmt.Fprintf(&many, "ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5g%06d ", i)
	}
	ctx := context.Background()
	for _, text := range []string{"", "push with ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT now", "nothing secret", many.String()} {
		d := &evaluator.Data{Value: text, Text: text}
		wantRes, _ := e.Evaluate(ctx, d)
		wantSpans, wantErr := e.Spans(ctx, d)
		res, found, err := e.EvaluateSpans(ctx, d)
		if err != nil || !reflect.DeepEqual(res, wantRes) || !reflect.DeepEqual(found.Spans, wantSpans) || !errors.Is(found.Err, wantErr) {
			t.Errorf("%.40q: EvaluateSpans %+v %+v %v; Evaluate %+v, Spans %v %v", text, res, found, err, wantRes, wantSpans, wantErr)
		}
	}
	if _, _, err := e.EvaluateSpans(ctx, &evaluator.Data{}); err != nil {
		t.Errorf("null: %v", err)
	}
}
