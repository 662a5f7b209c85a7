// Package retry is the retry loop the external evaluators (ext.toxicity, ext.prompt_injection) share:
// jittered exponential backoff, an answer's Retry-After honoured, and no wait the evaluation's deadline
// could not outlast.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is how often and how patiently to retry.
type Policy struct {
	MaxRetries int           // retries after the first attempt
	Base       time.Duration // delay before the first retry, doubled per retry
	Cap        time.Duration // bound of one computed delay (before jitter)
}

// Stop says why Do stopped.
type Stop int

const (
	// Succeeded: the last attempt succeeded.
	Succeeded Stop = iota
	// Failed: the last attempt failed for good (not retryable, or the retries are spent).
	Failed
	// NoTimeLeft: the last attempt failed, and ctx's deadline would pass during the next wait.
	NoTimeLeft
	// Interrupted: ctx ended during a wait.
	Interrupted
)

// Outcome is what one attempt reports: ok, or whether it may be retried and after how long at least
// (After > 0: the service's Retry-After, used instead of the backoff).
type Outcome struct {
	OK        bool
	Retryable bool
	After     time.Duration
}

// Do calls attempt until it succeeds, fails for good, the retries are spent, or ctx's deadline leaves no
// time for the next wait; it returns the number of attempts made and why it stopped. The attempt keeps
// its own result and error: Do only decides whether to call it again.
func (p Policy) Do(ctx context.Context, attempt func() Outcome) (int, Stop) {
	for n := 1; ; n++ {
		o := attempt()
		switch {
		case o.OK:
			return n, Succeeded
		case !o.Retryable || n > p.MaxRetries:
			return n, Failed
		}
		wait := p.Backoff(n)
		if o.After > 0 {
			wait = o.After
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return n, NoTimeLeft
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return n, Interrupted
		case <-t.C:
		}
	}
}

// Backoff is the delay before retry number attempt (1-based): Base doubled per retry, capped at Cap,
// then jittered to a random value between half and all of it.
func (p Policy) Backoff(attempt int) time.Duration {
	d := p.Base
	for i := 1; i < attempt && d < p.Cap; i++ {
		d *= 2
	}
	d = min(d, p.Cap)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}
