package sessionredis

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// agentLimit is an agent-wide rate limit no step of the benchmark reaches: what the check of the
// agent's counters costs when it holds (issue 32, item 7).
const agentLimit = `{
  "enabled": true,
  "scope": {"stages": ["pre"]},
  "condition": {"selector": {"path": "agent.count", "window": "1h"}, "evaluator": {"name": "threshold", "config": {"gt": 1000000000}}},
  "action": {"decision": "deny"}
}`

// BenchmarkEvaluateRedisAgentLimit measures an evaluation of an agent with an agent-wide limit (and the
// rule of two) on the Redis store, with the round trips per evaluation:
//   - replicas=1/sequential: one replica, one session;
//   - replicas=2/alternating: one session whose steps alternate between two replicas without waiting
//     for the published state (a step may race the message: then two round trips);
//   - replicas=2/parallel: GOMAXPROCS×4 goroutines, a session each, spread over two replicas, all adding
//     to the agent's counter at once.
func BenchmarkEvaluateRedisAgentLimit(b *testing.B) {
	for _, tc := range []struct {
		name     string
		replicas int
		parallel bool
	}{{"replicas=1/sequential", 1, false}, {"replicas=2/alternating", 2, false}, {"replicas=2/parallel", 2, true}} {
		b.Run(tc.name, func(b *testing.B) {
			first, prefix := openTest(b)
			var trips atomic.Int64
			engines := make([]*guard.Engine, tc.replicas)
			for i := range engines {
				s := first
				if i > 0 {
					s = replica(b, prefix)
				}
				s.rdb.AddHook(countHook{&trips})
				engines[i] = engine(b, s, agentLimit, ruleOfTwo)
			}
			ctx := context.Background()
			for _, e := range engines { // the script loaded on every client
				if _, err := e.Evaluate(ctx, step("read_file", "warm", 0), guard.StagePre); err != nil {
					b.Fatal(err)
				}
			}
			trips.Store(0)
			b.ReportAllocs()
			var n atomic.Int64
			if tc.parallel {
				var g atomic.Int64
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					id := g.Add(1)
					st := step("read_file", fmt.Sprintf("bench-%d", id), 0)
					e := engines[id%int64(len(engines))]
					for pb.Next() {
						if _, err := e.Evaluate(ctx, st, guard.StagePre); err != nil {
							b.Error(err)
							return
						}
						n.Add(1)
					}
				})
			} else {
				st := step("read_file", "bench", 0)
				for b.Loop() {
					if _, err := engines[n.Load()%int64(len(engines))].Evaluate(ctx, st, guard.StagePre); err != nil {
						b.Fatal(err)
					}
					n.Add(1)
				}
			}
			b.ReportMetric(float64(trips.Load())/float64(n.Load()), "roundtrips/op")
		})
	}
}
