package observability

import (
	"context"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

func TestPrunerRunsAtStartAndThenPeriodically(t *testing.T) {
	st := &memStore{}
	recent, old := mkEvent(0), mkEvent(1)
	recent.Timestamp = baseTime.Add(-24 * time.Hour)
	old.Timestamp = baseTime.Add(-31 * 24 * time.Hour)
	if err := st.InsertEvents(context.Background(), []guard.Event{recent, old}); err != nil {
		t.Fatal(err)
	}
	stop := startPruner(context.Background(), st, 30*24*time.Hour, 5*time.Millisecond,
		func() time.Time { return baseTime }, nil)
	waitFor(t, "three prune runs", func() bool { return len(st.pruneCalls()) >= 3 })
	stop()
	stop() // idempotent
	calls := st.pruneCalls()
	if want := baseTime.Add(-30 * 24 * time.Hour); !calls[0].Equal(want) {
		t.Fatalf("pruned before %v, want %v", calls[0], want)
	}
	if st.count() != 1 || st.events[0].ControlExecutionID != recent.ControlExecutionID {
		t.Fatalf("kept %v, want only the recent event", st.events)
	}
	if n := len(st.pruneCalls()); n != len(calls) {
		t.Fatalf("the pruner ran after stop (%d calls, then %d)", len(calls), n)
	}
}

func TestPrunerStopsWithItsContext(t *testing.T) {
	st := &memStore{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := StartPruner(ctx, st, time.Hour, nil)
	waitFor(t, "the first run", func() bool { return len(st.pruneCalls()) == 1 })
	cancel()
	stop() // returns once the goroutine is gone (goleak checks it)
}

func TestPrunerDisabledWithoutRetention(t *testing.T) {
	st := &memStore{}
	StartPruner(context.Background(), st, 0, nil)()
	if len(st.pruneCalls()) != 0 {
		t.Fatal("pruned with a zero retention")
	}
}
