// Package sessionredis is a guard.SessionStore in Redis, shared by every replica of the server
// (GUARD_SESSION_STORE=redis://...), so that replicas behind a load balancer agree on a session: a label
// added through replica A is seen by replica B on the next step.
//
// One round trip per evaluation: Load answers from the replica's cache of the states it last committed
// or was told about (no round trip), and Commit is one Lua script that compares the session's stored
// version with the one the evaluation read, writes the next state if they agree (with the idle TTL),
// adds the agent-wide counter contributions, returns the agent-wide counters, and PUBLISHes the new
// states on the prefix's channel. Every Store subscribes to that channel (subscribe.go) and moves its
// cache on to the published versions, so that a replica that did not serve a session's last step still
// knows it when the next one arrives. When the cache is stale all the same (a step that races the
// message, a lost subscription), the script answers with the stored state instead: the engine evaluates
// the step again on it and commits again (a second round trip, only then; never a wrong decision).
//
// Agent-wide counters (agent.* selectors) are cached likewise, from the replica's own commits and the
// published ones: across replicas they lag by the messages not yet received, which never lets a limit
// through: the script adds to them only if each counter the step's controls read is still within the
// range they decided on (guard.CounterCheck), in the same call, and answers the current counters
// otherwise (docs/operations.md, "Sessions").
package sessionredis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
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
	// CacheSize bounds the states the replica caches (default 100,000 sessions): those of its own
	// commits and those the other replicas publish.
	CacheSize int
}

// Store is a guard.SessionStore in Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
	ttl    time.Duration

	mu        sync.Mutex
	cache     map[string]*guard.SessionState // agent \x00 session -> state last seen
	agents    map[string]agentEntry          // agent -> agent-wide counters last seen
	cacheSize int

	channel string      // where the commit script publishes (prefix + "states")
	sub     *subscriber // the subscription that keeps the cache current

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
	s := New(rdb, o)
	if err := s.sub.waitSubscribed(ctx, time.Second); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sessionredis: subscribing to %s: %w", s.channel, err)
	}
	return s, nil
}

// New returns a store on an existing client, and starts its subscription to the states the replicas
// commit (Close stops it).
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
	s := &Store{rdb: rdb, prefix: o.Prefix, ttl: o.TTL, cacheSize: o.CacheSize, seed: maphash.MakeSeed(),
		cache: map[string]*guard.SessionState{}, agents: map[string]agentEntry{}, channel: o.Prefix + "states"}
	s.sub = subscribe(s)
	return s
}

// Close stops the subscription (its goroutine has returned when Close does) and closes the client.
func (s *Store) Close() error {
	s.sub.stop()
	return s.rdb.Close()
}

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
		agSt = s.agents[agent].st
	}
	return sess, agSt, nil
}

// remember caches the state of a session (nil forgets it); the cache is emptied when full. With
// onlyNewer, a cached state of a later version is kept: a published state, or the reply of a commit, can
// arrive after a later one.
func (s *Store) remember(agent, session string, st *guard.SessionState, onlyNewer bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rememberLocked(cacheKey(agent, session), st, onlyNewer)
}

func (s *Store) rememberLocked(k string, st *guard.SessionState, onlyNewer bool) {
	if st == nil {
		delete(s.cache, k)
		return
	}
	old, ok := s.cache[k]
	if ok && onlyNewer && old.Version >= st.Version {
		return
	}
	if !ok && len(s.cache) >= s.cacheSize {
		clear(s.cache) // a cold cache costs a conflict per session, never a wrong decision
	}
	s.cache[k] = st
}

// cachedVersion is the version of the cached state of a session (0: none).
func (s *Store) cachedVersion(k string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.cache[k]; st != nil {
		return st.Version
	}
	return 0
}

// forgetAll empties the cache: the subscription may have missed states.
func (s *Store) forgetAll() {
	s.mu.Lock()
	clear(s.cache)
	clear(s.agents)
	s.mu.Unlock()
}

// commitScript: KEYS[1] the session, KEYS[2] the agent. ARGV: [1] write the session (1/0), [2] base
// version, [3] next state (JSON, starting {"v":N), [4] TTL ms, [5] now ms, [6] agent adds (JSON list of
// {k,w,a}, "" for none), [7] agent TTL ms, [8] the channel, [9] the agent, [10] the session, [11] agent
// checks (JSON list of {k,w,lo?,hi?}, "" for none). Returns {1, false, agent hash}, {0, stored state or
// false, agent hash or false} on a version conflict (the hash when there are checks), or {2, false, agent
// hash} when a checked agent counter, with the adds, would leave its range [lo, hi]. Nothing is written
// unless every check holds: the check and the add are one atomic step (guard.CounterCheck), so that a
// limit of N admits N steps however many replicas race.
//
// The agent hash holds a version in the field agentVersionField, set on every add to Redis's clock in
// µs (or the last version + 1 if that is not later), so that a replica keeps the later of two agent
// states it receives, and a hash that expired and starts again still moves the versions on (a session's
// version starts again at 1, but a stale session only costs a conflict, whose answer replaces it). What it writes, it publishes in the same call
// (no extra round trip): "<len>:<agent><len>:<session><len>:<state>" then the agent hash as a JSON list
// (decodeMessage), each part empty when the commit did not change it. A message is bounded by the
// caps of a state (labels, counters, step records).
var commitScript = redis.NewScript(`
local cur = false
if ARGV[1] == '1' then
  cur = redis.call('GET', KEYS[1])
  local v = 0
  if cur then v = tonumber(string.match(cur, '^{"v":(%d+)')) or 0 end
  if v ~= tonumber(ARGV[2]) then
    local ag = false
    if ARGV[11] ~= '' then ag = redis.call('HGETALL', KEYS[2]) end
    return {0, cur, ag}
  end
end
local now = tonumber(ARGV[5])
local vals = {}
local function counter(k)
  local e = vals[k]
  if e then return e end
  e = {now, 0}
  local f = redis.call('HGET', KEYS[2], k)
  if f then
    local s, n = string.match(f, '^(%-?%d+)|(.+)$')
    e[1], e[2] = tonumber(s), tonumber(n)
  end
  vals[k] = e
  return e
end
local adds = {}
if ARGV[6] ~= '' then adds = cjson.decode(ARGV[6]) end
for _, a in ipairs(adds) do
  local e = counter(a.k)
  if a.w > 0 and now - e[1] >= a.w then e[1], e[2] = now, 0 end
  e[2] = e[2] + a.a
end
if ARGV[11] ~= '' then
  for _, c in ipairs(cjson.decode(ARGV[11])) do
    local e = counter(c.k)
    local x = e[2]
    if c.w > 0 and now - e[1] >= c.w then x = 0 end
    if (c.lo and x < c.lo) or (c.hi and x > c.hi) then
      return {2, false, redis.call('HGETALL', KEYS[2])}
    end
  end
end
if ARGV[1] == '1' then redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4]) end
local all = false
if #adds > 0 then
  local written = {}
  for _, a in ipairs(adds) do
    if not written[a.k] then
      written[a.k] = true
      local e = vals[a.k]
      redis.call('HSET', KEYS[2], a.k, string.format('%d|%.17g', e[1], e[2]))
    end
  end
  local t = redis.call('TIME')
  local v = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local prev = tonumber(redis.call('HGET', KEYS[2], '\0v') or '0') or 0
  if prev >= v then v = prev + 1 end
  redis.call('HSET', KEYS[2], '\0v', string.format('%.0f', v))
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
  all = redis.call('HGETALL', KEYS[2])
end
local st = ''
if ARGV[1] == '1' then st = ARGV[3] end
if st ~= '' or all then
  local msg = string.format('%d:%s%d:%s%d:', #ARGV[9], ARGV[9], #ARGV[10], ARGV[10], #st) .. st
  if all then msg = msg .. cjson.encode(all) end
  redis.call('PUBLISH', ARGV[8], msg)
end
if not all then all = redis.call('HGETALL', KEYS[2]) end
return {1, false, all}
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
	checks, err := encodeChecks(c.AgentChecks)
	if err != nil {
		return false, nil, err
	}
	keys := []string{s.sessionKey(c.Agent, c.Session), s.agentKey(c.Agent)}
	raw, err := commitScript.Run(ctx, s.rdb, keys, write, c.Base, next, s.ttl.Milliseconds(), c.Now.UnixMilli(),
		adds, agentTTL.Milliseconds(), s.channel, c.Agent, c.Session, checks).Slice()
	if err != nil {
		return false, nil, fmt.Errorf("sessionredis: %w", err)
	}
	if len(raw) != 3 {
		return false, nil, errors.New("sessionredis: unexpected reply of the commit script")
	}
	switch code, _ := raw[0].(int64); code {
	case 0: // the session's version moved
		var cur *guard.SessionState
		if str, isStr := raw[1].(string); isStr {
			if cur, err = guard.DecodeSessionState([]byte(str)); err != nil {
				return false, nil, fmt.Errorf("sessionredis: a stored session does not decode: %w", err)
			}
		}
		s.remember(c.Agent, c.Session, cur, false) // what is stored now, even if older than the cache
		if fields, isList := raw[2].([]any); isList {
			c.AgentState = s.rememberAgent(c.Agent, fields)
		}
		return false, cur, nil
	case 2: // an agent-wide counter would leave the range its controls read it in
		fields, _ := raw[2].([]any)
		c.AgentState = s.rememberAgent(c.Agent, fields)
		return false, c.BaseState, nil // the session's version matched: the state read is current
	}
	if write == "1" {
		s.remember(c.Agent, c.Session, nextSt, true)
	}
	if fields, isList := raw[2].([]any); isList && len(fields) > 0 {
		s.rememberAgent(c.Agent, fields)
	}
	return true, nil, nil
}

// agentEntry is the cached agent-wide state and the version of the agent hash it was read from.
type agentEntry struct {
	v  int64
	st *guard.SessionState
}

// agentVersionField is the field of the agent hash the commit script versions every add with.
const agentVersionField = "\x00v"

// rememberAgent caches the agent-wide counters of an HGETALL reply, unless a later version is cached,
// and returns them.
func (s *Store) rememberAgent(agent string, fields []any) *guard.SessionState {
	st, v := agentState(fields)
	s.mu.Lock()
	if old, ok := s.agents[agent]; !ok || old.v < v {
		s.agents[agent] = agentEntry{v: v, st: st}
	}
	s.mu.Unlock()
	return st
}

// checkWire is a guard.CounterCheck as the commit script reads it: an unbounded side is left out.
type checkWire struct {
	Key      string   `json:"k"`
	WindowMS int64    `json:"w"`
	Min      *float64 `json:"lo,omitempty"`
	Max      *float64 `json:"hi,omitempty"`
}

// encodeChecks is the script's argument of the checks ("" for none).
func encodeChecks(checks []guard.CounterCheck) (string, error) {
	if len(checks) == 0 {
		return "", nil
	}
	w := make([]checkWire, len(checks))
	for i := range checks {
		c := &checks[i]
		w[i] = checkWire{Key: c.Key, WindowMS: c.WindowMS}
		if !math.IsInf(c.Min, -1) {
			w[i].Min = &c.Min
		}
		if !math.IsInf(c.Max, 1) {
			w[i].Max = &c.Max
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("sessionredis: %w", err)
	}
	return string(b), nil
}

// agentState is the state of the agent-wide counters of an HGETALL reply (field: start|value), and the
// hash's version (agentVersionField; 0 for a hash written before it existed).
func agentState(fields []any) (st *guard.SessionState, version int64) {
	st = &guard.SessionState{}
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		if k == agentVersionField {
			version, _ = strconv.ParseInt(v, 10, 64)
			continue
		}
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
	return st, version
}
