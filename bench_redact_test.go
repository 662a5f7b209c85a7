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
