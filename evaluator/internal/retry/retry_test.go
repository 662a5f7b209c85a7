package retry

import (
	"context"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Cap: time.Second}
	for _, tt := range []struct {
		attempt int
		full    time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond}, {20, time.Second}} {
		for range 50 {
			if d := p.Backoff(tt.attempt); d < tt.full/2 || d > tt.full {
				t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.full/2, tt.full)
			}
		}
	}
}

func TestDo(t *testing.T) {
	fast := Policy{MaxRetries: 2, Base: time.Millisecond, Cap: time.Millisecond}
	for _, tt := range []struct {
		name     string
		policy   Policy
		outcomes []Outcome // the attempts' outcomes in order (the last repeats)
		timeout  time.Duration
		cancel   bool
		attempts int
		stop     Stop
	}{
		{"first succeeds", fast, []Outcome{{OK: true}}, 0, false, 1, Succeeded},
		{"retried then succeeds", fast, []Outcome{{Retryable: true}, {Retryable: true}, {OK: true}}, 0, false, 3, Succeeded},
		{"not retryable", fast, []Outcome{{}}, 0, false, 1, Failed},
		{"retries spent", fast, []Outcome{{Retryable: true}}, 0, false, 3, Failed},
		{"no time for the wait", Policy{MaxRetries: 5, Base: time.Hour, Cap: time.Hour}, []Outcome{{Retryable: true}}, time.Minute, false, 1, NoTimeLeft},
		{"Retry-After beyond the deadline", fast, []Outcome{{Retryable: true, After: time.Hour}}, time.Minute, false, 1, NoTimeLeft},
		{"cancelled while waiting", Policy{MaxRetries: 5, Base: time.Hour, Cap: time.Hour}, []Outcome{{Retryable: true}}, 0, true, 1, Interrupted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			calls := 0
			n, stop := tt.policy.Do(ctx, func() Outcome {
				o := tt.outcomes[min(calls, len(tt.outcomes)-1)]
				calls++
				if tt.cancel {
					cancel() // ends the wait that follows
				}
				return o
			})
			if n != tt.attempts || stop != tt.stop || calls != n {
				t.Fatalf("Do = (%d, %v) after %d calls, want (%d, %v)", n, stop, calls, tt.attempts, tt.stop)
			}
		})
	}
}
