package sessionredis

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	guard "github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator"
)

// testRedisURL is the Redis of the tests: GUARD_TEST_REDIS_URL, else the local one .ci/redis.sh starts.
func testRedisURL() string {
	if u := os.Getenv("GUARD_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// openTest opens a store on the test Redis under a prefix no other run uses, and deletes its keys at
// the end. Without a Redis it skips, except under CI=true where it fails.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	prefix := fmt.Sprintf("guardtest:%d:%d:", os.Getpid(), time.Now().UnixNano())
	s, err := Open(context.Background(), testRedisURL(), Options{Prefix: prefix})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis is required under CI (.ci/redis.sh): %v", err)
		}
		t.Skipf("no Redis: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		iter := s.rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			s.rdb.Del(ctx, iter.Val())
		}
		_ = s.Close()
	})
	return s, prefix
}

// replica opens a second store (another replica: its own client and cache) on the same prefix.
func replica(t testing.TB, prefix string) *Store {
	t.Helper()
	s, err := Open(context.Background(), testRedisURL(), Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

const ruleOfTwo = `{
  "enabled": true,
  "scope": {"stages": ["pre"]},
  "condition": {"selector": {"path": "session.labels"},
                "evaluator": {"name": "list", "config": {"values": ["untrusted", "sensitive", "egress"], "logic": "all"}}},
  "action": {"decision": "deny", "session": {"label_steps": [
    {"label": "untrusted", "steps": ["fetch_page"]},
    {"label": "sensitive", "steps": ["read_file"]},
    {"label": "egress", "steps": ["http_post"]}]}}
}`

const agentBudget = `{
  "enabled": true,
  "scope": {"stages": ["pre"]},
  "condition": {"selector": {"path": "agent.sum.context.cost", "window": "1h"}, "evaluator": {"name": "threshold", "config": {"gt": 100}}},
  "action": {"decision": "deny"}
}`

func engine(t testing.TB, st guard.SessionStore, raws ...string) *guard.Engine {
	t.Helper()
	var ctls []guard.Control
	for i, raw := range raws {
		d, err := guard.ParseControlData([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		ctls = append(ctls, guard.Control{ID: int64(i + 1), Name: fmt.Sprintf("c%d", i+1), Data: d})
	}
	e := guard.New(guard.WithAgentName("agent-1"), guard.WithSessionStore(st))
	if err := e.Update(ctls); err != nil {
		t.Fatal(err)
	}
	return e
}

func step(name, session string, cost float64) *guard.Step {
	return &guard.Step{Type: "tool", Name: name, Context: map[string]any{"session_id": session, "cost": cost}}
}

func decide(t *testing.T, e *guard.Engine, s *guard.Step) *guard.Result {
	t.Helper()
	res, err := e.Evaluate(context.Background(), s, guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestReplicasShareSessions(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	ea, eb := engine(t, a, ruleOfTwo), engine(t, b, ruleOfTwo)
	for i, tc := range []struct {
		e    *guard.Engine
		name string
		want guard.Decision
	}{{ea, "fetch_page", guard.DecisionAllow}, {eb, "read_file", guard.DecisionAllow}, {ea, "http_post", guard.DecisionDeny}} {
		res := decide(t, tc.e, step(tc.name, "s1", 0))
		if res.Decision != tc.want || res.Session.Step != int64(i+1) {
			t.Fatalf("step %d %s: %s (%s), session %+v", i+1, tc.name, res.Decision, res.Reason, res.Session)
		}
		if i == 2 && (!strings.Contains(res.Reason, "step 1 (fetch_page) added label untrusted") ||
			!strings.Contains(res.Reason, "step 2 (read_file) added label sensitive")) {
			t.Fatalf("reason %q", res.Reason)
		}
	}
	for i, name := range []string{"fetch_page", "read_file", "http_post"} {
		e := []*guard.Engine{ea, eb, ea}[i]
		if res := decide(t, e, step(name, "alone-"+name, 0)); res.Decision != guard.DecisionAllow {
			t.Fatalf("%s alone: %s", name, res.Reason)
		}
	}
	// Another agent on the same Redis never sees agent-1's sessions.
	other := guard.New(guard.WithAgentName("agent-2"), guard.WithSessionStore(b))
	d, _ := guard.ParseControlData([]byte(ruleOfTwo))
	if err := other.Update([]guard.Control{{ID: 1, Name: "r", Data: d}}); err != nil {
		t.Fatal(err)
	}
	if res := decide(t, other, step("http_post", "s1", 0)); res.Decision != guard.DecisionAllow {
		t.Fatalf("agent-2 saw agent-1's session: %s", res.Reason)
	}
}

func TestAgentCountersAcrossReplicas(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	ea, eb := engine(t, a, agentBudget), engine(t, b, agentBudget)
	decide(t, ea, step("pay", "x1", 60))
	decide(t, eb, step("pay", "x2", 30)) // b's reply carries a's 60: 90 in all
	if res := decide(t, eb, step("pay", "x3", 20)); res.Decision != guard.DecisionDeny {
		t.Fatalf("110 > 100 allowed: %+v", res.Session)
	}
	n, err := a.rdb.HGetAll(context.Background(), a.agentKey("agent-1")).Result()
	delete(n, agentVersionField)
	if err != nil || len(n) != 1 {
		t.Fatalf("agent hash %v %v", n, err)
	}
	for _, v := range n {
		if !strings.HasSuffix(v, "|90") {
			t.Fatalf("stored sum %q, want 90 (the denied 20 not added)", v)
		}
	}
}

// TestOneRoundTrip counts the commands an evaluation sends once the replica's cache is warm: one.
func TestOneRoundTrip(t *testing.T) {
	s, _ := openTest(t)
	var cmds atomic.Int64
	s.rdb.AddHook(countHook{&cmds})
	e := engine(t, s, ruleOfTwo)
	decide(t, e, step("fetch_page", "rt", 0)) // loads the script
	cmds.Store(0)
	for i := 0; i < 5; i++ {
		decide(t, e, step("read_file", "rt", 0))
	}
	if n := cmds.Load(); n != 5 {
		t.Fatalf("%d commands for 5 evaluations, want 5", n)
	}
}

type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1) // a pipeline is one round trip
		return next(ctx, cmds)
	}
}

// TestRedisDown: a store whose Redis is gone makes the session controls fail by their on_error (deny by
// default), and the engine counts it.
func TestRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	s := New(redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1}), Options{Prefix: "down:"})
	defer s.Close()
	e := engine(t, s, ruleOfTwo)
	res := decide(t, e, step("fetch_page", "d", 0))
	if res.Decision != guard.DecisionDeny || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Result.Error, "session store unavailable") {
		t.Fatalf("%s %+v", res.Decision, res.Errors)
	}
	if e.SessionStoreErrors() != 1 {
		t.Fatalf("errors %d", e.SessionStoreErrors())
	}
	if _, err := Open(context.Background(), "redis://"+addr, Options{}); err == nil {
		t.Fatal("Open succeeded without a Redis")
	}
}

// BenchmarkEvaluateRedis evaluates a step of a session whose rule-of-two control keeps its state in
// Redis, and reports the round trips to Redis per evaluation (roundtrips/op, counted by a client hook).
// The replicas take the session's steps in turn (no load-balancer affinity):
//   - replicas=1: one replica, its cache always current: one round trip;
//   - replicas=2/sequential: an agent's steps one after the other, the next sent once the previous one's
//     published state reached the other replica (the wait, the agent's own time, is not timed): one;
//   - replicas=2/racing: the next step sent on the other replica as soon as the previous one answered,
//     racing the message: one, or two when the step wins the race;
//   - replicas=2/unsubscribed: the replicas' subscriptions stopped, every cache stale: two (the conflict
//     answer carries the state), the cost of a step that finds its replica's cache stale.
func BenchmarkEvaluateRedis(b *testing.B) {
	for _, tc := range []struct {
		name        string
		replicas    int
		wait, unsub bool
	}{{"replicas=1", 1, false, false}, {"replicas=2/sequential", 2, true, false},
		{"replicas=2/racing", 2, false, false}, {"replicas=2/unsubscribed", 2, false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			first, prefix := openTest(b)
			var trips atomic.Int64
			engines := make([]*guard.Engine, tc.replicas)
			stores := make([]*Store, tc.replicas)
			for i := range engines {
				s := first
				if i > 0 {
					s = replica(b, prefix)
				}
				if tc.unsub {
					s.sub.stop()
				}
				s.rdb.AddHook(countHook{&trips})
				engines[i], stores[i] = engine(b, s, ruleOfTwo), s
			}
			st := step("read_file", "bench", 0)
			ctx := context.Background()
			for _, e := range engines { // the script loaded on every client
				if _, err := e.Evaluate(ctx, st, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			}
			trips.Store(0)
			b.ReportAllocs()
			n := 0
			k := cacheKey("agent-1", "bench")
			for b.Loop() {
				if _, err := engines[n%tc.replicas].Evaluate(ctx, st, guard.StagePre); err != nil {
					b.Fatal(err)
				}
				n++
				if tc.wait {
					b.StopTimer()
					v := stores[(n-1)%tc.replicas].cachedVersion(k) // what the step committed
					for next := stores[n%tc.replicas]; next.cachedVersion(k) < v; {
						runtime.Gosched()
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(trips.Load())/float64(n), "roundtrips/op")
		})
	}
}

// TestReadSessionPastTheCache: a replica that never served a session reads its stored state (labels with
// the step that added each, step records, agent counters), where its Load (the cache) knows nothing.
func TestReadSessionPastTheCache(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	ea := engine(t, a, ruleOfTwo, agentBudget)
	for _, name := range []string{"fetch_page", "read_file"} {
		if res := decide(t, ea, step(name, "s1", 10)); res.Decision != guard.DecisionAllow {
			t.Fatalf("%s: %s", name, res.Reason)
		}
	}
	b.sub.stop() // b's cache no longer hears a's states: it knows nothing of s1
	b.forgetAll()
	if cached, _, _ := b.Load(context.Background(), "agent-1", "s1", false, time.Now()); cached != nil {
		t.Fatalf("replica b's cache knows s1: %+v", cached)
	}
	sess, ag, err := b.ReadSession(context.Background(), "agent-1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess == nil || sess.Seq != 2 || len(sess.Labels) != 2 || sess.Labels[0].Label != "untrusted" || sess.Labels[0].Step != 1 ||
		sess.Labels[1].Label != "sensitive" || sess.Labels[1].StepName != "read_file" || len(sess.Steps) != 2 || sess.Steps[1].Name != "read_file" {
		t.Fatalf("session %+v", sess)
	}
	if ag == nil || len(ag.Counters) != 1 || ag.Counters[0].Value != 20 {
		t.Fatalf("agent %+v", ag)
	}
	for _, tc := range []struct{ agent, session string }{{"agent-1", "nope"}, {"agent-2", "s1"}} {
		sess, _, err := b.ReadSession(context.Background(), tc.agent, tc.session)
		if err != nil || sess != nil {
			t.Fatalf("%s/%s: %+v %v", tc.agent, tc.session, sess, err)
		}
	}
}
