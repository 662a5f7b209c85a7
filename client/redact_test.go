package client

import (
	"context"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// redactCtl is a warn control with action.redact on one leaf.
func redactCtl(id int64, ex guard.Execution, stage guard.Stage, path, evName string, config map[string]any) guard.AgentControl {
	c := detectorCtl(id, "redact-"+evName, path, evName, config, stage)
	c.Control.Execution = ex
	c.Control.Action = guard.Action{Decision: guard.DecisionWarn, Redact: &guard.Redaction{}}
	return c
}

type query struct {
	Text string `json:"text"`
	Page int    `json:"page"`
}

// TestProtectRedacts: with redacting controls, the protected function receives the redacted input and
// its caller gets the redacted output, whether the controls run in-process (sdk, or server controls
// evaluated locally) or on the server (whose answer carries redacted).
func TestProtectRedacts(t *testing.T) {
	const token = "ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT"
	for _, tc := range []struct {
		name      string
		ex        guard.Execution
		local     bool
		serverRes func(stage guard.Stage) *guard.Result // nil: the server is not asked
	}{
		{name: "sdk controls in-process", ex: guard.ExecutionSDK},
		{name: "server controls evaluated in-process", ex: guard.ExecutionServer, local: true},
		{name: "server controls evaluated by the server", ex: guard.ExecutionServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAPI(t,
				redactCtl(1, tc.ex, guard.StagePre, "input.text", "regex", map[string]any{"pattern": `\d{3}-\d{2}-\d{4}`}),
				redactCtl(2, tc.ex, guard.StagePost, "output", "secrets", map[string]any{}))
			cfg := testConfig(srv.URL)
			cfg.LocalServerControls = tc.local
			a := initAgent(t, cfg)
			remote := tc.ex == guard.ExecutionServer && !tc.local
			var seen query
			fn := Protect(a, func(_ context.Context, q query) (string, error) {
				seen = q
				if remote {
					// The fake server answers the post stage with what guard's server would redact.
					f.mu.Lock()
					f.evalResult = &guard.Result{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1,
						Matches: []guard.ControlResult{}, Errors: []guard.ControlResult{}, NonMatches: []guard.ControlResult{},
						Redacted: &guard.Redacted{Output: "token [REDACTED:github-pat]"}}
					f.mu.Unlock()
				}
				return "token " + token, nil
			}, StepName("lookup"))
			if remote {
				f.mu.Lock()
				f.evalResult = &guard.Result{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1,
					Matches: []guard.ControlResult{}, Errors: []guard.ControlResult{}, NonMatches: []guard.ControlResult{},
					Redacted: &guard.Redacted{Input: map[string]any{"text": "ssn [REDACTED:regex]", "page": float64(2)}}}
				f.mu.Unlock()
			}
			out, err := fn(context.Background(), query{Text: "ssn 123-45-6789", Page: 2})
			if err != nil {
				t.Fatal(err)
			}
			if want := (query{Text: "ssn [REDACTED:regex]", Page: 2}); seen != want {
				t.Errorf("the function received %+v, want %+v", seen, want)
			}
			if want := "token [REDACTED:github-pat]"; out != want {
				t.Errorf("Protect returned %q, want %q", out, want)
			}
			if _, _, calls := f.counts(); (calls > 0) != remote {
				t.Errorf("%d server evaluations, remote %v", calls, remote)
			}
		})
	}
}

// TestCheckStepRedacts: CheckStep replaces the stage's payload of the step it is given.
func TestCheckStepRedacts(t *testing.T) {
	_, srv := newFakeAPI(t, redactCtl(1, guard.ExecutionSDK, guard.StagePost, "output", "regex", map[string]any{"pattern": "s3cr3t"}))
	a := initAgent(t, testConfig(srv.URL))
	orig := map[string]any{"a": "the s3cr3t", "b": []any{"s3cr3t", "ok"}}
	step := guard.Step{Type: "tool", Name: "t", Input: map[string]any{}, Output: orig}
	if err := a.CheckStep(context.Background(), &step, guard.StagePost); err != nil {
		t.Fatal(err)
	}
	got := step.Output.(map[string]any)
	if got["a"] != "the [REDACTED:regex]" || got["b"].([]any)[0] != "[REDACTED:regex]" || got["b"].([]any)[1] != "ok" {
		t.Errorf("output after CheckStep: %v", got)
	}
	if orig["a"] != "the s3cr3t" {
		t.Errorf("CheckStep modified the caller's value: %v", orig)
	}
}
