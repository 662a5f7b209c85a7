package observability

import (
	"context"
	"errors"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// bigEvents returns n events whose metadata makes each about 17 KB by the estimate.
func bigEvents(t *testing.T, n int) []guard.Event {
	t.Helper()
	events := mkEvents(0, n)
	for i := range events {
		m, ps := checkMetadata(padded(MaxMetadataBytes), "x")
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		events[i].Metadata = m
	}
	return events
}

func TestRecorderBoundsTheBufferInBytes(t *testing.T) {
	const budget = 1 << 20
	fails := 2
	st := &memStore{block: make(chan struct{}), fail: func(call int) error {
		if call <= fails {
			return errors.New("database away")
		}
		return nil
	}}
	r := NewRecorder(st, RecorderConfig{BufferBytes: budget, BatchSize: 10, RetryAttempts: 1, FlushInterval: time.Hour})
	defer closeRecorder(t, r)
	events := bigEvents(t, 200) // ~3.4 MB by the estimate
	size := eventSize(&events[0])

	enq, dropped := r.Enqueue(events[:100])
	if want := int(budget / size); enq != want || dropped != 100-want {
		t.Fatalf("Enqueue = %d, %d; want %d, %d (the bytes bound the buffer, not the 100,000 events)", enq, dropped, want, 100-want)
	}
	if s := r.Stats(); s.PendingBytes > budget || s.PendingBytes != int64(enq)*size {
		t.Fatalf("pending bytes = %d, want %d", s.PendingBytes, int64(enq)*size)
	}
	var full *FullError
	if err := r.Offer(events[100:101]); !errors.As(err, &full) || full.RetryAfter < time.Second {
		t.Fatalf("Offer into a full buffer = %v, want a *FullError with a Retry-After", err)
	}
	if err := r.WriteThrough(context.Background(), events[100:101]); !errors.As(err, &full) {
		t.Fatalf("WriteThrough into a full buffer = %v, want a *FullError", err)
	}
	if s := r.Stats(); s.Refused != 2 {
		t.Fatalf("refused = %d, want 2", s.Refused)
	}

	// Failed writes go back into the buffer with their bytes; once written, nothing is counted.
	close(st.block)
	for range fails {
		_ = r.Flush(context.Background())
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Pending != 0 || s.PendingBytes != 0 || s.Written != int64(enq) {
		t.Fatalf("stats after the database came back = %+v; want everything written and nothing counted", s)
	}
	if err := r.Offer(events[100:105]); err != nil { // under a batch: it waits for the interval
		t.Fatalf("Offer into an empty buffer: %v", err)
	}
	if err := r.WriteThrough(context.Background(), events[110:120]); err != nil {
		t.Fatalf("WriteThrough: %v", err)
	}
	if s := r.Stats(); s.PendingBytes != 5*size {
		t.Fatalf("pending bytes = %d after a write-through, want %d (only the offered events)", s.PendingBytes, 5*size)
	}
}

// Large events fill the byte bound long before a batch of 500 is full: the writer must start on the
// bytes, not leave a healthy database idle until the flush interval while posts are refused with 503.
func TestRecorderWritesWhenABufferOfLargeEventsHoldsAWritesWorth(t *testing.T) {
	const budget = 1 << 20
	st := &memStore{}
	r := NewRecorder(st, RecorderConfig{BufferBytes: budget, FlushInterval: time.Hour})
	defer closeRecorder(t, r)
	events := bigEvents(t, 200)
	size := eventSize(&events[0])
	n := int(budget/8/size) + 1 // just past an eighth of the buffer, far under a batch
	if n >= DefaultBatchSize {
		t.Fatalf("the test needs events larger than %d bytes", budget/8/DefaultBatchSize)
	}
	if err := r.Offer(events[:n]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a write started by the buffered bytes, not the flush interval", func() bool { return r.Stats().Written > 0 })
	// What was written frees its room: the buffer takes as much again, several times, without a 503.
	for i := range 4 {
		batch := events[n*(i+1) : n*(i+2)]
		waitFor(t, "room for the next request", func() bool { return r.Offer(batch) == nil })
	}
	waitFor(t, "every offered event written", func() bool { return r.Stats().Written == int64(5*n) })
}
