package guard_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

// BenchmarkCheckSession measures what session state costs Check on an agent with 10 controls (those of
// BenchmarkCheck): none (no control reads session state: the case must cost what BenchmarkCheck's
// 10 controls cost, with the same allocations), and one more control reading a session counter and
// labels from the in-memory store, on a session that keeps growing (its state at its caps).
func BenchmarkCheckSession(b *testing.B) {
	sessionCtl := guard.Control{ID: 1000, Name: "tool-loop", Data: guard.ControlData{
		Enabled: true,
		// The scope of benchControls' controls: the case measures what reading session state costs,
		// not what a control of another scope costs the candidate index (a merge of two lists).
		Scope: guard.Scope{Stages: []guard.Stage{guard.StagePre}, StepTypes: []string{"llm"}},
		Condition: guard.Condition{And: []guard.Condition{
			{Selector: &guard.Selector{Path: "session.count", Window: "60s"}, Evaluator: &guard.EvaluatorSpec{Name: "threshold", Config: map[string]any{"gt": 1e12}}},
			{Selector: &guard.Selector{Path: "session.labels"}, Evaluator: &guard.EvaluatorSpec{Name: "list", Config: map[string]any{"values": []any{"a", "b"}, "logic": "all"}}},
		}},
		Action: guard.Action{Decision: guard.DecisionDeny},
	}}
	// An agent-wide limit no step reaches (issue 32): what checking the agent's counter at commit costs.
	agentCtl := guard.Control{ID: 1001, Name: "agent-rate", Data: guard.ControlData{
		Enabled: true,
		Scope:   guard.Scope{Stages: []guard.Stage{guard.StagePre}, StepTypes: []string{"llm"}},
		Condition: guard.Condition{Selector: &guard.Selector{Path: "agent.count", Window: "60s"},
			Evaluator: &guard.EvaluatorSpec{Name: "threshold", Config: map[string]any{"gt": 1e12}}},
		Action: guard.Action{Decision: guard.DecisionDeny},
	}}
	for _, tc := range []struct {
		name    string
		session bool
		extra   []guard.Control
	}{{"controls=10/no_session_controls", false, nil}, {"controls=10/one_session_control", true, []guard.Control{sessionCtl}},
		{"controls=10/agent_limit", true, []guard.Control{agentCtl}}} {
		b.Run(tc.name, func(b *testing.B) {
			controls := append(benchControls(10, false), tc.extra...)
			e := guard.New()
			if err := e.Update(controls); err != nil {
				b.Fatal(err)
			}
			step := &guard.Step{Type: "llm", Name: "chat", Input: benchNoMatch, Context: map[string]any{"session_id": "s-1"}}
			ctx := context.Background()
			for i := 0; i < 64; i++ { // the session at its caps
				if err := e.Check(ctx, step, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			}
			if e.UsesSessions() != tc.session {
				b.Fatal(fmt.Sprint("UsesSessions ", e.UsesSessions()))
			}
			loop(b, func() {
				if err := e.Check(ctx, step, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkIdleSessions measures the heap an idle session holds in the in-memory store: n sessions of
// one agent, each after one step of a rule-of-two agent (one label, one step record). It reports bytes
// per session just after their steps, then, with the store's clock moved past the sweep interval (the
// sessions idle, within the TTL), per idle session (the figure of docs/control-language.md's memory
// bound); then moves the clock past the TTL and commits to new sessions until the idle ones are swept,
// and reports the heap left per session (expiry by TTL, with no sleep). b.N is not used.
func BenchmarkIdleSessions(b *testing.B) {
	for _, c := range []struct{ sessions, steps int }{{100_000, 1}, {100_000, 3}, {1_000_000, 3}} {
		b.Run(fmt.Sprintf("sessions=%d/steps=%d", c.sessions, c.steps), func(b *testing.B) { idleSessions(b, c.sessions, c.steps) })
	}
}

// idleSessions runs steps steps in each of n sessions (fetch_page, read_file, then fetch_page again:
// two labels, three step records; from the second step on the store holds two states per session).
func idleSessions(b *testing.B, n, steps int) {
	d, err := guard.ParseControlData([]byte(`{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "session.labels"}, "evaluator": {"name": "list", "config": {"values": ["untrusted", "sensitive", "egress"], "logic": "all"}}},
	  "action": {"decision": "deny", "session": {"label_steps": [{"label": "untrusted", "steps": ["fetch_page"]}, {"label": "sensitive", "steps": ["read_file"]}]}}}`))
	if err != nil {
		b.Fatal(err)
	}
	const ttl = time.Hour
	store := guard.NewMemorySessionStore(ttl, 2*n)
	e := guard.New(guard.WithSessionStore(store), guard.WithAgentName("agent"))
	if err := e.Update([]guard.Control{{ID: 1, Name: "rule-of-two", Data: d}}); err != nil {
		b.Fatal(err)
	}
	var before, after, swept runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx := context.Background()
	names := []string{"fetch_page", "read_file", "fetch_page"}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("session-%08d", i)
		for j := range steps {
			step := &guard.Step{Type: "tool", Name: names[j%len(names)], Context: map[string]any{"session_id": id}}
			if err := e.Check(ctx, step, guard.StagePre); err != nil {
				b.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if store.Len() != n {
		b.Fatalf("%d sessions stored", store.Len())
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/session")
	// Idle for more than the sweep interval (within the TTL): commits to 2,000 new sessions sweep every
	// shard (64), which drops the idle sessions' spare states.
	commitNew := func(name string, at time.Time) {
		c := &guard.SessionCommit{Agent: "agent", Session: name, Write: true, Now: at,
			Record: &guard.StepRecord{Seq: 1, Type: "tool", Name: "x", Decision: guard.DecisionAllow, At: at.UnixMilli()}}
		if ok, _, err := store.Commit(ctx, c); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
	idle := time.Now().Add(2 * time.Minute)
	for i := range 2000 {
		commitNew(fmt.Sprint("idle-", i), idle)
	}
	var idleMem runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&idleMem)
	if store.Len() != n+2000 {
		b.Fatalf("%d sessions stored while idle", store.Len())
	}
	b.ReportMetric(float64(int64(idleMem.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heap-B/idle-session")
	// Past the TTL (and the sweep interval), commits to new sessions sweep the shards they land in.
	later := time.Now().Add(ttl + 4*time.Minute)
	for i := 0; store.Len() > n/100; i++ {
		if i == n {
			b.Fatalf("%d sessions left after %d commits past the TTL", store.Len(), i)
		}
		commitNew(fmt.Sprint("new-", i), later)
	}
	runtime.GC()
	runtime.ReadMemStats(&swept)
	b.ReportMetric(float64(int64(swept.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heap-B/session-after-ttl")
	runtime.KeepAlive(store)
}

// BenchmarkCheckSessionParallel measures Check with session state from parallel goroutines
// (b.RunParallel): over 1024 sessions, where no two steps wait for one another unless they are of the
// same session (each session has its own turn), and over one session, whose steps take turns.
func BenchmarkCheckSessionParallel(b *testing.B) {
	d, err := guard.ParseControlData([]byte(`{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"and": [
	    {"selector": {"path": "session.count", "window": "60s"}, "evaluator": {"name": "threshold", "config": {"gt": 1e12}}},
	    {"selector": {"path": "session.labels"}, "evaluator": {"name": "list", "config": {"values": ["untrusted", "sensitive", "egress"], "logic": "all"}}}]},
	  "action": {"decision": "deny", "session": {"label_steps": [{"label": "untrusted", "steps": ["fetch_page"]}]}}}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, sessions := range []int{1024, 1} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			e := guard.New()
			if err := e.Update([]guard.Control{{ID: 1, Name: "rule-of-two", Data: d}}); err != nil {
				b.Fatal(err)
			}
			steps := make([]*guard.Step, sessions)
			for i := range steps {
				steps[i] = &guard.Step{Type: "tool", Name: "fetch_page", Context: map[string]any{"session_id": fmt.Sprintf("s-%04d", i)}}
			}
			var next atomic.Int64
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 7919 // goroutines start apart
				for pb.Next() {
					i++
					if err := e.Check(ctx, steps[i%len(steps)], guard.StagePre); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
