// Package sessionredis is a guard.SessionStore in Redis, shared by every replica of the server
// (GUARD_SESSION_STORE=redis://...), so that replicas behind a load balancer agree on a session: a label
// added through replica A is seen by replica B on the next step.
//
// One round trip per evaluation: Load answers from the replica's cache of the states it last committed
// or was told about (no round trip), and Commit is one Lua script that compares the session's stored
// version with the one the evaluation read, writes the next state if they agree (with the idle TTL),
// adds the agent-wide counter contributions, and returns the agent-wide counters. When another replica
// moved the session on, the script returns the stored state instead: the engine evaluates the step again
// on it and commits again (a second round trip, only then).
//
// Agent-wide counters (agent.* selectors) are read from the reply of the replica's last commit: across
// replicas they lag by the steps the others committed since (docs/operations.md, "Sessions").
package sessionredis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	guard "github.com/guardrail-control/guard"
)

// Options configure a Store.
type Options struct {
	// Prefix starts every key (default "guard:"): tests and deployments sharing a Redis use distinct ones.
	Prefix string
	// TTL is how long an idle session is kept (default guard.DefaultSessionTTL).
	TTL time.Duration
	// CacheSize bounds the states the replica caches (default 100,000 sessions).
	CacheSize int
}

// Store is a guard.SessionStore in Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
	ttl    time.Duration

	mu        sync.Mutex
	cache     map[string]*guard.SessionState // agent \x00 session -> state last seen
	agents    map[string]*guard.SessionState // agent -> agent-wide counters last seen
	cacheSize int

	seed  maphash.Seed
	turns guard.SessionTurns // SessionTurn: this replica's steps of one session take turns
}

// SessionTurn implements guard.SessionSerializer: parallel steps of one session on this replica take
// turns (each session its own); replicas still meet through the version check.
func (s *Store) SessionTurn(agent, session string) (release func()) {
	return s.turns.Acquire(agent, session)
}

// Open connects to the Redis of url (redis://[user:pass@]host:port[/db], rediss:// for TLS) and checks
// that it answers.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("sessionredis: %w", err)
	}
	opt.DialTimeout = time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 1
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("sessionredis: %s does not answer: %w", opt.Addr, err)
	}
	return New(rdb, o), nil
}

// New returns a store on an existing client.
func New(rdb *redis.Client, o Options) *Store {
	if o.Prefix == "" {
		o.Prefix = "guard:"
	}
	if o.TTL <= 0 {
		o.TTL = guard.DefaultSessionTTL
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 100_000
	}
	return &Store{rdb: rdb, prefix: o.Prefix, ttl: o.TTL, cacheSize: o.CacheSize, seed: maphash.MakeSeed(),
		cache: map[string]*guard.SessionState{}, agents: map[string]*guard.SessionState{}}
}

// Close closes the client.
func (s *Store) Close() error { return s.rdb.Close() }

// sessionKey and agentKey share the hash tag {agent}, so that the script's keys are in one slot of a
// Redis Cluster.
func (s *Store) sessionKey(agent, session string) string {
	return s.prefix + "{" + agent + "}:s:" + session
}

func (s *Store) agentKey(agent string) string { return s.prefix + "{" + agent + "}:a" }

func cacheKey(agent, session string) string { return agent + "\x00" + session }

// Load implements guard.SessionStore from the replica's cache: no round trip.
func (s *Store) Load(_ context.Context, agent, session string, ag bool, _ time.Time) (sess, agSt *guard.SessionState, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if session != "" {
		sess = s.cache[cacheKey(agent, session)]
	}
	if ag {
		agSt = s.agents[agent]
	}
	return sess, agSt, nil
}

// remember caches the state of a session (nil forgets it); the cache is emptied when full.
func (s *Store) remember(agent, session string, st *guard.SessionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheKey(agent, session)
	if st == nil {
		delete(s.cache, k)
		return
	}
	if _, ok := s.cache[k]; !ok && len(s.cache) >= s.cacheSize {
		clear(s.cache) // a cold cache costs a conflict per session, never a wrong decision
	}
	s.cache[k] = st
}

// commitScript: KEYS[1] the session, KEYS[2] the agent. ARGV: [1] write the session (1/0), [2] base
// version, [3] next state (JSON, starting {"v":N), [4] TTL ms, [5] now ms, [6] agent adds (JSON list of
// {k,w,a}, "" for none), [7] agent TTL ms. Returns {1, false, agent hash} or {0, stored state or false, false}.
var commitScript = redis.NewScript(`
if ARGV[1] == '1' then
  local cur = redis.call('GET', KEYS[1])
  local v = 0
  if cur then v = tonumber(string.match(cur, '^{"v":(%d+)')) or 0 end
  if v ~= tonumber(ARGV[2]) then return {0, cur or false, false} end
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
end
if ARGV[6] ~= '' then
  local now = tonumber(ARGV[5])
  for _, a in ipairs(cjson.decode(ARGV[6])) do
    local start, val = now, 0
    local f = redis.call('HGET', KEYS[2], a.k)
    if f then
      local s, n = string.match(f, '^(%-?%d+)|(.+)$')
      start, val = tonumber(s), tonumber(n)
    end
    if a.w > 0 and now - start >= a.w then start, val = now, 0 end
    val = val + a.a
    redis.call('HSET', KEYS[2], a.k, string.format('%d|%.17g', start, val))
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
return {1, false, redis.call('HGETALL', KEYS[2])}
`)

// agentTTL is how long agent-wide counters live idle: the longest window.
var agentTTL = guard.MaxSessionWindow

// Commit implements guard.SessionStore in one round trip.
func (s *Store) Commit(ctx context.Context, c *guard.SessionCommit) (bool, *guard.SessionState, error) {
	write, next := "0", ""
	var nextSt *guard.SessionState
	if c.Session != "" && c.Write {
		nextSt = c.Next()
		b, err := json.Marshal(nextSt)
		if err != nil {
			return false, nil, err
		}
		write, next = "1", string(b)
	}
	adds := ""
	if len(c.AgentAdds) > 0 {
		b, err := json.Marshal(c.AgentAdds)
		if err != nil {
			return false, nil, err
		}
		adds = string(b)
	}
	keys := []string{s.sessionKey(c.Agent, c.Session), s.agentKey(c.Agent)}
	raw, err := commitScript.Run(ctx, s.rdb, keys, write, c.Base, next, s.ttl.Milliseconds(), c.Now.UnixMilli(),
		adds, agentTTL.Milliseconds()).Slice()
	if err != nil {
		return false, nil, fmt.Errorf("sessionredis: %w", err)
	}
	if len(raw) != 3 {
		return false, nil, errors.New("sessionredis: unexpected reply of the commit script")
	}
	if ok, _ := raw[0].(int64); ok != 1 {
		var cur *guard.SessionState
		if str, isStr := raw[1].(string); isStr {
			if cur, err = guard.DecodeSessionState([]byte(str)); err != nil {
				return false, nil, fmt.Errorf("sessionredis: a stored session does not decode: %w", err)
			}
		}
		s.remember(c.Agent, c.Session, cur)
		return false, cur, nil
	}
	if write == "1" {
		s.remember(c.Agent, c.Session, nextSt)
	}
	if fields, isList := raw[2].([]any); isList && len(fields) > 0 {
		s.rememberAgent(c.Agent, fields)
	}
	return true, nil, nil
}

// rememberAgent caches the agent-wide counters of an HGETALL reply.
func (s *Store) rememberAgent(agent string, fields []any) {
	st := agentState(fields)
	s.mu.Lock()
	s.agents[agent] = st
	s.mu.Unlock()
}

// agentState is the state of the agent-wide counters of an HGETALL reply (field: start|value).
func agentState(fields []any) *guard.SessionState {
	st := &guard.SessionState{}
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		start, val, ok := strings.Cut(v, "|")
		if !ok {
			continue
		}
		b, err1 := strconv.ParseInt(start, 10, 64)
		n, err2 := strconv.ParseFloat(val, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		st.Counters = append(st.Counters, guard.Counter{Key: k, Start: b, Value: n})
	}
	return st
}
