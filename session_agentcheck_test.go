package guard

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

// raceStore makes every evaluation of the first round read the store before any of them commits: the
// race of parallel steps of distinct sessions, made certain.
type raceStore struct {
	*MemorySessionStore
	first  atomic.Int64
	round  sync.WaitGroup
	commit atomic.Int64 // Commit calls
}

func (s *raceStore) Commit(ctx context.Context, c *SessionCommit) (bool, *SessionState, error) {
	s.commit.Add(1)
	if s.first.Add(-1) >= 0 {
		s.round.Done()
		s.round.Wait()
	}
	return s.MemorySessionStore.Commit(ctx, c)
}

// TestAgentLimitExactWhenStepsRace (issue 32, item 7): steps of 30 sessions that all read the agent's
// counters before any commits are admitted up to the limit and no further, on the in-memory store
// and through the store interface (what the Redis store does in its script); steps far from the limit
// commit without conflicts.
func TestAgentLimitExactWhenStepsRace(t *testing.T) {
	const steps, limit = 30, 5
	limitCtl := `{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "agent.count.call", "window": "1m"}, "evaluator": {"name": "threshold", "config": {"gt": 5}}},
	  "action": {"decision": "deny"}}`
	st := &raceStore{MemorySessionStore: NewMemorySessionStore(0, 0)}
	st.first.Store(steps)
	st.round.Add(steps)
	e := sessEngine(t, []Control{sessCtl(t, 1, "rate", limitCtl)}, WithAgentName("bot"), WithSessionStore(st))
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range steps {
		wg.Go(func() {
			res, err := e.Evaluate(context.Background(), tool("call", fmt.Sprintf("s%d", i), nil), StagePre)
			if err != nil || len(res.Errors) > 0 {
				t.Errorf("step %d: %v %+v", i, err, res)
				return
			}
			if res.Decision == DecisionAllow {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != limit {
		t.Fatalf("admitted %d of %d racing steps, want %d", n, steps, limit)
	}
	_, ag, _ := st.Load(context.Background(), "bot", "", true, e.cfg.sess.now())
	if ag == nil || len(ag.Counters) != 1 || ag.Counters[0].Value != limit {
		t.Fatalf("agent counters %+v", ag)
	}
}

// TestAgentCheckRange pins the ranges a commit checks: the values within which every threshold reading
// the counter answers as for the value read.
func TestAgentCheckRange(t *testing.T) {
	inf := math.Inf(1)
	after := func(v float64) float64 { return math.Nextafter(v, inf) }
	before := func(v float64) float64 { return math.Nextafter(v, -inf) }
	for _, tc := range []struct {
		name   string
		cuts   []counterCut
		exact  bool
		v      float64
		lo, hi float64
	}{
		{"gt 5, below", []counterCut{{5, true}}, false, 3, -inf, 5},
		{"gt 5, at", []counterCut{{5, true}}, false, 5, -inf, 5},
		{"gt 5, above", []counterCut{{5, true}}, false, 6, after(5), inf},
		{"gte 5, below", []counterCut{{5, false}}, false, 4, -inf, before(5)},
		{"gte 5, at", []counterCut{{5, false}}, false, 5, 5, inf},
		{"eq 5", []counterCut{{5, false}, {5, true}}, false, 5, 5, 5},
		{"between two", []counterCut{{5, true}, {10, false}}, false, 7, after(5), before(10)},
		{"exact", nil, true, 7, 7, 7},
	} {
		a := agentCheck{cuts: tc.cuts, exact: tc.exact}
		if lo, hi := a.rangeOf(tc.v); lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: [%v, %v], want [%v, %v]", tc.name, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestAgentLimitExactInMemory: the engine's own in-memory store (its direct path, not the interface),
// 200 concurrent steps of distinct sessions and of none against an agent-wide limit of 5: exactly 5.
func TestAgentLimitExactInMemory(t *testing.T) {
	limitCtl := `{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "agent.count.call"}, "evaluator": {"name": "threshold", "config": {"gte": 6}}},
	  "action": {"decision": "deny"}}`
	e := sessEngine(t, []Control{sessCtl(t, 1, "rate", limitCtl)}, WithAgentName("bot"))
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			session := fmt.Sprintf("s%d", i)
			if i%3 == 0 {
				session = "" // a step without a session: only the agent's counter to commit
			}
			if e.Check(context.Background(), tool("call", session, nil), StagePre) == nil {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 5 {
		t.Fatalf("admitted %d of 200 concurrent steps, want 5", n)
	}
}
