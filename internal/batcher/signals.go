package batcher

import (
	"context"
	"sync"
)

// Signals connects a recorder with its writer goroutine: wake-ups when a batch is ready, Flush requests
// and their answers, the stop asked by Close and the end of the goroutine. The goroutine's loop stays
// with the recorder (what it does on each signal differs); it selects on Woken, Flushes and Stopping
// and defers Exit. Make one with NewSignals.
type Signals struct {
	wake    chan struct{}   // a batch is ready (capacity 1: one pending wake-up is enough)
	flushes chan chan error // Flush requests
	stop    chan struct{}   // closed by Stop
	done    chan struct{}   // closed by Exit, when the writer goroutine returns
	once    sync.Once
}

// NewSignals returns the signals of a writer goroutine not started yet.
func NewSignals() *Signals {
	return &Signals{
		wake:    make(chan struct{}, 1),
		flushes: make(chan chan error),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// Wake tells the writer a batch is ready, without waiting.
func (s *Signals) Wake() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Woken receives after Wake.
func (s *Signals) Woken() <-chan struct{} { return s.wake }

// Flushes receives Flush requests; the writer sends its answer on the channel received (it has room
// for one).
func (s *Signals) Flushes() <-chan chan error { return s.flushes }

// Stopping is closed by Stop.
func (s *Signals) Stopping() <-chan struct{} { return s.stop }

// Exit closes Done; the writer goroutine defers it.
func (s *Signals) Exit() { close(s.done) }

// Done is closed when the writer goroutine has returned.
func (s *Signals) Done() <-chan struct{} { return s.done }

// Stop runs closing (which marks the recorder closed, so that it refuses further items) and then
// closes Stopping, the first time only: calling it again does nothing.
func (s *Signals) Stop(closing func()) {
	s.once.Do(func() {
		closing()
		close(s.stop)
	})
}

// FlushEnd says how a Flush ended.
type FlushEnd int

// How a Flush ended.
const (
	// Answered: the error is the writer's answer; nil too when the writer had already returned (Close
	// wrote everything).
	Answered FlushEnd = iota
	// NotAsked: ctx ended before the writer took the request; the error is ctx's.
	NotAsked
	// Abandoned: ctx ended while the writer was writing, which goes on in the background; the error
	// is ctx's.
	Abandoned
)

// Flush asks the writer to write what is buffered and waits for its answer or the end of ctx.
func (s *Signals) Flush(ctx context.Context) (FlushEnd, error) {
	reply := make(chan error, 1)
	select {
	case s.flushes <- reply:
	case <-s.done:
		return Answered, nil
	case <-ctx.Done():
		return NotAsked, ctx.Err()
	}
	select {
	case err := <-reply:
		return Answered, err
	case <-ctx.Done():
		return Abandoned, ctx.Err()
	}
}
