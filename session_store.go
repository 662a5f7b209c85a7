package guard

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// SessionStore keeps session and agent states (SessionState) for engines whose controls use them. The
// engine reads the states at the start of an evaluation and commits the next session state at its end
// with a version check (compare and set): when another evaluation of the same session committed first,
// Commit reports a conflict with the stored state and the engine evaluates again on it. Agent-wide
// counters, which many sessions update at once, are never compared by version: a commit adds to them
// only if each counter the evaluation read stays within the range its controls allow (CounterCheck).
//
// A store may answer Load from a cache (the Redis store does, so that an evaluation costs one round trip,
// the Commit): a stale answer only costs a conflict.
type SessionStore interface {
	// Load returns the state of the session (nil when it has none, or session is "") and, when agent is
	// true, the agent-wide state (nil when none). now is the evaluation's clock (idle expiry).
	Load(ctx context.Context, agentName, session string, agent bool, now time.Time) (sess, ag *SessionState, err error)
	// Commit stores the session's next state (c.Next(), or the same delta applied to the stored state)
	// if the stored state's version is still c.Base (0: no state), and adds c.AgentAdds to the agent's
	// counters, atomically and only if the counters of c.AgentChecks stay within their ranges. On a
	// version conflict, or a counter out of its range, it stores nothing and returns ok false with the
	// stored session state (and, for a counter, the agent's state in c.AgentState).
	Commit(ctx context.Context, c *SessionCommit) (ok bool, current *SessionState, err error)
}

// SessionSerializer is implemented by stores that make the evaluations of one session in this process
// take turns (the engine holds the turn from Load to Commit), so that parallel steps of a session do not
// conflict. Each session has a turn of its own (SessionTurns): sessions never wait for one another.
type SessionSerializer interface {
	// SessionTurn waits for the session's turn and returns the function that ends it.
	SessionTurn(agent, session string) (release func())
}

// SessionCommit is the outcome of one evaluation for the store.
type SessionCommit struct {
	Agent     string
	Session   string        // "": no session state to write
	Base      int64         // the version the evaluation read
	BaseState *SessionState // the state the evaluation read (nil: none)
	Write     bool          // the session has something to write (false: only agent counters)
	// The delta of the session: labels added, counter contributions, the step's record (pre stage).
	Labels    []LabelOrigin
	Adds      []CounterAdd
	Record    *StepRecord
	AgentAdds []CounterAdd // contributions to the agent's counters
	// AgentChecks bound the agent-wide counters the evaluation read, with AgentAdds applied: a store
	// that cannot keep every one within its range stores nothing and answers a conflict, setting
	// AgentState (session_agentcheck.go).
	AgentChecks []CounterCheck
	Now         time.Time

	// AgentState is set by Commit on a conflict: the agent's stored counters, when the session's
	// version matched but a counter of AgentChecks was out of its range (or when the store answers them
	// with a version conflict too). The engine evaluates again on them.
	AgentState *SessionState
}

// Next returns the session's next state: BaseState with the delta applied (a new state; BaseState is
// not modified).
func (c *SessionCommit) Next() *SessionState {
	return c.BaseState.next(c.Labels, c.Adds, c.Record, c.Now.UnixMilli())
}

// CounterAdd adds Add to the counter Key of an agent, over a fixed window of WindowMS (0: none).
type CounterAdd struct {
	Key      string  `json:"k"`
	WindowMS int64   `json:"w"`
	Add      float64 `json:"a"`
}

// ErrSessionStoreFull is returned by a MemorySessionStore that holds its maximum number of sessions: the
// controls that read session state then fail by their on_error.
var ErrSessionStoreFull = errors.New("guard: the session store holds its maximum number of sessions")

// Defaults of MemorySessionStore.
const (
	DefaultSessionTTL        = time.Hour
	DefaultMaxMemorySessions = 1_000_000
	memStoreShards           = 64
	agentStateTTL            = MaxSessionWindow // agent-wide counters live as long as the longest window
	memSweepEvery            = time.Minute
)

// MemorySessionStore is the in-process SessionStore: the default of an engine, and of the server
// without GUARD_SESSION_STORE. Sessions idle for longer than the TTL are forgotten (lazily on access,
// and by a sweep of each shard at most once a minute, on a commit).
type MemorySessionStore struct {
	ttl       time.Duration
	max       int64
	seed      maphash.Seed
	count     atomic.Int64
	shards    [memStoreShards]memShard
	wrapTurns SessionTurns // SessionTurn
	// onError is called with the errors the store returns (OnError).
	onError func(error)
}

// OnError makes the store call f with every error it returns (ErrSessionStoreFull, its only one): the
// server counts them in its metrics. Call it before the store is used.
func (s *MemorySessionStore) OnError(f func(error)) { s.onError = f }

// SessionTurn implements SessionSerializer, for callers that drive the store through the interface
// (a wrapper): turns of their own, since the public Commit takes the store's internal turn of the
// session (which engines given the store itself hold from their read to their commit).
func (s *MemorySessionStore) SessionTurn(agent, session string) (release func()) {
	return s.wrapTurns.Acquire(agent, session)
}

type memShard struct {
	mu        sync.Mutex
	m         map[memKey]memEntry
	lastSweep int64
	peak      int                 // the most sessions the map held since it was made (sweep)
	turns     map[memKey]*memTurn // sessions being evaluated (session_turns.go)
	freeTurns []*memTurn
}

type memKey struct{ agent, session string }

type memEntry struct {
	st    *SessionState
	exp   int64         // unix ms
	spare *SessionState // the state before st, written over by the next step (nil: none yet)
}

// NewMemorySessionStore returns an empty store whose sessions expire after ttl idle (DefaultSessionTTL
// when ttl <= 0) and which holds at most max sessions (DefaultMaxMemorySessions when max <= 0).
func NewMemorySessionStore(ttl time.Duration, max int) *MemorySessionStore {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	if max <= 0 {
		max = DefaultMaxMemorySessions
	}
	s := &MemorySessionStore{ttl: ttl, max: int64(max), seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = make(map[memKey]memEntry)
	}
	return s
}

// Len returns the number of sessions and agent states held (expired ones included until swept).
func (s *MemorySessionStore) Len() int { return int(s.count.Load()) }

func (s *MemorySessionStore) shard(k memKey) *memShard {
	return &s.shards[s.hash(k)%memStoreShards]
}

func (s *MemorySessionStore) hash(k memKey) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(k.agent)
	h.WriteByte(0)
	h.WriteString(k.session)
	return h.Sum64()
}

// get returns the live state of k; the shard is locked.
func (sh *memShard) get(k memKey, now int64) *SessionState {
	e, ok := sh.m[k]
	if !ok || e.exp <= now {
		return nil
	}
	return e.st
}

// Load implements SessionStore. It returns copies of the states: the store writes over its own.
func (s *MemorySessionStore) Load(_ context.Context, agentName, session string, agent bool, at time.Time) (sess, ag *SessionState, err error) {
	var h uint64
	if session != "" {
		h = s.hash(memKey{agentName, session})
	}
	now := at.UnixMilli()
	if session != "" {
		// Copied under the shard's lock: two commits later the store writes over this state.
		sh := &s.shards[h%memStoreShards]
		sh.mu.Lock()
		sess = sh.get(memKey{agentName, session}, now).clone()
		sh.mu.Unlock()
	}
	_, ag = s.load(agentName, "", 0, agent, now)
	return sess, ag, nil
}

// load is Load with the hash of the session's key (the engine computes it once per evaluation, for
// the session's mutex, its Load and its Commit).
func (s *MemorySessionStore) load(agentName, session string, h uint64, agent bool, now int64) (sess, ag *SessionState) {
	if session != "" {
		k := memKey{agentName, session}
		sh := &s.shards[h%memStoreShards]
		sh.mu.Lock()
		sess = sh.get(k, now)
		sh.mu.Unlock()
	}
	if agent {
		k := memKey{agentName, ""}
		sh := s.shard(k)
		sh.mu.Lock()
		ag = sh.get(k, now)
		sh.mu.Unlock()
	}
	return sess, ag
}

// Commit implements SessionStore, in the session's turn (the store writes over the state before last,
// which only an evaluation in an earlier turn reads). A state it returns is a copy.
func (s *MemorySessionStore) Commit(_ context.Context, c *SessionCommit) (bool, *SessionState, error) {
	if c.Session == "" || !c.Write {
		return s.commit(c, 0)
	}
	k := memKey{c.Agent, c.Session}
	h := s.hash(k)
	turn, _ := s.acquireLoad(k, h, c.Now.UnixMilli())
	defer s.release(k, h, turn)
	ok, cur, err := s.commit(c, h)
	return ok, cur.clone(), err
}

// commit is Commit with the hash of the session's key. The shards of the session and of the agent are
// held together (in index order), so that the session's write, the agent's additions and their checks
// are one atomic step for every evaluation of this process.
func (s *MemorySessionStore) commit(c *SessionCommit, h uint64) (bool, *SessionState, error) {
	now := c.Now.UnixMilli()
	si, ai := -1, -1
	if c.Session != "" && c.Write {
		si = int(h % memStoreShards)
	}
	ak := memKey{c.Agent, ""}
	if len(c.AgentAdds) > 0 || len(c.AgentChecks) > 0 {
		ai = int(s.hash(ak) % memStoreShards)
	}
	s.lockShards(si, ai)
	reserved := false
	var cur *SessionState
	var e memEntry
	k := memKey{c.Agent, c.Session}
	if si >= 0 {
		sh := &s.shards[si]
		s.sweep(sh, now)
		var exists bool
		e, exists = sh.m[k]
		var v int64
		if exists && e.exp > now {
			cur, v = e.st, e.st.Version
		}
		if v != c.Base {
			s.unlockShards(si, ai)
			return false, cur, nil
		}
		if !exists && s.count.Add(1) > s.max {
			// Full: free what has expired in every shard, then try once more (the session's turn
			// is held: its entry does not change meanwhile).
			s.count.Add(-1)
			s.unlockShards(si, ai)
			s.sweepAll(now)
			s.lockShards(si, ai)
			if _, exists = sh.m[k]; !exists && s.count.Add(1) > s.max {
				s.count.Add(-1)
				s.unlockShards(si, ai)
				if s.onError != nil {
					s.onError(ErrSessionStoreFull)
				}
				return false, nil, ErrSessionStoreFull
			}
		}
		reserved = !exists
	}
	if ai >= 0 {
		ash := &s.shards[ai]
		agCur := ash.get(ak, now)
		if !agentChecksHold(agCur, c.AgentAdds, c.AgentChecks, now) {
			if reserved {
				s.count.Add(-1)
			}
			s.unlockShards(si, ai)
			c.AgentState = agCur
			if si < 0 {
				cur = c.BaseState // nothing to write of the session: the state read stands
			}
			return false, cur, nil
		}
	}
	if si >= 0 {
		sh := &s.shards[si]
		// The next state is written over the one before cur (in the session's turn nobody reads it):
		// a step allocates nothing once its session has two states.
		next := e.spare
		if next == nil || next == cur {
			next = &SessionState{}
		}
		cur.writeNext(next, c.Labels, c.Adds, c.Record, now)
		sh.m[k] = memEntry{st: next, exp: now + s.ttl.Milliseconds(), spare: cur}
	}
	if len(c.AgentAdds) > 0 {
		ash := &s.shards[ai]
		_, exists := ash.m[ak]
		agCur := ash.get(ak, now)
		if !exists {
			s.count.Add(1)
		}
		ash.m[ak] = memEntry{st: agCur.next(nil, c.AgentAdds, nil, now), exp: now + agentStateTTL.Milliseconds()}
	}
	s.unlockShards(si, ai)
	return true, nil, nil
}

// lockShards locks shards i and j (-1: none; once when they are the same), lower index first.
func (s *MemorySessionStore) lockShards(i, j int) {
	if i > j {
		i, j = j, i
	}
	if i >= 0 {
		s.shards[i].mu.Lock()
	}
	if j >= 0 && j != i {
		s.shards[j].mu.Lock()
	}
}

// unlockShards unlocks what lockShards(i, j) locked.
func (s *MemorySessionStore) unlockShards(i, j int) {
	if i >= 0 {
		s.shards[i].mu.Unlock()
	}
	if j >= 0 && j != i {
		s.shards[j].mu.Unlock()
	}
}

// agentChecksHold reports whether every check holds for the agent's counters st (nil: none) with adds
// applied at now.
func agentChecksHold(st *SessionState, adds []CounterAdd, checks []CounterCheck, now int64) bool {
	for i := range checks {
		ck := &checks[i]
		if !ck.Holds(valueAfter(st, adds, ck.Key, ck.WindowMS, now)) {
			return false
		}
	}
	return true
}

// valueAfter is the value counter key of st would have at now once adds are applied (a window that
// has passed starts again), as applyCounters computes it.
func valueAfter(st *SessionState, adds []CounterAdd, key string, window, now int64) float64 {
	start, v, found := now, 0.0, false
	if st != nil {
		for i := range st.Counters {
			if c := &st.Counters[i]; c.Key == key {
				start, v, found = c.Start, c.Value, true
				break
			}
		}
	}
	if found && window > 0 && now-start >= window {
		v = 0
	}
	for _, a := range adds {
		if a.Key == key {
			v += a.Add
		}
	}
	return v
}

// sweep drops the expired entries of sh, at most once per memSweepEvery; sh is locked.
func (s *MemorySessionStore) sweep(sh *memShard, now int64) {
	if now-sh.lastSweep < memSweepEvery.Milliseconds() {
		return
	}
	sh.lastSweep = now
	sh.peak = max(sh.peak, len(sh.m))
	for k, e := range sh.m {
		switch {
		case e.exp <= now:
			delete(sh.m, k)
			s.count.Add(-1)
		case e.spare != nil && now-e.st.Touched >= memSweepEvery.Milliseconds():
			// Idle for a sweep interval: the spare state goes, an idle session holds one state.
			e.spare = nil
			sh.m[k] = e
		}
	}
	// A Go map keeps the room of its largest size: once most of a shard has expired, a copy returns
	// the room of the sessions that left (1,000,000 idle sessions leave about 100 MB of room otherwise).
	if sh.peak >= 1024 && len(sh.m) < sh.peak/4 {
		m := make(map[memKey]memEntry, len(sh.m))
		for k, e := range sh.m {
			m[k] = e
		}
		sh.m, sh.peak = m, len(m)
	}
}

// sweepAll sweeps every shard (each at most once per memSweepEvery).
func (s *MemorySessionStore) sweepAll(now int64) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		s.sweep(sh, now)
		sh.mu.Unlock()
	}
}
