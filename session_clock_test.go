package guard

import (
	"testing"
	"time"
)

// TestSessionNowFollowsTheWallClock: sessionNow stays within a millisecond of time.Now, across anchors.
func TestSessionNowFollowsTheWallClock(t *testing.T) {
	clockAnchor.Store(nil)
	for i := range 3 {
		before := time.Now()
		got := sessionNow()
		after := time.Now()
		if got.Before(before.Add(-time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
			t.Fatalf("round %d: sessionNow %v outside [%v, %v]", i, got, before, after)
		}
		old := time.Now().Add(-2 * reanchorEvery)
		clockAnchor.Store(&old) // an anchor past its use: the next call takes a new one
	}
}
