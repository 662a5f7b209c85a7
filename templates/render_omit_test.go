package templates_test

import (
	"context"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/templates"
)

// TestRuleOfTwoWithoutStepLists: rendered with no parameter (steps labelled by their schemas or by the
// MCP gateway), rule-of-two has no label_steps at all, not invalid empty entries, and denies the third
// label whichever way the steps got theirs; with some lists, only their entries remain.
func TestRuleOfTwoWithoutStepLists(t *testing.T) {
	tpl, ok := templates.Shipped().Get("rule-of-two")
	if !ok {
		t.Fatal("no rule-of-two")
	}
	for _, tc := range []struct {
		name    string
		params  map[string]any
		entries int
	}{
		{"no parameters", map[string]any{}, 0},
		{"egress steps only", map[string]any{"egress_steps": []any{"http_post"}}, 1},
		{"all three", map[string]any{"untrusted_steps": []any{"a"}, "sensitive_steps": []any{"b"}, "egress_steps": []any{"c"}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tpl.Render(context.Background(), tc.params)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			if s := r.Data.Action.Session; s != nil {
				got = len(s.LabelSteps)
			}
			if got != tc.entries {
				t.Fatalf("label_steps entries %d, want %d: %+v", got, tc.entries, r.Data.Action.Session)
			}
			e := guard.New(guard.WithStepLabels(map[string][]string{"fetch": {"untrusted"}, "read": {"sensitive"}, "post": {"egress"}}))
			if err := e.Update([]guard.Control{{ID: 1, Name: "rule-of-two", Data: r.Data}}); err != nil {
				t.Fatal(err)
			}
			for i, name := range []string{"fetch", "read", "post"} {
				res, err := e.Evaluate(context.Background(), &guard.Step{Type: "tool", Name: name, Context: map[string]any{"session_id": "s"}}, guard.StagePre)
				if err != nil {
					t.Fatal(err)
				}
				if want := i == 2; (res.Decision == guard.DecisionDeny) != want {
					t.Fatalf("%s: %s", name, res.Decision)
				}
			}
		})
	}
}
