package pii_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/pii"
)

type counting struct {
	*pii.Evaluator
	calls *atomic.Int64
}

func (c counting) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	c.calls.Add(1)
	return c.Evaluator.Evaluate(ctx, d)
}

// TestPrefilterSkipsTextWithoutDigitsOrAt: no digit and no "@" means no personal data the evaluator
// knows, and the engine does not run it.
func TestPrefilterSkipsTextWithoutDigitsOrAt(t *testing.T) {
	var calls atomic.Int64
	f := pii.Factory()
	f.New = func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		e, err := pii.New(config)
		if err != nil {
			return nil, err
		}
		return counting{e, &calls}, nil
	}
	r := evaluator.NewRegistry()
	r.Register(f)
	data, err := guard.ParseControlData([]byte(`{"condition": {"selector": {"path": "output"}, "evaluator": {"name": "pii", "config": {}}}, "action": {"decision": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := guard.New(guard.WithRegistry(r))
	if err := eng.Update([]guard.Control{{ID: 1, Name: "pii", Data: data}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		output    string
		wantCalls int64
		want      guard.Decision
	}{
		{"Thanks, the ticket is closed and nothing else is needed.", 0, guard.DecisionAllow},
		{"Write to jane@example.com", 1, guard.DecisionDeny},
	} {
		calls.Store(0)
		res, err := eng.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Output: tt.output}, guard.StagePost)
		if err != nil {
			t.Fatal(err)
		}
		if calls.Load() != tt.wantCalls || res.Decision != tt.want {
			t.Fatalf("%q: %d calls, decision %s; want %d, %s", tt.output, calls.Load(), res.Decision, tt.wantCalls, tt.want)
		}
	}
}
