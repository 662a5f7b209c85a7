package guard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// TestRedactionOfRefusedStep (issue 32, item 4): a deny ends the evaluation, but what the refused step
// leaves behind (an approval request, a captured step) must carry the redactions of the redacting
// controls that match it, also those after the deny. They redact without being listed.
func TestRedactionOfRefusedStep(t *testing.T) {
	reg := evaluator.NewRegistry()
	evaluator.RegisterBuiltins(reg)
	schema := []byte(`{"type": "object"}`)
	reg.Register(evaluator.Factory{Name: "sleep", ConfigSchema: schema, External: true, New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		return &sleepEval{matched: boolean(cfg, "matched"), key: str(cfg, "key")}, nil
	}})
	regex := func(path, pattern string) guard.Condition {
		return leaf(path, "regex", map[string]any{"pattern": pattern})
	}
	redactEmail := func(id int64, d guard.Decision) guard.Control {
		c := ctl(id, d, regex("input.note", `[a-z]+@[a-z]+\.com`))
		c.Data.Action.Redact = &guard.Redaction{}
		return c
	}
	approval := ctl(1, guard.DecisionDeny, regex("input.amount", `^[0-9]{4,}`))
	approval.Data.Action.Approval = &guard.Approval{Message: "refund"}
	tests := []struct {
		name     string
		controls []guard.Control
		input    map[string]any
		decision guard.Decision
		redacted bool
		listed   int // controls listed in the result
	}{
		{"approval deny, then log+redact", []guard.Control{approval, redactEmail(2, guard.DecisionLog)},
			map[string]any{"amount": "2500", "note": "write to alice@example.com"}, guard.DecisionDeny, true, 1},
		{"plain deny, then warn+redact", []guard.Control{ctl(1, guard.DecisionDeny, regex("input.amount", `^[0-9]{4,}`)), redactEmail(2, guard.DecisionWarn)},
			map[string]any{"amount": "2500", "note": "write to alice@example.com"}, guard.DecisionDeny, true, 1},
		{"deny, redact control not matching", []guard.Control{approval, redactEmail(2, guard.DecisionLog)},
			map[string]any{"amount": "2500", "note": "no address"}, guard.DecisionDeny, false, 1},
		{"no deny: listed and redacted as before", []guard.Control{approval, redactEmail(2, guard.DecisionLog)},
			map[string]any{"amount": "25", "note": "write to alice@example.com"}, guard.DecisionAllow, true, 2},
		{"external deny (concurrent evaluation), then log+redact", []guard.Control{
			ctl(1, guard.DecisionDeny, leaf("input", "sleep", map[string]any{"matched": true})), redactEmail(2, guard.DecisionLog)},
			map[string]any{"amount": "2500", "note": "write to alice@example.com"}, guard.DecisionDeny, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := guard.New(guard.WithRegistry(reg))
			if err := e.Update(tc.controls); err != nil {
				t.Fatal(err)
			}
			step := &guard.Step{Type: "tool", Name: "refund", Input: tc.input}
			for range 3 { // the scratch comes back from the pool clean
				res, err := e.Evaluate(context.Background(), step, guard.StagePre)
				if err != nil {
					t.Fatal(err)
				}
				if res.Decision != tc.decision {
					t.Fatalf("decision %s, want %s", res.Decision, tc.decision)
				}
				if n := len(res.Matches) + len(res.NonMatches) + len(res.Errors); n != tc.listed {
					t.Fatalf("%d controls listed, want %d: %+v", n, tc.listed, res)
				}
				shown, _ := json.Marshal(res.RedactedStep(step))
				if got := res.Redacted != nil; got != tc.redacted {
					t.Fatalf("redacted %v, want %v: %s", got, tc.redacted, shown)
				}
				if tc.redacted && (strings.Contains(string(shown), "alice@example.com") || !strings.Contains(string(shown), "[REDACTED:regex]")) {
					t.Fatalf("not redacted: %s", shown)
				}
			}
		})
	}
}
