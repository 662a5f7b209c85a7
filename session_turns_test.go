package guard

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSessionTurnsPerSession: while an evaluation holds the turn of session a, a step of session b
// runs, even when a and b share the store's shard (and so would have shared a stripe of 1024 mutexes);
// a second step of a waits for the turn and runs once it is released.
func TestSessionTurnsPerSession(t *testing.T) {
	store := NewMemorySessionStore(0, 0)
	e := sessEngine(t, []Control{sessCtl(t, 1, "rule-of-two", ruleOfTwo)}, WithSessionStore(store), WithAgentName("agent"))
	ka := memKey{"agent", "a"}
	ha := store.hash(ka)
	var kb memKey // a session of the same shard and of the same stripe of 1024 as a
	for i := 0; ; i++ {
		kb = memKey{"agent", fmt.Sprint("b", i)}
		if store.hash(kb)%1024 == ha%1024 {
			break
		}
	}
	ctx := context.Background()
	check := func(session string) chan error {
		done := make(chan error, 1)
		go func() { done <- e.Check(ctx, tool("fetch_page", session, nil), StagePre) }()
		return done
	}
	turn, _ := store.acquireLoad(ka, ha, time.Now().UnixMilli())
	select {
	case err := <-check(kb.session):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a step of session b waited for session a's turn")
	}
	doneA := check("a")
	// Wait (with a deadline) until the second step of a is queued on a's turn, then release it.
	sh := &store.shards[ha%memStoreShards]
	deadline := time.Now().Add(10 * time.Second)
	for {
		sh.mu.Lock()
		refs := sh.turns[ka].refs
		sh.mu.Unlock()
		if refs == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second step of a is not waiting for its turn (refs %d)", refs)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-doneA:
		t.Fatalf("the step of a ran while its session's turn was held: %v", err)
	default:
	}
	store.release(ka, ha, turn)
	select {
	case err := <-doneA:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the step of a did not run after the turn was released")
	}
	sh.mu.Lock()
	left := len(sh.turns)
	sh.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d turns left after every evaluation ended", left)
	}
}

// TestSessionTurnsAcquire: SessionTurns (the Redis store's turns) lets another session through while a
// session's turn is held, and makes a second acquirer of the same session wait until it is released.
func TestSessionTurnsAcquire(t *testing.T) {
	var turns SessionTurns
	release := turns.Acquire("agent", "a")
	other := make(chan struct{})
	go func() { turns.Acquire("agent", "b")(); close(other) }()
	select {
	case <-other:
	case <-time.After(10 * time.Second):
		t.Fatal("session b waited for session a's turn")
	}
	got := make(chan struct{})
	go func() { turns.Acquire("agent", "a")(); close(got) }()
	k := memKey{"agent", "a"}
	deadline := time.Now().Add(10 * time.Second)
	for waiting := false; !waiting; {
		for i := range turns.shards {
			sh := &turns.shards[i]
			sh.mu.Lock()
			if tn := sh.turns[k]; tn != nil && tn.refs == 2 {
				waiting = true
			}
			sh.mu.Unlock()
		}
		if time.Now().After(deadline) {
			t.Fatal("the second acquirer of a is not waiting")
		}
		time.Sleep(time.Millisecond)
	}
	release()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the second acquirer of a did not get the turn after its release")
	}
	for i := range turns.shards {
		if n := len(turns.shards[i].turns); n != 0 {
			t.Fatalf("%d turns left in shard %d", n, i)
		}
	}
}

// TestMemoryStoreLoadIsACopy: the store writes each step's state over the state before last; a state
// Load returned is a copy, unchanged by later steps.
func TestMemoryStoreLoadIsACopy(t *testing.T) {
	store := NewMemorySessionStore(0, 0)
	e := sessEngine(t, []Control{sessCtl(t, 1, "rule-of-two", ruleOfTwo)}, WithSessionStore(store))
	ctx := context.Background()
	mustDecide(t, e, tool("fetch_page", "s", nil), StagePre, DecisionAllow)
	first, _, _ := store.Load(ctx, "", "s", false, time.Now())
	for _, name := range []string{"read_file", "x", "y"} {
		mustDecide(t, e, tool(name, "s", nil), StagePre, DecisionAllow)
	}
	last, _, _ := store.Load(ctx, "", "s", false, time.Now())
	if first.Seq != 1 || len(first.Steps) != 1 || len(first.Labels) != 1 || last.Seq != 4 || len(last.Steps) != 4 || len(last.Labels) != 2 {
		t.Fatalf("first %+v, last %+v", first, last)
	}
	res := mustDecide(t, e, tool("http_post", "s", nil), StagePre, DecisionDeny)
	if res.Session.Step != 5 || !strings.Contains(res.Reason, "step 2 (read_file) added label sensitive") {
		t.Fatalf("%+v %s", res.Session, res.Reason)
	}
}
