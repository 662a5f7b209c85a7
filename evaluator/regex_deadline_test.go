package evaluator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// evaluateWithin runs re.Evaluate in a goroutine and waits for it with a deadline far below the
// regex's own timeout: ok is false when the match was still running then.
func evaluateWithin(ctx context.Context, re *Regex, d *Data) (err error, ok bool) {
	done := make(chan error, 1)
	go func() {
		_, err := re.Evaluate(ctx, d)
		done <- err
	}()
	select {
	case err := <-done:
		return err, true
	case <-time.After(4 * time.Second):
		return nil, false
	}
}

// TestRegexMatchStopsAtContextDeadline: a 10 s timeout_ms does not outlive the context's deadline; the
// error is the deadline's, not a timeout of the evaluator.
func TestRegexMatchStopsAtContextDeadline(t *testing.T) {
	re, err := NewRegex(`^(?=(a+)+$)`, false, false, false, MaxTimeout)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err, ok := evaluateWithin(ctx, re, text(strings.Repeat("a", 40)+"c"))
	if !ok {
		t.Fatal("the match ran past its context's deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrMatchTimeout) {
		t.Fatalf("err = %v, want the context deadline", err)
	}
}

// TestRegexConcurrentTimeouts: matches of one pattern under different deadlines at once each get their
// own (the match timeout is per call, not shared state: run with -race).
func TestRegexConcurrentTimeouts(t *testing.T) {
	re, err := NewRegex(`^(?=(a+)+$)|b(?=c)`, false, false, false, MaxTimeout)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(50+10*i)*time.Millisecond)
			defer cancel()
			if _, err := re.Evaluate(ctx, text(strings.Repeat("a", 40)+"c")); !errors.Is(err, context.DeadlineExceeded) {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			if res, err := re.Evaluate(context.Background(), text("xbc")); err != nil || !res.Matched {
				errs <- errors.New("a quick match failed")
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(8 * time.Second):
		t.Fatal("concurrent matches did not stop at their deadlines")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
