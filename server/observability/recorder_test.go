package observability

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/batcher"
)

func closeRecorder(t *testing.T, r *Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestRecorderWritesFullBatchesWithoutWaitingForTheInterval(t *testing.T) {
	st := &memStore{}
	r := NewRecorder(st, RecorderConfig{BatchSize: 10, MaxWriteSize: 10, FlushInterval: time.Hour})
	defer closeRecorder(t, r)

	if enq, dropped := r.Enqueue(mkEvents(0, 25)); enq != 25 || dropped != 0 {
		t.Fatalf("Enqueue = %d, %d; want 25, 0", enq, dropped)
	}
	waitFor(t, "two full batches", func() bool { return st.count() == 20 })
	if got := r.Stats().Pending; got != 5 {
		t.Fatalf("pending = %d, want 5 (the partial batch waits for the interval)", got)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := st.batchSizes(); !slices.Equal(got, []int{10, 10, 5}) {
		t.Fatalf("batches = %v, want [10 10 5]", got)
	}
	s := r.Stats()
	if s.Written != 25 || s.Pending != 0 || s.Received != 25 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestRecorderWritesWaitingBatchesTogether: full batches waiting behind a slow write are written together,
// up to MaxWriteSize, except while evaluations record events (Enqueue since the previous write): then a
// write takes one batch, so that the writer never holds a core for long.
func TestRecorderWritesWaitingBatchesTogether(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(r *Recorder, events []guard.Event)
		want []int
	}{
		{"posted events", func(r *Recorder, events []guard.Event) { _ = r.Offer(events) }, []int{10, 30, 20, 5}},
		// The first write after the evaluations' events takes one batch; with no evaluation since, the
		// writes coalesce again.
		{"evaluation events", func(r *Recorder, events []guard.Event) { r.Enqueue(events) }, []int{10, 10, 30, 10, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{block: make(chan struct{})}
			r := NewRecorder(st, RecorderConfig{BatchSize: 10, MaxWriteSize: 30, FlushInterval: time.Hour})
			tc.add(r, mkEvents(0, 10))
			waitFor(t, "the first write to start", func() bool { st.mu.Lock(); defer st.mu.Unlock(); return st.calls == 1 })
			tc.add(r, mkEvents(10, 55)) // five full batches and a partial one wait behind the stuck write
			close(st.block)
			waitFor(t, "the full batches", func() bool { return st.count() == 60 })
			closeRecorder(t, r)
			if got := st.batchSizes(); !slices.Equal(got, tc.want) {
				t.Fatalf("writes = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRecorderFlushesOnTheInterval(t *testing.T) {
	st := &memStore{}
	r := NewRecorder(st, RecorderConfig{BatchSize: 100, FlushInterval: 10 * time.Millisecond})
	defer closeRecorder(t, r)
	r.Enqueue(mkEvents(0, 3))
	waitFor(t, "the interval flush", func() bool { return st.count() == 3 })
}

func TestRecorderKeepsOrder(t *testing.T) {
	st := &memStore{}
	r := NewRecorder(st, RecorderConfig{BatchSize: 7, FlushInterval: time.Hour})
	in := mkEvents(0, 50)
	for i := 0; i < len(in); i += 6 {
		r.Enqueue(in[i:min(i+6, len(in))])
	}
	closeRecorder(t, r)
	if st.count() != 50 {
		t.Fatalf("stored %d, want 50", st.count())
	}
	for i, e := range st.events {
		if e.ControlExecutionID != in[i].ControlExecutionID {
			t.Fatalf("event %d out of order", i)
		}
	}
}

func TestRecorderDropsWhenFullAndLosesNothingItAccepted(t *testing.T) {
	st := &memStore{block: make(chan struct{})}
	m := mustMetrics(t)
	r := NewRecorder(st, RecorderConfig{BufferSize: 100, BatchSize: 10, FlushInterval: time.Hour, Metrics: m})

	accepted, dropped := 0, 0
	for i := 0; i < 30; i++ { // 300 events into a buffer of 100 while the database is stuck
		e, d := r.Enqueue(mkEvents(i*10, 10))
		accepted += e
		dropped += d
	}
	if accepted != 100 || dropped != 200 {
		t.Fatalf("accepted %d dropped %d; want 100 and 200 (the batch being written counts against the buffer)", accepted, dropped)
	}
	close(st.block)
	closeRecorder(t, r)
	if st.count() != accepted {
		t.Fatalf("stored %d, want every accepted event (%d)", st.count(), accepted)
	}
	fams := scrape(t, m)
	if v := counterValue(t, fams, "guard_events_dropped_total", map[string]string{"reason": DropBufferFull}); v != 200 {
		t.Fatalf("events_dropped_total{buffer_full} = %v, want 200", v)
	}
	if v := counterValue(t, fams, "guard_events_received_total", nil); v != 300 {
		t.Fatalf("events_received_total = %v, want 300", v)
	}
	if v := counterValue(t, fams, "guard_events_written_total", nil); v != 100 {
		t.Fatalf("events_written_total = %v, want 100", v)
	}
}

func TestRecorderRetriesFailedWrites(t *testing.T) {
	st := &memStore{fail: func(call int) error {
		if call <= 2 {
			return errWrite
		}
		return nil
	}}
	r := NewRecorder(st, RecorderConfig{BatchSize: 10, FlushInterval: time.Hour, RetryAttempts: 3, RetryBackoff: time.Millisecond})
	defer closeRecorder(t, r)
	r.Enqueue(mkEvents(0, 5))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush after two failures and a success: %v", err)
	}
	if st.count() != 5 || r.Stats().Lost != 0 {
		t.Fatalf("stored %d lost %d; want 5, 0", st.count(), r.Stats().Lost)
	}
}

// TestRecorderKeepsFailedBatchesUntilTheDatabaseAnswers: a batch that fails every attempt is not lost:
// it stays buffered (and counts against the buffer) and is written, in order, once the store works.
func TestRecorderKeepsFailedBatchesUntilTheDatabaseAnswers(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	st := &memStore{fail: func(int) error {
		if down.Load() {
			return errWrite
		}
		return nil
	}}
	m := mustMetrics(t)
	r := NewRecorder(st, RecorderConfig{BufferSize: 20, BatchSize: 10, FlushInterval: time.Hour, RetryAttempts: 2,
		RetryBackoff: time.Millisecond, Metrics: m})
	defer closeRecorder(t, r)
	r.Enqueue(mkEvents(0, 15))
	err := r.Flush(context.Background())
	if err == nil || !errors.Is(err, errWrite) || !strings.Contains(err.Error(), "not written yet") {
		t.Fatalf("Flush error = %v, want the batch reported as kept", err)
	}
	if s := r.Stats(); s.Lost != 0 || s.Pending != 15 {
		t.Fatalf("stats = %+v; want nothing lost, 15 pending", s)
	}
	// The failed events still take room: only 5 more fit in the buffer of 20.
	if enq, dropped := r.Enqueue(mkEvents(15, 10)); enq != 5 || dropped != 5 {
		t.Fatalf("Enqueue during the outage = %d, %d; want 5, 5", enq, dropped)
	}
	// While the database is away, a filled batch does not make the writer hammer it.
	calls := st.callCount()
	r.Enqueue(nil)
	r.sig.Wake()
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("Flush succeeded while the store fails")
	}
	if got := st.callCount() - calls; got > 2 {
		t.Fatalf("%d store calls for one Flush during the outage; want at most RetryAttempts (2)", got)
	}
	down.Store(false)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush after the database came back: %v", err)
	}
	if st.count() != 20 {
		t.Fatalf("stored %d, want the 20 accepted events", st.count())
	}
	if s := r.Stats(); s.Lost != 0 || s.Pending != 0 || s.Written != 20 {
		t.Fatalf("stats = %+v; want 20 written, nothing lost or pending", s)
	}
	if v := counterValue(t, scrape(t, m), "guard_events_dropped_total", map[string]string{"reason": DropWriteError}); v != 0 {
		t.Fatalf("events_dropped_total{write_error} = %v, want 0", v)
	}
}

// TestRecorderGivesUpAtClose: events that still cannot be written when the recorder closes are counted
// lost, reported by Close and in the metric.
func TestRecorderGivesUpAtClose(t *testing.T) {
	st := &memStore{fail: func(int) error { return errWrite }}
	m := mustMetrics(t)
	r := NewRecorder(st, RecorderConfig{BatchSize: 10, FlushInterval: time.Hour, RetryAttempts: 2,
		RetryBackoff: time.Millisecond, Metrics: m})
	r.Enqueue(mkEvents(0, 15))
	_ = r.Flush(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Close(ctx); err == nil || !strings.Contains(err.Error(), "15 events") {
		t.Fatalf("Close error = %v, want the loss reported", err)
	}
	if s := r.Stats(); s.Lost != 15 || s.Pending != 0 {
		t.Fatalf("stats = %+v; want 15 lost, nothing pending", s)
	}
	if v := counterValue(t, scrape(t, m), "guard_events_dropped_total", map[string]string{"reason": DropWriteError}); v != 15 {
		t.Fatalf("events_dropped_total{write_error} = %v, want 15", v)
	}
}

func TestRecorderCloseDrainsAndRefusesLaterEvents(t *testing.T) {
	st := &memStore{}
	m := mustMetrics(t)
	r := NewRecorder(st, RecorderConfig{BatchSize: 10, FlushInterval: time.Hour, Metrics: m})
	r.Enqueue(mkEvents(0, 23))
	closeRecorder(t, r)
	if st.count() != 23 {
		t.Fatalf("stored %d after Close, want 23", st.count())
	}
	if enq, dropped := r.Enqueue(mkEvents(0, 4)); enq != 0 || dropped != 4 {
		t.Fatalf("Enqueue after Close = %d, %d; want 0, 4", enq, dropped)
	}
	if v := counterValue(t, scrape(t, m), "guard_events_dropped_total", map[string]string{"reason": DropClosed}); v != 4 {
		t.Fatalf("events_dropped_total{closed} = %v, want 4", v)
	}
	closeRecorder(t, r) // twice is fine
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush after Close: %v", err)
	}
}

func TestRecorderCloseGivesUpWhenTheContextEnds(t *testing.T) {
	st := &memStore{block: make(chan struct{})}
	r := NewRecorder(st, RecorderConfig{BatchSize: 10, FlushInterval: time.Hour})
	r.Enqueue(mkEvents(0, 30))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := r.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "30 events") {
		t.Fatalf("Close = %v, want 30 events reported lost", err)
	}
}

func TestRecorderFlushHonoursItsContext(t *testing.T) {
	st := &memStore{block: make(chan struct{})}
	r := NewRecorder(st, RecorderConfig{BatchSize: 10, FlushInterval: time.Hour})
	r.Enqueue(mkEvents(0, 3))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := r.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush = %v, want the deadline", err)
	}
	close(st.block)
	closeRecorder(t, r)
	if st.count() != 3 {
		t.Fatalf("stored %d, want 3", st.count())
	}
}

// TestRecorderYieldsTheCoreUnderOverload: after each write the writer rests for the write's duration times
// (1/share - 1). While evaluations record events (Enqueue since the previous write) share is
// EvaluationWriterShare (WriterShare when lower), whatever the buffer holds, and writes take one batch
// each; otherwise it rests only while more than half the buffer is pending, with WriterShare. A share of
// 1 never rests.
func TestRecorderYieldsTheCoreUnderOverload(t *testing.T) {
	offer := func(r *Recorder, from, n int) { _ = r.Offer(mkEvents(from, n)) }
	enqueue := func(r *Recorder, from, n int) { r.Enqueue(mkEvents(from, n)) }
	for _, tc := range []struct {
		name             string
		share, evalShare float64
		fill             func(r *Recorder, from, n int) // adds n events to the buffer of 100
		wantHalf         time.Duration                  // pause after a 10 ms write, 50 events pending
		wantOver         time.Duration                  // the same, 51 pending
		wantOneBatch     bool
		wantNext         time.Duration // after another 10 ms write with no event added in between
	}{
		{"posted events: WriterShare under overload", 0.25, 0.2, offer, 0, 30 * time.Millisecond, false, 30 * time.Millisecond},
		{"evaluations: EvaluationWriterShare always", 0.25, 0.2, enqueue, 40 * time.Millisecond, 40 * time.Millisecond, true, 30 * time.Millisecond},
		{"evaluations: WriterShare when lower", 0.1, 0.2, enqueue, 90 * time.Millisecond, 90 * time.Millisecond, true, 90 * time.Millisecond},
		{"share 1 never rests", 1, 1, enqueue, 0, 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No writer goroutine: the test plays the writer (overloadPause and oneBatch are its own).
			cfg := RecorderConfig{BufferSize: 100, BatchSize: 10, FlushInterval: time.Hour,
				WriterShare: tc.share, EvaluationWriterShare: tc.evalShare}
			cfg.defaults()
			r := &Recorder{store: &memStore{}, cfg: cfg, queue: batcher.NewQueue[guard.Event](cfg.BatchSize), sig: batcher.NewSignals()}
			if p := r.overloadPause(10 * time.Millisecond); p != 0 || r.oneBatch {
				t.Fatalf("nothing added: pause %v, one batch %v; want 0, false", p, r.oneBatch)
			}
			tc.fill(r, 0, 50)
			if p := r.overloadPause(10 * time.Millisecond); p != tc.wantHalf || r.oneBatch != tc.wantOneBatch {
				t.Fatalf("half the buffer pending: pause %v, one batch %v; want %v, %v", p, r.oneBatch, tc.wantHalf, tc.wantOneBatch)
			}
			tc.fill(r, 50, 1)
			if p := r.overloadPause(10 * time.Millisecond); p != tc.wantOver || r.oneBatch != tc.wantOneBatch {
				t.Fatalf("over half full: pause %v, one batch %v; want %v, %v", p, r.oneBatch, tc.wantOver, tc.wantOneBatch)
			}
			if p := r.overloadPause(10 * time.Millisecond); p != tc.wantNext || r.oneBatch {
				t.Fatalf("nothing added since: pause %v, one batch %v; want %v, false", p, r.oneBatch, tc.wantNext)
			}
		})
	}
}
