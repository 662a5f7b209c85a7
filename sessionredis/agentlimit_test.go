package sessionredis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestAgentLimitExactUnderConcurrency (issue 32, item 7): an agent-wide limit of N admits exactly N
// steps when many evaluators on several replicas (stores of their own, each with its cache) evaluate
// steps of distinct sessions at once. Before the commit script checked the counters it adds to, each
// replica admitted what its stale cache allowed.
func TestAgentLimitExactUnderConcurrency(t *testing.T) {
	const replicas, perReplica = 4, 20
	for _, tc := range []struct {
		name    string
		control string
		cost    float64
		limit   int
	}{
		{"agent.count", `{"enabled": true, "scope": {"stages": ["pre"]},
		  "condition": {"selector": {"path": "agent.count", "window": "1h"}, "evaluator": {"name": "threshold", "config": {"gt": 10}}},
		  "action": {"decision": "deny"}}`, 0, 10},
		{"agent.count.label", `{"enabled": true, "scope": {"stages": ["pre"]},
		  "condition": {"selector": {"path": "agent.count.egress"}, "evaluator": {"name": "threshold", "config": {"gte": 8}}},
		  "action": {"decision": "deny", "session": {"label_steps": [{"label": "egress", "steps": ["call"]}]}}}`, 0, 7},
		{"agent.sum", agentBudget, 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, prefix := openTest(t)
			engines := make([]*guard.Engine, replicas)
			for i := range engines {
				s := first
				if i > 0 {
					s = replica(t, prefix)
				}
				engines[i] = engine(t, s, tc.control)
			}
			var admitted, denied atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, replicas*perReplica)
			for r, e := range engines {
				for j := range perReplica {
					wg.Go(func() {
						<-start
						res, err := e.Evaluate(context.Background(), step("call", fmt.Sprintf("s-%d-%d", r, j), tc.cost), guard.StagePre)
						switch {
						case err != nil:
							errs <- err
						case res.Decision == guard.DecisionAllow:
							admitted.Add(1)
						case res.Decision == guard.DecisionDeny && len(res.Errors) == 0:
							denied.Add(1)
						default:
							errs <- fmt.Errorf("decision %s: %s", res.Decision, res.Reason)
						}
					})
				}
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if got := admitted.Load(); got != int64(tc.limit) || denied.Load() != replicas*perReplica-int64(tc.limit) {
				t.Fatalf("admitted %d, denied %d of %d, want exactly %d admitted", got, denied.Load(), replicas*perReplica, tc.limit)
			}
			h, err := first.rdb.HGetAll(context.Background(), first.agentKey("agent-1")).Result()
			if err != nil {
				t.Fatal(err)
			}
			delete(h, agentVersionField)
			want := fmt.Sprintf("|%g", float64(tc.limit)*max(tc.cost, 1))
			for k, v := range h {
				if !strings.HasSuffix(v, want) {
					t.Fatalf("stored counter %s = %s, want ...%s", k, v, want)
				}
			}
		})
	}
}
