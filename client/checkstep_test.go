package client

import (
	"context"
	"errors"
	"testing"

	"github.com/guardrail-control/guard"
)

func TestCheckStep(t *testing.T) {
	f, srv := newFakeAPI(t,
		ctl(1, "no-rm", guard.ExecutionSDK, guard.DecisionDeny, "input.cmd", `rm -rf`, guard.StagePre),
		ctl(2, "no-pw", guard.ExecutionServer, guard.DecisionSteer, "input.cmd", `password`, guard.StagePre),
		ctl(3, "no-ssn-out", guard.ExecutionServer, guard.DecisionDeny, "output", `\d{3}-\d{2}-\d{4}`, guard.StagePost))
	cfg := testConfig(srv.URL)
	cfg.LocalServerControls = true
	cfg.Observability = Bool(true)
	a := initAgent(t, cfg)

	tests := []struct {
		name   string
		step   *guard.Step
		stage  guard.Stage
		want   string // "", "deny", "steer" or "error"
		contrl string
	}{
		{"allowed", &guard.Step{Type: "tool", Name: "shell", Input: map[string]any{"cmd": "ls"}}, guard.StagePre, "", ""},
		{"sdk deny", &guard.Step{Type: "tool", Name: "shell", Input: map[string]any{"cmd": "rm -rf /"}}, guard.StagePre, "deny", "no-rm"},
		{"server steer in-process", &guard.Step{Type: "tool", Name: "shell", Input: map[string]any{"cmd": "password"}}, guard.StagePre, "steer", "no-pw"},
		{"post deny", &guard.Step{Type: "tool", Name: "shell", Input: map[string]any{}, Output: "ssn 123-45-6789"}, guard.StagePost, "deny", "no-ssn-out"},
		{"post allowed", &guard.Step{Type: "tool", Name: "shell", Input: map[string]any{}, Output: "fine"}, guard.StagePost, "", ""},
		{"no step", nil, guard.StagePre, "error", ""},
		{"no name", &guard.Step{Type: "tool"}, guard.StagePre, "error", ""},
		{"bad stage", &guard.Step{Type: "tool", Name: "shell"}, guard.Stage("during"), "error", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := a.CheckStep(context.Background(), tc.step, tc.stage)
			var v *guard.ControlViolationError
			var s *guard.ControlSteerError
			switch tc.want {
			case "":
				if err != nil {
					t.Fatalf("CheckStep = %v, want nil", err)
				}
			case "deny":
				if !errors.As(err, &v) || v.ControlName != tc.contrl {
					t.Fatalf("CheckStep = %v, want a deny by %s", err, tc.contrl)
				}
			case "steer":
				if !errors.As(err, &s) || s.ControlName != tc.contrl || len(s.SteeringContext.RequiredActions) == 0 {
					t.Fatalf("CheckStep = %v, want a steer by %s with its steering context", err, tc.contrl)
				}
			case "error":
				if err == nil || errors.As(err, &v) || errors.As(err, &s) {
					t.Fatalf("CheckStep = %v, want a usage error", err)
				}
			}
		})
	}
	// Server controls were evaluated in-process (LocalServerControls): no POST /evaluation, and the
	// events of every evaluation reach the server.
	if _, _, evals := f.counts(); evals != 0 {
		t.Fatalf("%d POST /evaluation, want none", evals)
	}
	a.FlushEvents(context.Background())
	matched := map[string]bool{}
	for _, e := range f.receivedEvents() {
		if e.Matched && e.StepType == "tool" && e.StepName == "shell" {
			matched[e.ControlName] = true
		}
	}
	for _, c := range []string{"no-rm", "no-pw", "no-ssn-out"} {
		if !matched[c] {
			t.Fatalf("no matched event of %s among %v", c, matched)
		}
	}
}
