package client

import (
	"context"
	"strings"
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

// TestLiveShadowAndControlTests: through the Go client against a real server: the server refuses data
// that fails its tests (a 422 naming data.tests.<i>), TestControlData reports every outcome, an sdk
// control in shadow is evaluated in-process without raising and its events reach the server with
// shadow set, and PatchControl with a mode promotes it.
func TestLiveShadowAndControlTests(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	cfg := testConfig(ls.url())
	cfg.Observability = Bool(true)
	a, err := Init(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := ctl(0, "sdk-shadow", guard.ExecutionSDK, guard.DecisionDeny, "input", "bad", guard.StagePre)
	c.Control.Mode = guard.ModeShadow
	c.Control.Tests = []guard.TestCase{{Name: "finds it", Step: guard.Step{Type: "llm", Input: "bad"}, Stage: guard.StagePre,
		Expect: guard.TestExpect{Match: guard.ExpectNoMatch}}} // wrong on purpose
	if _, err := admin.CreateControl(ctx, "refused", &c.Control); err == nil || !strings.Contains(err.Error(), "data.tests.0") {
		t.Fatalf("CreateControl with a failing test: %v", err)
	}
	rep, err := admin.TestControlData(ctx, c.Control)
	if err != nil || rep.Passed || len(rep.Tests) != 1 || rep.Tests[0].Outcome != "match" || rep.Tests[0].Decision != guard.DecisionDeny {
		t.Fatalf("TestControlData = %+v, %v", rep, err)
	}
	c.Control.Tests[0].Expect.Match = guard.ExpectMatch
	id := mustCreate(t, admin, a.Name(), c)
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Protect(a, echo, StepName("chat"))(ctx, "bad"); err != nil {
		t.Fatalf("a shadow control raised: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ls.rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	yes := true
	page, err := admin.QueryEvents(ctx, guard.EventQuery{AgentName: a.Name(), Shadow: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || !page.Events[0].Shadow || !page.Events[0].Matched || page.Events[0].ControlID != id {
		t.Fatalf("shadow events %+v", page.Events)
	}
	enforce := guard.ModeEnforce
	rec, err := admin.PatchControl(ctx, id, guard.ControlPatch{Mode: &enforce})
	if err != nil || rec.Data == nil || rec.Data.Mode != guard.ModeEnforce {
		t.Fatalf("PatchControl mode: %+v, %v", rec, err)
	}
}
