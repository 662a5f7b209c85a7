package server

import (
	"context"
	"fmt"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestResultSizeFitsLargeResults: the response of an evaluation listing 1000 controls fits the buffer
// writeResult sizes for it (one allocation, no growth), and that buffer is not much larger than needed.
func TestResultSizeFitsLargeResults(t *testing.T) {
	controls := make([]guard.Control, 1000)
	for i := range controls {
		d := guard.ControlData{
			Enabled: true,
			Condition: guard.Condition{Selector: &guard.Selector{Path: "input"}, Evaluator: &guard.EvaluatorSpec{
				Name: "list", Config: map[string]any{"values": []any{fmt.Sprintf("term %d", i)}, "match_mode": "contains"}}},
			Action: guard.Action{Decision: guard.DecisionWarn},
		}
		if i%7 == 0 {
			d.Action.Decision = guard.DecisionSteer
			d.Action.SteeringContext = &guard.SteeringContext{Message: "ask first", RequiredActions: []string{"confirm"}}
		}
		controls[i] = guard.Control{ID: int64(i + 1), Name: fmt.Sprintf("control number %d", i), Data: d}
	}
	e := guard.New()
	if err := e.Update(controls); err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{"nothing to see", "term 3 and term 14 and term 999"} {
		res, err := e.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Input: input}, guard.StagePre)
		if err != nil {
			t.Fatal(err)
		}
		b, err := appendResult(nil, res)
		if err != nil {
			t.Fatal(err)
		}
		size, n := resultSize(res), len(b)+1 // and the newline
		if n > size || size > n+n/4 {
			t.Fatalf("%q: response of %d bytes, %d sized for it", input, n, size)
		}
		buf := make([]byte, 0, size)
		if out, _ := appendResult(buf, res); cap(out) != cap(buf) {
			t.Fatalf("%q: the buffer grew from %d to %d", input, cap(buf), cap(out))
		}
	}
}

func TestDigits(t *testing.T) {
	for _, v := range []int64{0, 9, 10, 99, 100, -1, -10, 1<<63 - 1, -1 << 63} {
		if got, want := digits(v), len(fmt.Sprint(v)); got != want {
			t.Errorf("digits(%d) = %d, want %d", v, got, want)
		}
	}
}
