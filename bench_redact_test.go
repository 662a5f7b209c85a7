package guard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/pii"
	_ "github.com/guardrail-control/guard/evaluator/secrets"
)

// BenchmarkRedact evaluates a 2 KB output holding two e-mail addresses and a GitHub token against a pii
// and a secrets control at post, with action.redact (redact) and without (detect: the same controls, the
// same matches, no redaction), so that the difference is the cost of the redaction pass.
func BenchmarkRedact(b *testing.B) {
	filler := strings.Repeat("The quarterly report lists the open items and the owners of each. ", 30)
	out := "Contact jane.doe@example.com or ops@example.org. " + filler[:1900] +
		" token ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT end."
	for _, bc := range []struct {
		name   string
		redact *guard.Redaction
	}{{"detect", nil}, {"redact", &guard.Redaction{}}} {
		b.Run(bc.name, func(b *testing.B) {
			var controls []guard.Control
			for i, ev := range []string{"pii", "secrets"} {
				controls = append(controls, guard.Control{ID: int64(i + 1), Name: ev, Data: guard.ControlData{Enabled: true,
					Condition: guard.Condition{Selector: &guard.Selector{Path: "output"}, Evaluator: &guard.EvaluatorSpec{Name: ev, Config: map[string]any{}}},
					Action:    guard.Action{Decision: guard.DecisionWarn, Redact: bc.redact}}})
			}
			e := guard.New()
			if err := e.Update(controls); err != nil {
				b.Fatal(err)
			}
			step := &guard.Step{Type: "llm", Name: "chat", Input: "x", Output: out}
			ctx := context.Background()
			res, err := e.Evaluate(ctx, step, guard.StagePost)
			if err != nil || len(res.Matches) != 2 {
				b.Fatalf("matches %v, err %v", names(res.Matches), err)
			}
			if bc.redact != nil {
				if got, _ := res.Redacted.Output.(string); got == "" || strings.Contains(got, "ghp_") || strings.Contains(got, "@example") {
					b.Fatalf("not redacted: %q", got)
				}
			}
			loop(b, func() {
				if _, err := e.Evaluate(ctx, step, guard.StagePost); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkRefusedStepRedaction (issue 32): a deny control refuses a step whose input note (1 KB to 1 MB)
// holds an e-mail address; a log+redact pii control comes after it. Since issue 32 the redacting control
// is evaluated after the deny for the redaction of what the refused step leaves behind (redact-after-deny);
// the base line is the same deny with the pii control not redacting (deny-only: it is skipped after the
// deny, as every control was before), so the difference is the cost the change adds to such steps;
// allowed-redacted is the same step under the limit (allowed, redacted as before): what a refused step
// now costs is what an allowed one always cost.
func BenchmarkRefusedStepRedaction(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		note := strings.Repeat("The refund covers the order and its shipping. ", size/46+1)[:size-40] + " mail jane.doe@example.com"
		for _, bc := range []struct {
			name   string
			redact *guard.Redaction
			amount string
		}{{"deny-only", nil, "2500"}, {"redact-after-deny", &guard.Redaction{}, "2500"}, {"allowed-redacted", &guard.Redaction{}, "25"}} {
			b.Run(bc.name+"/"+sizeName(size), func(b *testing.B) {
				e := guard.New()
				err := e.Update([]guard.Control{
					{ID: 1, Name: "over-limit", Data: guard.ControlData{Enabled: true,
						Condition: guard.Condition{Selector: &guard.Selector{Path: "input.amount"}, Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": "^[0-9]{4,}"}}},
						Action:    guard.Action{Decision: guard.DecisionDeny, Approval: &guard.Approval{}}}},
					{ID: 2, Name: "hide-emails", Data: guard.ControlData{Enabled: true,
						Condition: guard.Condition{Selector: &guard.Selector{Path: "input"}, Evaluator: &guard.EvaluatorSpec{Name: "pii", Config: map[string]any{"entities": []any{"email"}}}},
						Action:    guard.Action{Decision: guard.DecisionLog, Redact: bc.redact}}},
				})
				if err != nil {
					b.Fatal(err)
				}
				step := &guard.Step{Type: "tool", Name: "refund", Input: map[string]any{"amount": bc.amount, "note": note}}
				ctx := context.Background()
				res, err := e.Evaluate(ctx, step, guard.StagePre)
				if err != nil || res.IsSafe != (bc.amount == "25") || (res.Redacted != nil) != (bc.redact != nil) {
					b.Fatalf("decision %s, redacted %v, err %v", res.Decision, res.Redacted != nil, err)
				}
				b.SetBytes(int64(size))
				loop(b, func() {
					if _, err := e.Evaluate(ctx, step, guard.StagePre); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return itoa(int64(n>>20)) + "MB"
	}
	return itoa(int64(n>>10)) + "KB"
}
