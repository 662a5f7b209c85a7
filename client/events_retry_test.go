package client

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// refusingPost answers the first refusals posts with err, then takes every event; it counts what it took.
type refusingPost struct {
	mu       sync.Mutex
	refusals int
	err      error
	calls    int
	taken    int
}

func (p *refusingPost) post(_ context.Context, evs []wireEvent) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.refusals > 0 {
		p.refusals--
		return p.err
	}
	p.taken += len(evs)
	return nil
}

// TestEventsRefusedWith503AreSentAgain: a batch the server refuses with 503 (its buffer full: nothing of the
// request was taken) is kept and sent again; nothing is lost or counted as dropped.
func TestEventsRefusedWith503AreSentAgain(t *testing.T) {
	p := &refusingPost{refusals: 2, err: &APIError{Status: http.StatusServiceUnavailable, Code: "OBSERVABILITY_BUFFER_FULL"}}
	s := newEventSink(100, 10, time.Hour, time.Second, p.post, zap.NewNop())
	for range 3 {
		s.add(recordOf(10))
	}
	// Each flush tries now: the first two are refused and keep the events, the third sends them all.
	for range 3 {
		s.flush(context.Background())
	}
	s.close()
	if p.taken != 30 || s.sent.Load() != 30 || s.dropped.Load() != 0 {
		t.Fatalf("taken %d, sent %d, dropped %d; want 30, 30, 0", p.taken, s.sent.Load(), s.dropped.Load())
	}
}

// TestEventsRefusedWith503WaitForTheBackoff drives send directly (no sender goroutine, so the order is
// the test's): while the backoff runs nothing is posted and at most retainingBatches batches are kept (the
// oldest beyond are dropped and counted); once it has run out, the kept events go in batches.
func TestEventsRefusedWith503WaitForTheBackoff(t *testing.T) {
	p := &refusingPost{refusals: 1, err: &APIError{Status: http.StatusServiceUnavailable}}
	s := &eventSink{batch: 10, timeout: time.Second, post: p.post, log: zap.NewNop()}
	events := func(n int) []wireEvent { return make([]wireEvent, n) }
	buf := s.send(events(10)) // refused: kept, and the backoff starts
	if len(buf) != 10 || p.calls != 1 || s.backoff != retryFirst || !s.retryAt.After(time.Now()) {
		t.Fatalf("after the refusal: %d kept, %d posts, backoff %v", len(buf), p.calls, s.backoff)
	}
	buf = s.send(append(buf, events(200)...)) // during the backoff: not posted, bounded
	kept := retainingBatches * 10
	if len(buf) != kept || p.calls != 1 || s.dropped.Load() != int64(210-kept) {
		t.Fatalf("during the backoff: %d kept, %d posts, %d dropped; want %d, 1, %d", len(buf), p.calls, s.dropped.Load(), kept, 210-kept)
	}
	s.retryAt = time.Now().Add(-time.Millisecond) // the backoff has run out
	buf = s.send(buf)
	if len(buf) != 0 || p.taken != kept || p.calls != 1+retainingBatches || s.sent.Load() != int64(kept) || !s.retryAt.IsZero() || s.backoff != 0 {
		t.Fatalf("after the backoff: %d left, %d taken in %d posts, sent %d", len(buf), p.taken, p.calls, s.sent.Load())
	}
}

// TestEventsRetryBackoffDoubles: refusals in a row double the wait up to retryMax.
func TestEventsRetryBackoffDoubles(t *testing.T) {
	p := &refusingPost{refusals: 100, err: &APIError{Status: http.StatusServiceUnavailable}}
	s := &eventSink{batch: 10, timeout: time.Second, post: p.post, log: zap.NewNop()}
	buf := make([]wireEvent, 1)
	var waits []time.Duration
	for range 7 {
		s.retryAt = time.Time{}
		buf = s.send(buf)
		waits = append(waits, s.backoff)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, retryMax, retryMax}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
}

// TestEventsOtherFailuresAreDropped: any other failure (unreachable, 4xx) drops the batch as before, and
// so does a 503 while closing (there is no later).
func TestEventsOtherFailuresAreDropped(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unreachable", errors.New("connection refused")},
		{"refused 422", &APIError{Status: http.StatusUnprocessableEntity}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &refusingPost{refusals: 1, err: tc.err}
			s := newEventSink(100, 10, time.Hour, time.Second, p.post, zap.NewNop())
			s.add(recordOf(10))
			s.flush(context.Background())
			s.close()
			if s.dropped.Load() != 10 || s.sent.Load() != 0 {
				t.Fatalf("dropped %d, sent %d; want 10, 0", s.dropped.Load(), s.sent.Load())
			}
		})
	}
	p := &refusingPost{refusals: 5, err: &APIError{Status: http.StatusServiceUnavailable}}
	s := newEventSink(100, 10, time.Hour, time.Second, p.post, zap.NewNop())
	s.add(recordOf(5))
	s.close()
	if s.dropped.Load() != 5 || p.calls != 1 {
		t.Fatalf("closing: dropped %d after %d posts; want 5 after 1", s.dropped.Load(), p.calls)
	}
}
