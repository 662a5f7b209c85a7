package guard

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestSessionTurnsPerSession: while an evaluation holds the turn of session a, a step of session b
// runs, even when a and b share SessionMutex's stripe; a second step of a waits for the turn and runs
// once it is released.
func TestSessionTurnsPerSession(t *testing.T) {
	store := NewMemorySessionStore(0, 0)
	e := sessEngine(t, []Control{sessCtl(t, 1, "rule-of-two", ruleOfTwo)}, WithSessionStore(store), WithAgentName("agent"))
	ka := memKey{"agent", "a"}
	ha := store.hash(ka)
	var kb memKey // a session of the same stripe (and so of the same shard) as a
	for i := 0; ; i++ {
		kb = memKey{"agent", fmt.Sprint("b", i)}
		if store.hash(kb)%sessionStripes == ha%sessionStripes {
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
