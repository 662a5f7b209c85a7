package guard

import (
	"sync/atomic"
	"time"
)

// The default clock of session windows and idle expiry. time.Now reads two clocks (wall and monotonic);
// on virtual machines each read can cost 100 ns or more, which alone was a tenth of what a session
// condition may add to Check. sessionNow reads the monotonic clock only and adds it to a wall-clock
// anchor taken at most a second earlier: the wall time it gives is at most the monotonic clock's drift
// over a second away from time.Now (a few microseconds), so replicas sharing a Redis store agree as
// their wall clocks do.

// clockAnchor is a time.Now reading (with its monotonic reading) that sessionNow counts from.
var clockAnchor atomic.Pointer[time.Time]

// reanchorEvery is how long an anchor serves before sessionNow takes a new one.
const reanchorEvery = time.Second

// sessionNow returns the current time, as time.Now does (wall and monotonic readings).
func sessionNow() time.Time {
	a := clockAnchor.Load()
	if a != nil {
		if d := time.Since(*a); d >= 0 && d < reanchorEvery {
			return a.Add(d)
		}
	}
	t := time.Now()
	clockAnchor.Store(&t)
	return t
}
