package secrets_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/secrets"
)

// counting wraps the secrets evaluator, keeping its prefilter, and counts the evaluations that run.
type counting struct {
	*secrets.Evaluator
	calls *atomic.Int64
}

func (c counting) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	c.calls.Add(1)
	return c.Evaluator.Evaluate(ctx, d)
}

// TestPrefilterSkipsTextWithoutKeywords: the engine does not run the evaluator on a text holding none of
// the rules' keywords, and does run it (and match) on one that does.
func TestPrefilterSkipsTextWithoutKeywords(t *testing.T) {
	var calls atomic.Int64
	f := secrets.Factory()
	f.New = func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		e, err := secrets.New(config)
		if err != nil {
			return nil, err
		}
		return counting{e, &calls}, nil
	}
	r := evaluator.NewRegistry()
	r.Register(f)
	data, err := guard.ParseControlData([]byte(`{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "secrets", "config": {"rule_groups": ["vcs"]}}}, "action": {"decision": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := guard.New(guard.WithRegistry(r))
	if err := eng.Update([]guard.Control{{ID: 1, Name: "vcs", Data: data}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		input     string
		wantCalls int64
		want      guard.Decision
	}{
		{"a long answer about deployments, with no token prefix at all", 0, guard.DecisionAllow},
		{"here: ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT", 1, guard.DecisionDeny},
	} {
		calls.Store(0)
		res, err := eng.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Input: tt.input}, guard.StagePre)
		if err != nil {
			t.Fatal(err)
		}
		if calls.Load() != tt.wantCalls || res.Decision != tt.want {
			t.Fatalf("%q: %d evaluator calls, decision %s; want %d, %s", tt.input, calls.Load(), res.Decision, tt.wantCalls, tt.want)
		}
	}
}
