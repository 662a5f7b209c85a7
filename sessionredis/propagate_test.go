package sessionredis

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	guard "github.com/guardrail-control/guard"
)

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitVersion waits until s's cache holds version v (or later) of agent-1's session.
func waitVersion(t testing.TB, s *Store, session string, v int64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("version %d of %s in the cache", v, session), func() bool {
		return s.cachedVersion(cacheKey("agent-1", session)) >= v
	})
}

// TestNextStepOnAnyReplicaOneRoundTrip: an agent's steps come one after the other, each on the other
// replica (no load-balancer affinity). Once a step's published state reached the other replica, its next
// step costs one round trip there, and decides on every label the session gathered.
func TestNextStepOnAnyReplicaOneRoundTrip(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	var tripsA, tripsB atomic.Int64
	a.rdb.AddHook(countHook{&tripsA})
	b.rdb.AddHook(countHook{&tripsB})
	ea, eb := engine(t, a, ruleOfTwo), engine(t, b, ruleOfTwo)
	decide(t, ea, step("warm", "warm", 0)) // loads the script into Redis (EVALSHA, then EVAL)
	decide(t, eb, step("warm", "warm2", 0))
	for i, tc := range []struct {
		on    *Store
		e     *guard.Engine
		trips *atomic.Int64
		name  string
		want  guard.Decision
	}{
		{a, ea, &tripsA, "fetch_page", guard.DecisionAllow},
		{b, eb, &tripsB, "read_file", guard.DecisionAllow},
		{a, ea, &tripsA, "list_dir", guard.DecisionAllow},
		{b, eb, &tripsB, "http_post", guard.DecisionDeny},
	} {
		if i > 0 {
			waitVersion(t, tc.on, "s", int64(i)) // the previous step's state, published by the other replica
		}
		tc.trips.Store(0)
		res := decide(t, tc.e, step(tc.name, "s", 0))
		if res.Decision != tc.want || res.Session.Step != int64(i+1) {
			t.Fatalf("step %d %s: %s (%s), session %+v", i+1, tc.name, res.Decision, res.Reason, res.Session)
		}
		if n := tc.trips.Load(); n != 1 {
			t.Fatalf("step %d %s: %d round trips, want 1", i+1, tc.name, n)
		}
	}
}

// TestAgentCountersPublished: the agent-wide counters a replica adds reach the other replica's cache, so
// that its first step already counts them.
func TestAgentCountersPublished(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	ea, eb := engine(t, a, agentBudget), engine(t, b, agentBudget)
	decide(t, ea, step("pay", "x1", 60))
	waitFor(t, "agent counters on b", func() bool {
		_, ag, _ := b.Load(context.Background(), "agent-1", "", true, time.Now())
		return ag != nil && len(ag.Counters) == 1 && ag.Counters[0].Value == 60
	})
	if res := decide(t, eb, step("pay", "x2", 50)); res.Decision != guard.DecisionDeny {
		t.Fatalf("60 on a + 50 on b allowed: %+v", res.Session)
	}
	// b's own reply (still 60: the denied 50 is not added) does not take the cache back past a later
	// published state.
	decide(t, ea, step("pay", "x3", 10))
	waitFor(t, "70 on b", func() bool {
		_, ag, _ := b.Load(context.Background(), "agent-1", "", true, time.Now())
		return ag != nil && ag.Counters[0].Value == 70
	})
}

// TestStaleCacheCostsAConflict: a replica whose cache is stale (the step raced the message) pays a second
// round trip and decides on the stored state.
func TestStaleCacheCostsAConflict(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	var tripsB atomic.Int64
	b.rdb.AddHook(countHook{&tripsB})
	ea, eb := engine(t, a, ruleOfTwo), engine(t, b, ruleOfTwo)
	decide(t, eb, step("warm", "warm", 0))
	decide(t, ea, step("fetch_page", "s", 0))
	waitVersion(t, b, "s", 1)
	stale, _, _ := b.Load(context.Background(), "agent-1", "s", false, time.Now())
	decide(t, ea, step("read_file", "s", 0))
	waitVersion(t, b, "s", 2)
	b.remember("agent-1", "s", stale, false) // as if a's second message had not arrived yet
	tripsB.Store(0)
	res := decide(t, eb, step("http_post", "s", 0))
	if res.Decision != guard.DecisionDeny || res.Session.Step != 3 {
		t.Fatalf("%s (%s) %+v", res.Decision, res.Reason, res.Session)
	}
	if n := tripsB.Load(); n != 2 {
		t.Fatalf("%d round trips on a stale cache, want 2", n)
	}
}

// TestReplicasRace: two replicas step one session at once; conflicts resolve (a step that loses every one
// of the engine's attempts fails closed, by its control's on_error), and the stored state counts every
// step that was allowed once.
func TestReplicasRace(t *testing.T) {
	a, prefix := openTest(t)
	b := replica(t, prefix)
	var trips atomic.Int64
	a.rdb.AddHook(countHook{&trips})
	b.rdb.AddHook(countHook{&trips})
	engines := []*guard.Engine{engine(t, a, ruleOfTwo), engine(t, b, ruleOfTwo)}
	const perReplica = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*perReplica)
	var committed, contended atomic.Int64
	for _, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perReplica {
				res, err := e.Evaluate(context.Background(), step("read_file", "race", 0), guard.StagePre)
				switch {
				case err != nil:
					errs <- err
				case res.Decision == guard.DecisionAllow && len(res.Errors) == 0:
					committed.Add(1)
				case len(res.Errors) == 1 && strings.Contains(res.Errors[0].Result.Error, "changed during every attempt"):
					contended.Add(1)
				default:
					errs <- fmt.Errorf("%s %+v", res.Decision, res.Errors)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sess, _, err := a.ReadSession(context.Background(), "agent-1", "race")
	if err != nil {
		t.Fatal(err)
	}
	n := committed.Load()
	if n+contended.Load() != 2*perReplica || n == 0 || sess.Version != n || sess.Seq != n || len(sess.Labels) != 1 {
		t.Fatalf("%d committed, %d contended; stored %+v", n, contended.Load(), sess)
	}
	if trips.Load() < 2*perReplica {
		t.Fatalf("%d round trips for %d steps", trips.Load(), 2*perReplica)
	}
	t.Logf("%d round trips for %d racing steps (%d contended)", trips.Load(), 2*perReplica, contended.Load())
}

// TestResubscribeEmptiesCache: when the subscription's connection is lost, the store empties its cache
// (it may have missed states), subscribes again, and hears the states committed afterwards.
func TestResubscribeEmptiesCache(t *testing.T) {
	a, prefix := openTest(t)
	opt, err := redis.ParseURL(testRedisURL())
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("guardtest-%d-%d", os.Getpid(), time.Now().UnixNano())
	opt.ClientName = name
	b := New(redis.NewClient(opt), Options{Prefix: prefix})
	t.Cleanup(func() { _ = b.Close() })
	if err := b.sub.waitSubscribed(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	ea := engine(t, a, ruleOfTwo)
	decide(t, ea, step("fetch_page", "s", 0))
	waitVersion(t, b, "s", 1)

	// Kill b's subscription connection (found by its name among the pubsub clients).
	list, err := a.rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " name="+name+" ") && strings.Contains(line, " cmd=subscribe") {
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "id="); ok {
					id = v
				}
			}
		}
	}
	if id == "" {
		t.Fatalf("no subscription connection named %s in\n%s", name, list)
	}
	if err := a.rdb.Do(context.Background(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second subscription", func() bool { return b.sub.confirms.Load() >= 2 })
	if v := b.cachedVersion(cacheKey("agent-1", "s")); v != 0 {
		t.Fatalf("cache kept version %d across the lost subscription", v)
	}
	decide(t, ea, step("read_file", "s", 0))
	waitVersion(t, b, "s", 2)
}

// TestDecodeMessage: malformed messages are refused, never a panic.
func TestDecodeMessage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want [4]string
	}{
		{`7:agent-12:s113:{"v":3,"t":1}["a","b"]`, true, [4]string{"agent-1", "s1", `{"v":3,"t":1}`, `["a","b"]`}},
		{`1:a0:0:["x"]`, true, [4]string{"a", "", "", `["x"]`}},
		{`9:a`, false, [4]string{}},
		{`x:a`, false, [4]string{}},
		{`-1:a`, false, [4]string{}},
		{``, false, [4]string{}},
	} {
		a, s, st, ag, ok := decodeMessage(tc.in)
		if ok != tc.ok || (ok && [4]string{a, s, st, ag} != tc.want) {
			t.Errorf("%q: %q %q %q %q %v", tc.in, a, s, st, ag, ok)
		}
	}
	s := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}), Options{})
	defer s.Close()
	for _, bad := range []string{`1:a1:s5:{"v":`, `1:a1:s3:abc`, `1:a1:s8:{"v":1,x`, `1:a0:0:[1,`} {
		if s.apply(bad) {
			t.Errorf("%q applied", bad)
		}
	}
}
