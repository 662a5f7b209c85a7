package secrets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestSpans: a span covers the secret only, typed by the rule that found it.
func TestSpans(t *testing.T) {
	e, err := New(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	const token = "ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT"
	tests := []struct {
		text     string
		want     string // the text of the only span, "" for none
		wantType string
	}{
		{"push with " + token + " now", token, "github-pat"},
		{"The key to a good password policy is rotation.", "", ""},
	}
	for _, tc := range tests {
		spans, err := e.Spans(context.Background(), &evaluator.Data{Value: tc.text, Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" {
			if len(spans) != 0 {
				t.Errorf("%q: spans %v, want none", tc.text, spans)
			}
			continue
		}
		if len(spans) != 1 || tc.text[spans[0].Start:spans[0].End] != tc.want || spans[0].Type != tc.wantType {
			t.Errorf("%q: spans %v, want %q typed %s", tc.text, spans, tc.want, tc.wantType)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Spans(ctx, &evaluator.Data{Value: "push " + token, Text: "push " + token}); err == nil {
		t.Error("Spans on a done context succeeded")
	}
}

// TestSpansTooMany: past the bound of Scan, Spans fails rather than miss a secret.
func TestSpansTooMany(t *testing.T) {
	e, err := New(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < maxTotalFindings+5; i++ {
		fmt.Fprintf(&b, "ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5g%06d ", i)
	}
	text := b.String()
	if _, err := e.Spans(context.Background(), &evaluator.Data{Value: text, Text: text}); !errors.Is(err, errTooManySecrets) {
		t.Fatalf("Spans of %d secrets: %v, want errTooManySecrets", maxTotalFindings+5, err)
	}
}
