package client

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestShadowSessionControlInProcess (issue 32, item 6): a shadow tool-loop evaluated in-process (an sdk
// control, and a server control in local mode) reads the session before the step, as the same control
// enforced would: with more than 2 calls denied, it would deny the 3rd and 4th (reading the state after
// the enforced controls' commit, it counted each call twice, or never more than once on an agent whose
// only session control it is).
func TestShadowSessionControlInProcess(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ex    guard.Execution
		local bool
	}{{"sdk control", guard.ExecutionSDK, false}, {"server control in local mode", guard.ExecutionServer, true}} {
		t.Run(tt.name, func(t *testing.T) {
			loop := ctl(1, "loop", tt.ex, guard.DecisionDeny, "input", ".", guard.StagePre)
			loop.Control.Mode = guard.ModeShadow
			loop.Control.Condition = guard.Condition{Selector: &guard.Selector{Path: "session.count", Window: "1h"},
				Evaluator: &guard.EvaluatorSpec{Name: "threshold", Config: map[string]any{"gt": 2}}}
			f, srv := newFakeAPI(t, loop, ctl(2, "log-all", tt.ex, guard.DecisionLog, "input", "."))
			cfg := testConfig(srv.URL)
			cfg.Observability = Bool(true)
			cfg.LocalServerControls = tt.local
			a, err := Init(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := a.NewSession("conv-1")
			if err != nil {
				t.Fatal(err)
			}
			p := Protect(a, echo, StepName("search"))
			for i := range 4 {
				if _, err := p(sess.Context(context.Background()), fmt.Sprint("call ", i)); err != nil {
					t.Fatalf("call %d: %v (a shadow control must never raise)", i, err)
				}
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range f.receivedEvents() {
				if e.Shadow {
					got = append(got, fmt.Sprint(e.Matched))
				}
			}
			if strings.Join(got, " ") != "false false true true" {
				t.Fatalf("shadow events %v", got)
			}
		})
	}
}
