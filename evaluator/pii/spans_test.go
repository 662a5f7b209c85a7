package pii

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestSpans: the spans are the findings of Scan, typed by entity, and cover exactly the personal data.
func TestSpans(t *testing.T) {
	e, err := New(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want map[string]string // span text -> type
	}{
		{"Mail jane.doe@example.com, card 4111 1111 1111 1111.", map[string]string{"jane.doe@example.com": Email, "4111 1111 1111 1111": CreditCard}},
		{"nothing personal here", map[string]string{}},
		{"", map[string]string{}},
	}
	for _, tc := range tests {
		spans, err := e.Spans(context.Background(), &evaluator.Data{Value: tc.text, Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range spans {
			got[tc.text[s.Start:s.End]] = s.Type
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%q: spans %v, want %v", tc.text, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: span %q typed %q, want %q", tc.text, k, got[k], v)
			}
		}
		if n := len(e.Scan(tc.text)); n != len(spans) {
			t.Errorf("%q: %d spans, %d findings", tc.text, len(spans), n)
		}
	}
}
