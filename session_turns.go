package guard

import (
	"hash/maphash"
	"sync"
)

// Parallel steps of one session (parallel tool calls) evaluated in this process take turns: an
// evaluation reads the session's state, evaluates and commits what the step added, and the next one
// reads that. Without turns they would conflict on the commit's version check and evaluate again. The
// in-memory store gives each session being evaluated a turn of its own, so that two sessions never wait
// for one another (stripes would make sessions that share a stripe wait, for as long as a slow external
// evaluator of one of them takes). A turn exists only while an evaluation holds it or waits for it.

// memTurn is the turn of one session: its evaluations hold mu one at a time; refs (under the shard's
// lock) counts the holder and the waiters, and the turn is dropped when it falls to 0.
type memTurn struct {
	mu   sync.Mutex
	refs int32
}

// maxFreeTurns bounds the turns a shard keeps for reuse (a turn per evaluation would be an allocation).
const maxFreeTurns = 16

// acquireLoad waits for the turn of session k (hash h) and returns it with the session's state read in
// that turn (nil when none, or expired at now).
func (s *MemorySessionStore) acquireLoad(k memKey, h uint64, now int64) (*memTurn, *SessionState) {
	sh := &s.shards[h%memStoreShards]
	sh.mu.Lock()
	t := sh.turns[k]
	if t == nil {
		// Nobody holds the session's turn: take it and read the state in the same critical section.
		if n := len(sh.freeTurns); n > 0 {
			t, sh.freeTurns = sh.freeTurns[n-1], sh.freeTurns[:n-1]
		} else {
			t = &memTurn{}
		}
		if sh.turns == nil {
			sh.turns = map[memKey]*memTurn{}
		}
		sh.turns[k] = t
		t.refs = 1
		t.mu.Lock() // free: never blocks
		st := sh.get(k, now)
		sh.mu.Unlock()
		return t, st
	}
	t.refs++
	sh.mu.Unlock()
	t.mu.Lock() // until the evaluation holding the turn releases it
	sh.mu.Lock()
	st := sh.get(k, now)
	sh.mu.Unlock()
	return t, st
}

// release ends the turn t of session k (hash h) taken by acquireLoad.
func (s *MemorySessionStore) release(k memKey, h uint64, t *memTurn) {
	sh := &s.shards[h%memStoreShards]
	sh.mu.Lock()
	t.mu.Unlock()
	if t.refs--; t.refs == 0 {
		delete(sh.turns, k)
		if len(sh.freeTurns) < maxFreeTurns {
			sh.freeTurns = append(sh.freeTurns, t)
		}
	}
	sh.mu.Unlock()
}

// SessionTurns gives each session a turn of its own: a store shared by engines (the Redis store) uses
// it to implement SessionSerializer. The zero value is ready to use.
type SessionTurns struct {
	shards [memStoreShards]turnShard
	seed   maphash.Seed
	once   sync.Once
}

type turnShard struct {
	mu    sync.Mutex
	turns map[memKey]*memTurn
}

// Acquire waits for the turn of the agent's session and returns the function that ends it (to call
// once).
func (t *SessionTurns) Acquire(agent, session string) (release func()) {
	t.once.Do(func() { t.seed = maphash.MakeSeed() })
	k := memKey{agent, session}
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.WriteString(agent)
	h.WriteByte(0)
	h.WriteString(session)
	sh := &t.shards[h.Sum64()%memStoreShards]
	sh.mu.Lock()
	turn := sh.turns[k]
	if turn == nil {
		turn = &memTurn{}
		if sh.turns == nil {
			sh.turns = map[memKey]*memTurn{}
		}
		sh.turns[k] = turn
	}
	turn.refs++
	sh.mu.Unlock()
	turn.mu.Lock()
	return func() {
		sh.mu.Lock()
		turn.mu.Unlock()
		if turn.refs--; turn.refs == 0 {
			delete(sh.turns, k)
		}
		sh.mu.Unlock()
	}
}
