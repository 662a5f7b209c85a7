package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

// loopControl denies the third call of a tool in one session (sdk: evaluated in-process).
func loopControl() guard.AgentControl {
	d := guard.ControlData{
		Enabled:   true,
		Execution: guard.ExecutionSDK,
		Scope:     guard.Scope{Stages: []guard.Stage{guard.StagePre}},
		Condition: guard.Condition{Selector: &guard.Selector{Path: "session.count"},
			Evaluator: &guard.EvaluatorSpec{Name: "threshold", Config: map[string]any{"gt": 2.0}}},
		Action: guard.Action{Decision: guard.DecisionDeny},
	}
	return guard.AgentControl{ID: 7, ControlID: 7, Name: "tool-loop", Enabled: true, Control: d}
}

func TestSessionSteps(t *testing.T) {
	_, srv := newFakeAPI(t, loopControl())
	a := initAgent(t, testConfig(srv.URL))
	ctx := context.Background()
	s1, err := a.NewSession("")
	if err != nil || len(s1.ID()) != 36 {
		t.Fatalf("%v %q", err, s1.ID())
	}
	step := func() *guard.Step {
		return &guard.Step{Type: "tool", Name: "search", Context: map[string]any{"user": "u1"}}
	}
	for i := 1; i <= 2; i++ {
		if err := s1.CheckStep(ctx, step(), guard.StagePre); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	err = s1.CheckStep(ctx, step(), guard.StagePre)
	var v *guard.ControlViolationError
	if !errors.As(err, &v) || v.ControlName != "tool-loop" || !strings.Contains(v.Message, "session.count = 3") {
		t.Fatalf("third call: %v", err)
	}
	// Another session has its own count; steps without a session count alone.
	s2, _ := a.NewSession("conv-2")
	if err := s2.CheckStep(ctx, step(), guard.StagePre); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := a.CheckStep(ctx, step(), guard.StagePre); err != nil {
			t.Fatalf("no session: %v", err)
		}
	}
	// A refresh recompiles the engines: the session is not forgotten.
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s1.CheckStep(ctx, step(), guard.StagePre); !errors.As(err, &v) {
		t.Fatalf("after refresh: %v", err)
	}
	// Protect picks the session up from the context.
	search := Protect(a, func(_ context.Context, q string) (string, error) { return "ok", nil }, StepName("search"), StepType("tool"))
	s3, _ := a.NewSession("conv-3")
	sctx := s3.Context(WithStepContext(ctx, map[string]any{"user": "u1"}))
	for i := 1; i <= 3; i++ {
		_, err := search(sctx, "q")
		if (err != nil) != (i == 3) {
			t.Fatalf("protected call %d: %v", i, err)
		}
	}
	if _, err := a.NewSession(strings.Repeat("x", 129)); err == nil {
		t.Fatal("a long id was accepted")
	}
}
