package server

import (
	"context"
	"errors"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/observability"
)

// Session state (docs/control-language.md, "Sessions") lives in one store shared by the engines of every
// agent: engines are rebuilt whenever an agent's controls change, and a session must survive that. The
// default is in memory (one replica); several replicas share a Redis store (GUARD_SESSION_STORE), so
// that a label added through replica A is seen by replica B on the next step.

// WithSessionStore makes the server keep session state in st (the Redis store, sessionredis.New).
// Default: an in-memory store of the server (guard.NewMemorySessionStore).
func WithSessionStore(st guard.SessionStore) Option { return func(c *config) { c.sessions = st } }

// sessionStoreOf returns the store of the configuration (in memory by default), counting its failures in
// the metrics when there are metrics.
func sessionStoreOf(cfg *config) guard.SessionStore {
	st := cfg.sessions
	if st == nil {
		st = guard.NewMemorySessionStore(0, 0)
	}
	if mem, ok := st.(*guard.MemorySessionStore); ok {
		// Not wrapped: engines given the in-memory store itself give each session its own turn (a
		// wrapper leaves them SessionTurn, in a critical section of its own) and hash the session's key once per step. Its
		// only error, a full store, is counted through OnError.
		if m := cfg.obs.metrics; m != nil {
			mem.OnError(func(error) { m.SessionStoreError() })
		}
		return mem
	}
	if m := cfg.obs.metrics; m != nil {
		if ser, ok := st.(guard.SessionSerializer); ok {
			return countingSerialStore{countingStore{st, m}, ser}
		}
		return countingStore{st, m}
	}
	return st
}

// sessionStore is the store engines get; nil (each engine its own) only for caches built in tests.
func (c *engineCache) sessionStore() guard.SessionStore { return c.sessions }

// countingStore counts the failed calls of a store in the metric <prefix>_session_store_errors_total.
type countingStore struct {
	guard.SessionStore
	m *observability.Metrics
}

func (s countingStore) Load(ctx context.Context, agent, session string, ag bool, now time.Time) (*guard.SessionState, *guard.SessionState, error) {
	a, b, err := s.SessionStore.Load(ctx, agent, session, ag, now)
	if err != nil {
		s.m.SessionStoreError()
	}
	return a, b, err
}

func (s countingStore) Commit(ctx context.Context, c *guard.SessionCommit) (bool, *guard.SessionState, error) {
	ok, cur, err := s.SessionStore.Commit(ctx, c)
	if err != nil {
		s.m.SessionStoreError()
	}
	return ok, cur, err
}

// countingSerialStore is countingStore for a store that takes turns (guard.SessionSerializer).
type countingSerialStore struct {
	countingStore
	ser guard.SessionSerializer
}

// SessionTurn implements guard.SessionSerializer.
func (s countingSerialStore) SessionTurn(agent, session string) (release func()) {
	return s.ser.SessionTurn(agent, session)
}

// sessionIDProblems validates step.context.session_id for every agent, sessions or not: a bad id is a
// 422 whatever the agent's controls, so that adding a session control never turns accepted steps away.
func sessionIDProblems(step *guard.Step) []guard.Problem {
	var ve *guard.ValidationError
	if err := guard.CheckSessionID(step); errors.As(err, &ve) {
		return ve.Problems
	}
	return nil
}
