package sessionredis

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	guard "github.com/guardrail-control/guard"
)

// ReadSession returns the stored state of a session (nil when it has none) and its agent's counters (nil
// when none), read from Redis in one round trip (a pipelined GET and HGETALL), never from the replica's
// cache: the server's session view (GET /agents/{agent_name}/sessions/{session_id}) must agree whichever
// replica serves it. Evaluations keep using Load. The cache is left as it is: it only ever costs a
// conflict.
func (s *Store) ReadSession(ctx context.Context, agent, session string) (sess, ag *guard.SessionState, err error) {
	var get *redis.StringCmd
	var all *redis.MapStringStringCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, s.sessionKey(agent, session))
		all = p.HGetAll(ctx, s.agentKey(agent))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, fmt.Errorf("sessionredis: %w", err)
	}
	if b, gerr := get.Bytes(); gerr == nil {
		if sess, err = guard.DecodeSessionState(b); err != nil {
			return nil, nil, fmt.Errorf("sessionredis: a stored session does not decode: %w", err)
		}
	} else if !errors.Is(gerr, redis.Nil) {
		return nil, nil, fmt.Errorf("sessionredis: %w", gerr)
	}
	if m := all.Val(); len(m) > 0 {
		fields := make([]any, 0, 2*len(m))
		for k, v := range m {
			fields = append(fields, k, v)
		}
		ag, _ = agentState(fields)
	}
	return sess, ag, nil
}
