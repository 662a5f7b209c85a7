package observability

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// Events reach the recorder two ways, and a full buffer treats them differently:
//
//   - Evaluation-recorded events (Enqueue) must never slow or fail an evaluation: what does not fit is
//     dropped and counted (events_dropped_total{reason="buffer_full"}), as docs/api.md ("Observability") says.
//   - Posted events (Offer, WriteThrough) have a client that still holds them and can send them again:
//     a request whose events do not all fit is refused whole with 503 and Retry-After
//     (events_refused_total), so that a full buffer loses nothing a client could keep. Refusing the whole
//     request keeps retries simple: nothing of it was taken.

// FullError is the error of Offer and WriteThrough when the events do not fit in the buffer (or the
// recorder is closed). RetryAfter is when trying again makes sense: the end of the writer's wait for
// the database when it is failing, one second otherwise.
type FullError struct {
	Events     int
	RetryAfter time.Duration
	Closed     bool
	// TooLarge is set when the events would not fit even in an empty buffer (more estimated bytes than
	// BufferBytes, or more events than BufferSize): trying again cannot help, only smaller requests.
	TooLarge bool
}

func (e *FullError) Error() string {
	if e.TooLarge {
		return fmt.Sprintf("observability buffer too small for the request: %d events refused", e.Events)
	}
	if e.Closed {
		return fmt.Sprintf("observability recorder closed: %d events refused", e.Events)
	}
	return fmt.Sprintf("observability buffer full: %d events refused, retry after %s", e.Events, e.RetryAfter)
}

// sizesOf estimates the bytes of each event and their total, outside any lock.
func sizesOf(events []guard.Event) ([]int64, int64) {
	sizes := make([]int64, len(events))
	var total int64
	for i := range events {
		sizes[i] = eventSize(&events[i])
		total += sizes[i]
	}
	return sizes, total
}

// fitsLocked reports whether n more events of total bytes fit; r.mu is held.
func (r *Recorder) fitsLocked(n int, total int64) bool {
	return !r.closed && r.pending+r.through+n <= r.cfg.BufferSize && r.bytes+r.throughBytes+total <= r.cfg.BufferBytes
}

// refuseLocked counts a refused request and returns its error, logging refusals at most every 10 s;
// r.mu is held.
func (r *Recorder) refuseLocked(n int, total int64) *FullError {
	r.refused += int64(n)
	if logN := r.refuseLog.Add(int64(n), dropLogEvery); logN > 0 {
		r.cfg.Logger.Warn("posted observability events refused with 503: the buffer is full or closed (logged at most every 10s)",
			zap.Int64("refused", logN), zap.Int("pending", r.pending+r.through),
			zap.Int64("pending_bytes", r.bytes+r.throughBytes), zap.Int64("buffer_bytes", r.cfg.BufferBytes))
	}
	return &FullError{Events: n, RetryAfter: r.retryAfter(), Closed: r.closed,
		TooLarge: !r.closed && (n > r.cfg.BufferSize || total > r.cfg.BufferBytes)}
}

// Offer buffers all of events or none of them: when they do not all fit it returns a *FullError and
// buffers nothing. It never blocks on the database. It is for posted events; evaluations use Enqueue.
func (r *Recorder) Offer(events []guard.Event) error {
	if len(events) == 0 {
		return nil
	}
	sizes, total := sizesOf(events)
	r.mu.Lock()
	if !r.fitsLocked(len(events), total) {
		err := r.refuseLocked(len(events), total)
		r.mu.Unlock()
		r.cfg.Metrics.eventsRefusedN(len(events))
		return err
	}
	r.append(events, sizes)
	r.received += int64(len(events))
	full := r.readyLocked()
	held := r.bytes + r.throughBytes
	r.mu.Unlock()

	r.cfg.Metrics.eventsIn(len(events), 0, "")
	r.cfg.Metrics.setBufferBytes(held)
	if full {
		r.sig.Wake()
	}
	return nil
}

// WriteThrough writes events to the store now, in one InsertEvents call (one transaction) bounded by
// WriteTimeout and ctx, and returns once they are committed or the write failed: the durable mode of
// POST /observability/events. While the write runs the events count against the buffer's bounds, so
// that requests waiting on a slow or stuck database cannot hold more memory than the buffer may; a
// request that does not fit gets a *FullError at once. A failed write is not retried here: nothing of it
// was acknowledged, and the client decides.
func (r *Recorder) WriteThrough(ctx context.Context, events []guard.Event) error {
	if len(events) == 0 {
		return nil
	}
	_, total := sizesOf(events)
	r.mu.Lock()
	if !r.fitsLocked(len(events), total) {
		err := r.refuseLocked(len(events), total)
		r.mu.Unlock()
		r.cfg.Metrics.eventsRefusedN(len(events))
		return err
	}
	r.through += len(events)
	r.throughBytes += total
	r.received += int64(len(events))
	held := r.bytes + r.throughBytes
	r.mu.Unlock()
	r.cfg.Metrics.eventsIn(len(events), 0, "")
	r.cfg.Metrics.setBufferBytes(held)

	wctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	err := r.store.InsertEvents(wctx, events)
	cancel()

	r.mu.Lock()
	r.through -= len(events)
	r.throughBytes -= total
	if err == nil {
		r.written += int64(len(events))
	}
	held = r.bytes + r.throughBytes
	r.mu.Unlock()
	r.cfg.Metrics.setBufferBytes(held)
	if err != nil {
		return err
	}
	r.cfg.Metrics.eventsStored(len(events))
	return nil
}

// retryAfter is how long a refused client should wait: until the writer tries the database again when
// it is failing, else one second (the buffer drains at the database's pace).
func (r *Recorder) retryAfter() time.Duration {
	if at := r.retryAtNanos.Load(); at != 0 {
		if d := time.Until(time.Unix(0, at)); d > time.Second {
			return d.Round(time.Second)
		}
	}
	return time.Second
}
