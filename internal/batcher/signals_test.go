package batcher

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSignalsWakeDoesNotWait(t *testing.T) {
	s := NewSignals()
	s.Wake()
	s.Wake() // pending already: must not block
	<-s.Woken()
	select {
	case <-s.Woken():
		t.Fatal("two wake-ups pending; want one")
	default:
	}
}

func TestSignalsFlushGetsTheWritersAnswer(t *testing.T) {
	s := NewSignals()
	errWrite := errors.New("write failed")
	go func() {
		defer s.Exit()
		(<-s.Flushes()) <- errWrite
		<-s.Stopping()
	}()
	if end, err := s.Flush(context.Background()); end != Answered || err != errWrite {
		t.Fatalf("Flush = %v, %v; want Answered, the writer's error", end, err)
	}
	calls := 0
	s.Stop(func() { calls++ })
	s.Stop(func() { calls++ })
	<-s.Done()
	if calls != 1 {
		t.Fatalf("closing ran %d times, want once", calls)
	}
	if end, err := s.Flush(context.Background()); end != Answered || err != nil {
		t.Fatalf("Flush after the writer returned = %v, %v; want Answered, nil", end, err)
	}
}

func TestSignalsFlushHonoursItsContext(t *testing.T) {
	s := NewSignals() // no writer yet: nobody takes the request
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if end, err := s.Flush(ctx); end != NotAsked || !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush with nobody to ask = %v, %v; want NotAsked, canceled", end, err)
	}

	release := make(chan struct{})
	go func() {
		defer s.Exit()
		reply := <-s.Flushes()
		<-release // the write goes on past the caller's deadline
		reply <- nil
	}()
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if end, err := s.Flush(ctx); end != Abandoned || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush of a write that takes too long = %v, %v; want Abandoned, deadline exceeded", end, err)
	}
	close(release)
	<-s.Done()
}
