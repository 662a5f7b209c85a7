package guard_test

import (
	"testing"

	"github.com/guardrail-control/guard"
)

func TestPrefilter(t *testing.T) {
	tests := []struct {
		name    string
		cfg     map[string]any
		input   any
		matched bool
		ran     bool
	}{
		{"literal absent: not run", map[string]any{"needle": "secret"}, "nothing here", false, false},
		{"literal present: run", map[string]any{"needle": "secret"}, "a secret", true, true},
		{"ASCII case folded by the filter, exact evaluator decides", map[string]any{"needle": "secret"}, "a SECRET", false, true},
		{"folding evaluator on ASCII text", map[string]any{"needle": "secret", "fold": true}, "a SECRET", true, true},
		{"folding evaluator, non-ASCII text: filter not trusted", map[string]any{"needle": "k", "fold": true}, "\u212a only", true, true}, // Kelvin sign folds to k
		{"exact evaluator, non-ASCII text: filter trusted", map[string]any{"needle": "k"}, "\u212a only", false, false},
		{"non-string value always runs", map[string]any{"needle": "secret"}, map[string]any{"a": 1}, false, true},
		{"null value always runs", map[string]any{"needle": "secret"}, nil, false, true},
		{"evaluator without prefilter always runs", map[string]any{"needle": "secret", "nofilter": true}, "nothing", false, true},
		{"folding evaluator with a non-ASCII literal is not filtered", map[string]any{"needle": "é", "fold": true}, "plain", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{"key": "k"}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			e := newEngine(t,
				ctl(1, guard.DecisionLog, leaf("input", "contains", cfg)),
				ctl(2, guard.DecisionLog, has("other literal")),
			)
			resetCalls()
			res, err := e.Evaluate(bg, llm(tt.input), guard.StagePre)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Matches) == 1; got != tt.matched {
				t.Errorf("matched = %v, want %v", got, tt.matched)
			}
			if got := calls("k") > 0; got != tt.ran {
				t.Errorf("evaluator ran = %v, want %v", got, tt.ran)
			}
			for _, cr := range res.NonMatches {
				if cr.Result.Confidence != 1 {
					t.Errorf("skipped leaf confidence %v", cr.Result.Confidence)
				}
			}
		})
	}
}

// TestPrefilterManyPaths: literals of different paths do not mix.
func TestPrefilterManyPaths(t *testing.T) {
	e := newEngine(t,
		ctl(1, guard.DecisionLog, leaf("input.a", "contains", map[string]any{"needle": "alpha"})),
		ctl(2, guard.DecisionLog, leaf("input.b", "contains", map[string]any{"needle": "beta"})),
		ctl(3, guard.DecisionLog, or(leaf("input.a", "contains", map[string]any{"needle": "beta"}), leaf("input.b", "contains", map[string]any{"needle": "alpha"}))),
	)
	for i := 0; i < 3; i++ { // pooled scratch must be reset between evaluations
		res := evaluate(t, e, llm(map[string]any{"a": "alpha", "b": "gamma"}))
		if len(res.Matches) != 1 || res.Matches[0].ControlID != 1 {
			t.Fatalf("matches %v", names(res.Matches))
		}
		res = evaluate(t, e, llm(map[string]any{"a": "gamma", "b": "alpha"}))
		if len(res.Matches) != 1 || res.Matches[0].ControlID != 3 {
			t.Fatalf("matches %v", names(res.Matches))
		}
	}
}
