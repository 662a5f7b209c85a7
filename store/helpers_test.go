package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// testData returns valid control data: a regex on input.text that denies, enabled.
func testData(pattern string) *guard.ControlData {
	return &guard.ControlData{
		Enabled:   true,
		Condition: guard.Condition{Selector: &guard.Selector{Path: "input.text"}, Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": pattern}}},
		Action:    guard.Action{Decision: guard.DecisionDeny},
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func must[T any](t testing.TB) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func wantValidation(t testing.TB, err error, field string) {
	t.Helper()
	var ve *guard.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v, want *guard.ValidationError", err)
	}
	for _, p := range ve.Problems {
		if p.Field == field {
			return
		}
	}
	t.Fatalf("problems %+v do not name field %q", ve.Problems, field)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
