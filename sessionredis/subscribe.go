package sessionredis

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	guard "github.com/guardrail-control/guard"
)

// subscriber keeps a Store's cache current with the states every replica commits: the commit script
// publishes them on the store's channel, and one goroutine per Store applies each message to the cache
// when it is newer than what the cache holds (never older). Correctness never rests on it: a stale cache
// costs a conflict (a second round trip), never a wrong decision.
//
// When the subscription is lost, messages may have been missed: the cache is emptied on the error, and
// again once the subscription is confirmed anew (the states published in between are lost).
type subscriber struct {
	s      *Store
	pubsub *redis.PubSub
	quit   chan struct{} // closed by stop
	done   chan struct{} // closed when the goroutine returns
	halt   sync.Once

	subscribed chan struct{} // closed at the first confirmation
	once       sync.Once
	confirms   atomic.Int64 // subscription confirmations so far (reconnections after the first)
}

// subscribe starts the store's subscription.
func subscribe(s *Store) *subscriber {
	sub := &subscriber{s: s, quit: make(chan struct{}), done: make(chan struct{}), subscribed: make(chan struct{})}
	// Subscribe writes SUBSCRIBE now; an error (no Redis) shows in Receive, which retries.
	sub.pubsub = s.rdb.Subscribe(context.Background(), s.channel)
	go sub.run()
	return sub
}

// waitSubscribed waits for the first confirmation of the subscription, so that Open returns a store that
// hears every state committed after it.
func (sub *subscriber) waitSubscribed(ctx context.Context, max time.Duration) error {
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-sub.subscribed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errors.New("no confirmation")
	}
}

// stop ends the subscription and waits for the goroutine.
func (sub *subscriber) stop() {
	sub.halt.Do(func() {
		close(sub.quit)
		_ = sub.pubsub.Close() // unblocks Receive
	})
	<-sub.done
}

func (sub *subscriber) stopped() bool {
	select {
	case <-sub.quit:
		return true
	default:
		return false
	}
}

// Backoff between failed receives (Redis down): the cache stays empty meanwhile.
const (
	minRetry = 50 * time.Millisecond
	maxRetry = 2 * time.Second
)

func (sub *subscriber) run() {
	defer close(sub.done)
	ctx := context.Background()
	retry := minRetry
	for !sub.stopped() {
		msg, err := sub.pubsub.Receive(ctx)
		if err != nil {
			sub.s.forgetAll() // messages may be missed until the subscription is back
			if !sub.sleep(retry) {
				return
			}
			retry = min(2*retry, maxRetry)
			continue
		}
		retry = minRetry
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				sub.s.forgetAll() // what was published before this confirmation may be missed
				sub.confirms.Add(1)
				sub.once.Do(func() { close(sub.subscribed) })
			}
		case *redis.Message:
			sub.s.apply(m.Payload) // a malformed message (not the script's) changes nothing
		}
	}
}

// sleep waits d, or until the subscriber is stopped (false).
func (sub *subscriber) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-sub.quit:
		return false
	}
}

// apply moves the cache on to the states of a published message (decodeMessage) that are newer than
// the cached ones, decoding a session state only then. It reports whether the message was well formed.
func (s *Store) apply(payload string) bool {
	agent, session, state, agentHash, ok := decodeMessage(payload)
	if !ok {
		return false
	}
	if state != "" {
		k := cacheKey(agent, session)
		v, ok := stateVersion(state)
		if !ok {
			return false
		}
		if v > s.cachedVersion(k) {
			st, err := guard.DecodeSessionState([]byte(state))
			if err != nil {
				return false
			}
			s.mu.Lock()
			s.rememberLocked(k, st, true)
			s.mu.Unlock()
		}
	}
	if agentHash != "" {
		var fields []string
		if err := json.Unmarshal([]byte(agentHash), &fields); err != nil {
			return false
		}
		list := make([]any, len(fields))
		for i, f := range fields {
			list[i] = f
		}
		s.rememberAgent(agent, list)
	}
	return true
}

// decodeMessage splits a message of the commit script: "<len>:<agent><len>:<session><len>:<state>"
// then the agent hash (a JSON list of field, value, ...; empty when the commit added nothing to it).
func decodeMessage(p string) (agent, session, state, agentHash string, ok bool) {
	if agent, p, ok = lengthPrefixed(p); !ok {
		return
	}
	if session, p, ok = lengthPrefixed(p); !ok {
		return
	}
	if state, p, ok = lengthPrefixed(p); !ok {
		return
	}
	return agent, session, state, p, true
}

// lengthPrefixed cuts "<n>:<n bytes>" off the front of p.
func lengthPrefixed(p string) (field, rest string, ok bool) {
	ns, rest, found := strings.Cut(p, ":")
	if !found {
		return "", "", false
	}
	n, err := strconv.Atoi(ns)
	if err != nil || n < 0 || n > len(rest) {
		return "", "", false
	}
	return rest[:n], rest[n:], true
}

// stateVersion reads N of a stored state's `{"v":N` start without decoding the state.
func stateVersion(state string) (int64, bool) {
	rest, ok := strings.CutPrefix(state, `{"v":`)
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	v, err := strconv.ParseInt(rest[:i], 10, 64)
	return v, err == nil
}
