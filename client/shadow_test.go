package client

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestShadowControlsInProcess: shadow controls evaluated in-process (sdk controls, and server controls
// in local mode) never raise and never change the decision, and are recorded as shadow events with what
// they would have decided.
func TestShadowControlsInProcess(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ex    guard.Execution
		local bool
	}{{"sdk control", guard.ExecutionSDK, false}, {"server control in local mode", guard.ExecutionServer, true}} {
		t.Run(tt.name, func(t *testing.T) {
			sh := ctl(1, "would-deny", tt.ex, guard.DecisionDeny, "input", "secret")
			sh.Control.Mode = guard.ModeShadow
			f, srv := newFakeAPI(t, sh, ctl(2, "log-all", tt.ex, guard.DecisionLog, "input", "."))
			cfg := testConfig(srv.URL)
			cfg.Observability = Bool(true)
			cfg.LocalServerControls = tt.local
			a, err := Init(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := Protect(a, echo, StepName("chat"))
			for _, in := range []string{"a secret", "hello"} {
				if _, err := p(context.Background(), in); err != nil {
					t.Fatalf("%q: %v (a shadow control must never raise)", in, err)
				}
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			var shadow, matched, enforced int
			for _, e := range f.receivedEvents() {
				switch {
				case e.Shadow:
					if e.ControlName != "would-deny" || e.Action != guard.DecisionDeny {
						t.Errorf("shadow event %+v", e)
					}
					shadow++
					if e.Matched {
						matched++
					}
				default:
					if e.ControlName != "log-all" {
						t.Errorf("event of %s without shadow", e.ControlName)
					}
					enforced++
				}
			}
			// 2 calls x 2 stages: the shadow control is evaluated at each, matching on "a secret".
			if shadow != 4 || matched != 2 || enforced != 4 {
				t.Fatalf("%d shadow events (%d matched), %d enforced; want 4 (2), 4", shadow, matched, enforced)
			}
		})
	}
}
