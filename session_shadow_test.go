package guard

import (
	"context"
	"fmt"
	"testing"
)

// shadowOf returns c in shadow mode.
func shadowOf(c Control) Control {
	c.Data.Mode = ModeShadow
	return c
}

// TestShadowSessionReadsStateBeforeTheStep (issue 32, item 6): shadow controls read the session as it
// was before the step, as the enforced ones do: they number steps alike, a shadow tool-loop or budget
// with no enforced counter would deny exactly the steps the same control enforced denies (its would-be
// counters count what it would have let through), and a shadow control reading an enforced control's
// counter reads it before the step.
func TestShadowSessionReadsStateBeforeTheStep(t *testing.T) {
	toolLoop := func(id int64, name string, gt int) Control {
		return sessCtl(t, id, name, fmt.Sprintf(`{"enabled": true, "scope": {"stages": ["pre"]},
		  "condition": {"selector": {"path": "session.count", "window": "1h"}, "evaluator": {"name": "threshold", "config": {"gt": %d}}},
		  "action": {"decision": "deny"}}`, gt))
	}
	budget := func(id int64, name, root string) Control {
		return sessCtl(t, id, name, `{"enabled": true, "scope": {"stages": ["pre"]},
		  "condition": {"selector": {"path": "`+root+`.sum.context.cost"}, "evaluator": {"name": "threshold", "config": {"gt": 10}}},
		  "action": {"decision": "deny"}}`)
	}
	logAll := sessCtl(t, 9, "log-all", `{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "session.id"}, "evaluator": {"name": "regex", "config": {"pattern": "."}}},
	  "action": {"decision": "log"}}`)
	cases := []struct {
		name     string
		controls []Control
		costs    []float64
		enforced []Decision // the enforced decision of each step
		shadow   []Decision // what the shadow controls would have decided
	}{
		{"shadow tool-loop alone", []Control{shadowOf(toolLoop(1, "loop", 3))}, make([]float64, 5),
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow},
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny}},
		{"enforced tool-loop", []Control{toolLoop(1, "loop", 3), logAll}, make([]float64, 5),
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny}, nil},
		{"shadow tool-loop beside an enforced one of another bound (one counter)", []Control{toolLoop(1, "loop5", 5), shadowOf(toolLoop(2, "loop3", 3))},
			make([]float64, 7),
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny},
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny, DecisionDeny, DecisionDeny}},
		{"shadow budget alone: a denied step does not spend", []Control{shadowOf(budget(1, "budget", "session")), logAll},
			[]float64{4, 4, 4, 1, 5},
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow},
			[]Decision{DecisionAllow, DecisionAllow, DecisionDeny, DecisionAllow, DecisionDeny}},
		{"enforced budget", []Control{budget(1, "budget", "session"), logAll}, []float64{4, 4, 4, 1, 5},
			[]Decision{DecisionAllow, DecisionAllow, DecisionDeny, DecisionAllow, DecisionDeny}, nil},
		{"shadow agent budget alone", []Control{shadowOf(budget(1, "budget", "agent"))}, []float64{4, 4, 4, 1, 5},
			[]Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow},
			[]Decision{DecisionAllow, DecisionAllow, DecisionDeny, DecisionAllow, DecisionDeny}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := sessEngine(t, tc.controls, WithAgentName("bot"))
			for i, cost := range tc.costs {
				res, sh, err := e.EvaluateWithShadow(context.Background(), tool("call", "s1", map[string]any{"cost": cost}), StagePre)
				if err != nil {
					t.Fatal(err)
				}
				if res.Decision != tc.enforced[i] {
					t.Fatalf("step %d: enforced %s, want %s (%s)", i+1, res.Decision, tc.enforced[i], res.Reason)
				}
				if res.Session == nil || res.Session.Step != int64(i+1) {
					t.Fatalf("step %d: enforced session %+v", i+1, res.Session)
				}
				if tc.shadow == nil {
					continue
				}
				if sh == nil || sh.Decision != tc.shadow[i] {
					t.Fatalf("step %d: shadow %+v, want %s", i+1, sh, tc.shadow[i])
				}
				if sh.Session == nil || sh.Session.Step != int64(i+1) {
					t.Fatalf("step %d: shadow session %+v, want step %d", i+1, sh.Session, i+1)
				}
			}
		})
	}
}
