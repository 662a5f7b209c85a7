package sessionredis

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// shadowToolLoop is a tool-loop in shadow: more than 3 calls of one tool in a session would be denied.
const shadowToolLoop = `{
  "enabled": true, "mode": "shadow",
  "scope": {"stages": ["pre"]},
  "condition": {"selector": {"path": "session.count", "window": "1h"}, "evaluator": {"name": "threshold", "config": {"gt": 3}}},
  "action": {"decision": "deny"}
}`

// TestShadowWouldBeCountersAcrossReplicas (issue 32, item 6): an agent whose only session control is a
// shadow tool-loop, its steps alternating between two replicas: the shadow control numbers the steps
// 1 to 5 and would deny the 4th and 5th (its would-be counter, kept in Redis with the step's commit),
// one round trip per step once the previous step's state reached the replica.
func TestShadowWouldBeCountersAcrossReplicas(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	var trips atomic.Int64
	a.rdb.AddHook(countHook{&trips})
	b.rdb.AddHook(countHook{&trips})
	ea, eb := engine(t, a, shadowToolLoop), engine(t, b, shadowToolLoop)
	ctx := context.Background()
	for _, e := range []*guard.Engine{ea, eb} { // loads the script on both clients
		if _, _, err := e.EvaluateWithShadow(ctx, step("warm", "warm", 0), guard.StagePre); err != nil {
			t.Fatal(err)
		}
	}
	var would []string
	for i := range 5 {
		on, e := a, ea
		if i%2 == 1 {
			on, e = b, eb
		}
		if i > 0 {
			waitVersion(t, on, "s", int64(i))
		}
		trips.Store(0)
		res, sh, err := e.EvaluateWithShadow(ctx, step("search", "s", 0), guard.StagePre)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != guard.DecisionAllow || sh == nil || sh.Session == nil || sh.Session.Step != int64(i+1) || res.Session.Step != int64(i+1) {
			t.Fatalf("step %d: %+v, shadow %+v", i+1, res, sh)
		}
		if n := trips.Load(); n != 1 {
			t.Fatalf("step %d: %d round trips, want 1", i+1, n)
		}
		would = append(would, string(sh.Decision))
	}
	if got := strings.Join(would, " "); got != "allow allow allow deny deny" {
		t.Fatalf("shadow tool-loop would decide %s", got)
	}
	st, _, err := b.ReadSession(ctx, "agent-1", "s")
	if err != nil || st == nil || len(st.Counters) != 1 || !guard.IsShadowCounter(st.Counters[0].Key) || st.Counters[0].Value != 3 {
		t.Fatalf("stored %+v %v", st, err)
	}
}
