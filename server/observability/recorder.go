package observability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/batcher"
)

// Defaults of RecorderConfig.
const (
	DefaultBufferSize    = 100000
	DefaultBufferBytes   = 64 << 20
	DefaultBatchSize     = 500
	DefaultWriteBatches  = 10
	DefaultFlushInterval = 10 * time.Second
	DefaultRetryAttempts = 3
	DefaultRetryBackoff  = 100 * time.Millisecond
	DefaultWriteTimeout  = 30 * time.Second
	DefaultWriterShare   = 0.5
	// DefaultEvaluationWriterShare is RecorderConfig.EvaluationWriterShare's default.
	DefaultEvaluationWriterShare = 0.2
	maxRetryBackoffFactor        = 8
	dropLogEvery                 = 10 * time.Second
	// After a batch failed every attempt, the writer leaves the database alone for outageBackoff (doubled
	// on each further failure, at most maxOutageBackoff) before the next write not asked for by Flush or
	// Close.
	outageBackoff    = time.Second
	maxOutageBackoff = 30 * time.Second
)

// RecorderConfig configures a Recorder; zero fields take the defaults.
type RecorderConfig struct {
	BufferSize int // events held in memory at most, written or not yet; default 100000
	// BufferBytes bounds the heap those events hold, as estimated by eventSize (OBSERVABILITY_BUFFER_BYTES;
	// default 64 MiB). The buffer is full when either bound is reached.
	BufferBytes int64
	BatchSize   int // events that make a batch: a full batch is written at once; default 500
	// MaxWriteSize bounds the events of one InsertEvents call (default 10 batches): when the database
	// falls behind, the full batches waiting are written together, in one transaction.
	MaxWriteSize  int
	FlushInterval time.Duration // OBSERVABILITY_FLUSH_INTERVAL_SECONDS; default 10s
	// RetryAttempts is how many times a batch is tried in a row before it goes back into the buffer to wait
	// for the database (at Close: before its events are given up) (default 3);
	// RetryBackoff the wait before the first retry, doubled after each (default 100ms).
	RetryAttempts int
	RetryBackoff  time.Duration
	// WriteTimeout bounds one InsertEvents call (default 30s).
	WriteTimeout time.Duration
	// WriterShare is, while the database falls behind (more than half the buffer pending), the share of
	// one core the writer may keep busy: after each write it pauses for the write's duration times
	// (1/WriterShare - 1), leaving the rest to evaluations; the buffer absorbs the difference and drops what
	// does not fit, as it would anyway. Default 0.5; 1 (or more) writes flat out.
	WriterShare float64
	// EvaluationWriterShare is, while evaluations record events (Enqueue was called since the previous
	// write), the share of one core the writer may keep busy whatever the buffer holds (WriterShare when
	// that is lower): the events then compete for the CPU with the evaluations that make them. Each write
	// then takes one batch only, so that the writer never holds a core for long. Default 0.2.
	EvaluationWriterShare float64
	Metrics               *Metrics
	Logger                *zap.Logger
}

func (c *RecorderConfig) defaults() {
	if c.BufferSize <= 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.BufferBytes <= 0 {
		c.BufferBytes = DefaultBufferBytes
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.BatchSize > c.BufferSize {
		c.BatchSize = c.BufferSize
	}
	if c.MaxWriteSize < c.BatchSize {
		c.MaxWriteSize = DefaultWriteBatches * c.BatchSize
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.RetryAttempts <= 0 {
		c.RetryAttempts = DefaultRetryAttempts
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.WriterShare <= 0 {
		c.WriterShare = DefaultWriterShare
	}
	if c.EvaluationWriterShare <= 0 {
		c.EvaluationWriterShare = DefaultEvaluationWriterShare
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// RecorderStats are the recorder's counters since it started.
type RecorderStats struct {
	Pending int // events buffered or being written now
	// PendingBytes is the estimated heap of Pending events, plus that of posted events being written
	// through (durable mode).
	PendingBytes int64
	Refused      int64 // posted events refused whole because they did not fit (503)
	Received     int64 // events offered to Enqueue
	Dropped      int64 // events refused by Enqueue (buffer full or closed)
	Written      int64 // events the store accepted
	Lost         int64 // events given up: still failing when the recorder closed
}

// Recorder buffers events in memory and writes them to the store in batches from one goroutine: every
// FlushInterval, as soon as a batch is full or an eighth of BufferBytes is buffered, on Flush and on Close. Enqueue never waits on the database:
// when BufferSize events, or BufferBytes of estimated heap, are pending (buffered or being written),
// further events are dropped and counted; Offer refuses them instead (see recorder_admit.go). A batch whose write fails is retried RetryAttempts times with exponential backoff; if it still
// fails (the database is away), it goes back to the head of the buffer and is written when the database
// answers again: an outage costs no accepted event as long as the buffer has room, and new events are
// dropped (and counted) once it is full. Only at Close are events that still cannot be written given up:
// counted (events_dropped_total{reason="write_error"}) and logged.
type Recorder struct {
	store guard.EventStore
	cfg   RecorderConfig

	mu      sync.Mutex
	queue   batcher.Queue[guard.Event] // FIFO in chunks of BatchSize events
	pending int                        // events in queue plus the batch being written
	bytes   int64                      // estimated bytes of pending events
	// events and bytes of posted events being written through (WriteThrough): they count against the
	// bounds but are not in chunks.
	through      int
	throughBytes int64
	refused      int64
	closed       bool
	// enqueues counts Enqueue calls (evaluations recording events); the writer compares it with
	// seenEnqueues, the count at its previous write, to know whether evaluations are running.
	enqueues     int64
	seenEnqueues int64
	received     int64
	dropped      int64
	written      int64
	lost         int64
	// drops, and refusals of posted events, not logged yet: a full buffer under load must not flood the
	// log.
	dropLog   batcher.DropLog
	refuseLog batcher.DropLog

	// owned by the writer goroutine: while evaluations record events, writes take one batch (see
	// overloadPause).
	oneBatch bool
	// owned by the writer goroutine: while the database is failing, writes wait until retryAt unless a
	// Flush or Close asks for them.
	retryAt   time.Time
	retryWait time.Duration
	// retryAtNanos mirrors retryAt (Unix nanoseconds, 0 when the database answers) for the Retry-After
	// of refused requests, computed on request goroutines.
	retryAtNanos atomic.Int64

	sig    *batcher.Signals // wake-ups (a batch is ready), Flush, Close
	life   context.Context  // cancelled when Close gives up waiting: aborts writes and backoffs
	cancel context.CancelFunc
}

// NewRecorder starts a recorder writing to store; Close stops it.
func NewRecorder(store guard.EventStore, cfg RecorderConfig) *Recorder {
	cfg.defaults()
	life, cancel := context.WithCancel(context.Background())
	r := &Recorder{
		store:  store,
		cfg:    cfg,
		queue:  batcher.NewQueue[guard.Event](cfg.BatchSize),
		sig:    batcher.NewSignals(),
		life:   life,
		cancel: cancel,
	}
	go r.run()
	return r
}

// Enqueue buffers as many of events as there is room for, in order, and drops the rest; it returns how
// many were buffered and how many dropped. It never blocks on the database. Events enqueued before a
// Flush or Close are written by it (or counted lost if the store keeps failing).
func (r *Recorder) Enqueue(events []guard.Event) (enqueued, dropped int) {
	if len(events) == 0 {
		return 0, 0
	}
	// Measured before taking the lock (metadata can be large), on the stack for an evaluation's events.
	var small [64]int64
	sizes := small[:0]
	if len(events) > len(small) {
		sizes = make([]int64, 0, len(events))
	}
	for i := range events {
		sizes = append(sizes, eventSize(&events[i]))
	}
	r.mu.Lock()
	reason := DropBufferFull
	if r.closed {
		reason = DropClosed
	} else {
		enqueued = min(len(events), r.cfg.BufferSize-r.pending-r.through)
		room := r.cfg.BufferBytes - r.bytes - r.throughBytes
		var total int64
		for i := range enqueued {
			if total+sizes[i] > room {
				enqueued = i
				break
			}
			total += sizes[i]
		}
		r.append(events[:enqueued], sizes[:enqueued])
	}
	dropped = len(events) - enqueued
	r.enqueues++
	r.received += int64(len(events))
	r.dropped += int64(dropped)
	full := r.readyLocked()
	held := r.bytes + r.throughBytes
	var logDrops int64
	if dropped > 0 {
		logDrops = r.dropLog.Add(int64(dropped), dropLogEvery)
	}
	r.mu.Unlock()

	r.cfg.Metrics.eventsIn(len(events), dropped, reason)
	r.cfg.Metrics.setBufferBytes(held)
	if logDrops > 0 {
		r.cfg.Logger.Warn("observability events dropped: the buffer is full or closed (logged at most every 10s)",
			zap.Int64("dropped", logDrops), zap.String("reason", reason), zap.Int("buffer_size", r.cfg.BufferSize),
			zap.Int64("buffer_bytes", r.cfg.BufferBytes))
	}
	if full {
		r.sig.Wake()
	}
	return enqueued, dropped
}

// append copies events, of the given estimated sizes, into the queue; r.mu is held.
func (r *Recorder) append(events []guard.Event, sizes []int64) {
	r.pending += len(events)
	r.bytes += r.queue.Append(events, sizes)
}

// Flush writes every event buffered when it is called and returns once they are written, or an error
// naming how many were lost. Events enqueued while it runs may be written too.
func (r *Recorder) Flush(ctx context.Context) error {
	end, err := r.sig.Flush(ctx) // nil when closed: Close wrote everything
	switch end {
	case batcher.NotAsked:
		return fmt.Errorf("observability flush: %w", err)
	case batcher.Abandoned:
		return fmt.Errorf("observability flush: %w (the write goes on in the background)", err)
	}
	return err
}

// Close refuses further events (they are dropped with reason "closed"), writes everything buffered and
// stops the writer goroutine. If ctx ends first, the writes in progress are cancelled and the events not
// yet written are counted lost. Close returns an error when events were lost during the recorder's life
// (write failures included), saying how many. Calling it again is harmless.
func (r *Recorder) Close(ctx context.Context) error {
	r.sig.Stop(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
	})
	select {
	case <-r.sig.Done():
	case <-ctx.Done():
		r.cancel()
		<-r.sig.Done()
	}
	r.cancel()
	r.mu.Lock()
	lost := r.lost
	r.mu.Unlock()
	if lost > 0 {
		return fmt.Errorf("observability recorder: %d events could not be written", lost)
	}
	return nil
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() RecorderStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RecorderStats{Pending: r.pending, PendingBytes: r.bytes + r.throughBytes, Refused: r.refused,
		Received: r.received, Dropped: r.dropped, Written: r.written, Lost: r.lost}
}

func (r *Recorder) run() {
	defer r.sig.Exit()
	ticker := time.NewTicker(r.cfg.FlushInterval)
	defer ticker.Stop()
	for {
		select {
		case <-r.sig.Stopping():
			_ = r.writeAll(true)
			return
		case <-ticker.C:
			if r.databaseBack() {
				_ = r.writeAll(false)
			}
		case <-r.sig.Woken():
			if r.databaseBack() {
				r.writeFull()
			}
		case reply := <-r.sig.Flushes():
			reply <- r.writeAll(false)
		}
	}
}

// next takes the oldest batches out of the buffer, at most maxChunks of them, MaxWriteSize events and
// an eighth of BufferBytes in all (one batch at least): only full ones, or partial ones too when partial
// is set or the buffer holds that eighth (readyLocked). Several batches go in one write when the database falls behind, so that one transaction
// carries more events; the byte bound keeps the copies a write makes (SQL arguments, the driver's
// message) small beside the buffer. It returns the batch, its estimated bytes and how many chunks it
// took, or nil when there is none.
func (r *Recorder) next(partial bool, maxChunks int) ([]guard.Event, int64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queue.Take(partial || r.bytes >= r.writeBytes(), maxChunks, r.cfg.MaxWriteSize, r.writeBytes())
}

// writeBytes is the most estimated bytes one write carries beyond its first batch (see next), and the
// buffered bytes at which the writer starts a write without waiting for a full batch or the interval.
func (r *Recorder) writeBytes() int64 { return r.cfg.BufferBytes / 8 }

// readyLocked reports whether a write should start now: a batch is full, or the buffered events hold a
// write's worth of bytes. The byte test matters for large events: under the default 64 MiB a full batch
// of 500 events with the largest metadata allowed (about 190 KB each) is past the byte bound, so without
// it a buffer full of large events would wait for the flush interval, refusing posts with 503 while the
// database is idle. r.mu is held.
func (r *Recorder) readyLocked() bool {
	return r.queue.FullBatch() || r.queue.Chunks() > 0 && r.bytes >= r.writeBytes()
}

// databaseBack reports whether the writer may try the database again after a failed write.
func (r *Recorder) databaseBack() bool { return r.retryAt.IsZero() || !time.Now().Before(r.retryAt) }

// writeFull writes the full batches, stopping at the first one that cannot be written.
// Under overload it yields the core between writes (see RecorderConfig.WriterShare and
// EvaluationWriterShare).
func (r *Recorder) writeFull() {
	for {
		chunks := math.MaxInt
		if r.oneBatch {
			chunks = 1
		}
		batch, bytes, _ := r.next(false, chunks)
		if batch == nil {
			return
		}
		start := time.Now()
		if r.write(batch, bytes, false) != nil {
			return
		}
		if pause := r.overloadPause(time.Since(start)); pause > 0 {
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-r.sig.Stopping():
				t.Stop()
				return
			}
		}
	}
}

// overloadPause is how long the writer rests after a write that took took. While evaluations record
// events (Enqueue since the previous call) the writer keeps at most EvaluationWriterShare of a core (or
// WriterShare when lower), whatever the buffer holds: those events compete for the CPU with the
// evaluations that make them, and the buffer absorbs bursts. Otherwise it rests only while more than
// half the buffer is pending, keeping WriterShare. While evaluations record events, the next writes also
// take one batch each: a shorter write holds a core for less time, which keeps the evaluations' tail
// latency down.
func (r *Recorder) overloadPause(took time.Duration) time.Duration {
	r.mu.Lock()
	overloaded := r.pending > r.cfg.BufferSize/2 || r.bytes > r.cfg.BufferBytes/2
	evaluating := r.enqueues != r.seenEnqueues
	r.seenEnqueues = r.enqueues
	r.mu.Unlock()
	r.oneBatch = evaluating
	share := r.cfg.WriterShare
	switch {
	case evaluating:
		share = min(share, r.cfg.EvaluationWriterShare)
	case !overloaded:
		return 0
	}
	if share >= 1 {
		return 0
	}
	return time.Duration(float64(took) * (1/share - 1))
}

// writeAll writes every batch buffered when it starts (a flood of new events cannot keep it busy
// forever). Before the end (final false) it stops at the first batch that cannot be written, which goes
// back into the buffer, and returns that error; at Close (final true) it tries every batch and gives up
// those that fail, returning their errors.
func (r *Recorder) writeAll(final bool) error {
	r.mu.Lock()
	n := r.queue.Chunks()
	r.mu.Unlock()
	var errs []error
	for n > 0 {
		batch, bytes, k := r.next(true, n)
		if batch == nil {
			break
		}
		n -= k
		if err := r.write(batch, bytes, final); err != nil {
			errs = append(errs, err)
			if !final {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// requeue puts a batch that could not be written back at the head of the buffer, in BatchSize chunks,
// so that it is written first when the database answers again. Its events never left pending; its
// bytes are counted in its first chunk (what matters is that the chunks add up to the batch).
func (r *Recorder) requeue(batch []guard.Event, bytes int64) {
	r.mu.Lock()
	r.queue.Requeue(batch, bytes)
	r.mu.Unlock()
}

// write stores one batch, retrying with backoff. When every attempt fails, the batch goes back into the
// buffer (final false: the database is away, try again later) or is given up and counted lost (final
// true: the recorder is closing).
func (r *Recorder) write(batch []guard.Event, bytes int64, final bool) error {
	var err error
	backoff := r.cfg.RetryBackoff
	for attempt := 1; attempt <= r.cfg.RetryAttempts; attempt++ {
		ctx, cancel := context.WithTimeout(r.life, r.cfg.WriteTimeout)
		err = r.store.InsertEvents(ctx, batch)
		cancel()
		if err == nil {
			r.mu.Lock()
			r.pending -= len(batch)
			r.bytes -= bytes
			r.written += int64(len(batch))
			held := r.bytes + r.throughBytes
			r.mu.Unlock()
			r.cfg.Metrics.setBufferBytes(held)
			r.cfg.Metrics.eventsStored(len(batch))
			if !r.retryAt.IsZero() {
				r.cfg.Logger.Info("observability events are being written again")
				r.retryAt, r.retryWait = time.Time{}, 0
				r.retryAtNanos.Store(0)
			}
			return nil
		}
		if attempt == r.cfg.RetryAttempts || r.life.Err() != nil {
			break
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-r.life.Done():
			t.Stop()
		}
		backoff = min(backoff*2, r.cfg.RetryBackoff*maxRetryBackoffFactor)
	}
	if !final && r.life.Err() == nil {
		r.requeue(batch, bytes)
		if r.retryAt.IsZero() {
			r.cfg.Logger.Error("observability events cannot be written; they stay buffered and are retried",
				zap.Int("events", len(batch)), zap.Int("attempts", r.cfg.RetryAttempts), zap.Error(err))
		}
		r.retryWait = min(max(2*r.retryWait, outageBackoff), maxOutageBackoff)
		r.retryAt = time.Now().Add(r.retryWait)
		r.retryAtNanos.Store(r.retryAt.UnixNano())
		return fmt.Errorf("%d events not written yet (kept for a later attempt): %w", len(batch), err)
	}
	r.mu.Lock()
	r.pending -= len(batch)
	r.bytes -= bytes
	r.lost += int64(len(batch))
	held := r.bytes + r.throughBytes
	r.mu.Unlock()
	r.cfg.Metrics.setBufferBytes(held)
	r.cfg.Metrics.eventsLost(len(batch))
	r.cfg.Logger.Error("observability events lost: the batch could not be written", zap.Int("events", len(batch)),
		zap.Int("attempts", r.cfg.RetryAttempts), zap.Error(err))
	return fmt.Errorf("%d events lost: %w", len(batch), err)
}
