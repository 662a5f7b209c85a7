package store_test

import (
	"fmt"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestInsertEventsIsIdempotent: an event whose control_execution_id is stored already is not stored again,
// whichever copy comes first (the server's recorder or a client), within one batch or across batches and
// across a full 500-row chunk, and the per-minute aggregates count it once.
func TestInsertEventsIsIdempotent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		base := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
		id := func(i int) string { return fmt.Sprintf("7a000000-0000-4000-8000-%012d", i) }
		mk := func(i int, source string) guard.Event {
			e := ev("dup", 1, base.Add(time.Duration(i)*time.Second), i%2 == 0, guard.DecisionDeny)
			e.ControlExecutionID, e.Source = id(i), source
			return e
		}
		// Server copy first, then the client's copy of the same executions (and one new event).
		if err := s.InsertEvents(ctx, []guard.Event{mk(1, "server"), mk(2, "server")}); err != nil {
			t.Fatal(err)
		}
		n, err := s.InsertEventsCounted(ctx, []guard.Event{mk(1, "sdk"), mk(2, "sdk"), mk(3, "sdk")})
		if err != nil || n != 1 {
			t.Fatalf("second batch stored %d (%v), want 1", n, err)
		}
		// Client copy first, then the server's.
		if err := s.InsertEvents(ctx, []guard.Event{mk(4, "sdk")}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.InsertEventsCounted(ctx, []guard.Event{mk(4, "server")}); err != nil || n != 0 {
			t.Fatalf("server copy after the client's stored %d (%v)", n, err)
		}
		// Repeats within one batch, and a batch larger than one INSERT chunk that repeats everything.
		if n, err := s.InsertEventsCounted(ctx, []guard.Event{mk(5, "sdk"), mk(5, "server"), mk(6, "sdk"), mk(5, "sdk")}); err != nil || n != 2 {
			t.Fatalf("batch with repeats stored %d (%v), want 2", n, err)
		}
		var big []guard.Event
		for i := 1; i <= 1100; i++ {
			big = append(big, mk(i, "sdk"), mk(i, "sdk"))
		}
		if n, err := s.InsertEventsCounted(ctx, big); err != nil || n != 1100-6 {
			t.Fatalf("large batch stored %d (%v), want %d", n, err, 1100-6)
		}
		if n, err := s.InsertEventsCounted(ctx, big[:1000]); err != nil || n != 0 {
			t.Fatalf("a full chunk of known events stored %d (%v)", n, err)
		}

		const want = 1100
		got, total, err := s.QueryEvents(ctx, guard.EventQuery{AgentName: "dup", Limit: 1000})
		if err != nil || total != want {
			t.Fatalf("stored %d events (%v), want %d", total, err, want)
		}
		for _, e := range got {
			if e.ControlExecutionID == id(1) && e.Source != "server" || e.ControlExecutionID == id(4) && e.Source != "sdk" {
				t.Fatalf("the first copy must be the one kept: %+v", e)
			}
		}
		// Whole minutes come from the aggregates, the partial edge minutes from the events: both agree.
		for _, r := range []struct{ since, until time.Time }{
			{base.Add(-time.Hour), base.Add(time.Hour)},
			{base.Add(-30 * time.Second), base.Add(time.Hour + 30*time.Second)},
		} {
			st, err := s.Stats(ctx, guard.StatsQuery{AgentName: "dup", Since: r.since, Until: r.until})
			if err != nil {
				t.Fatal(err)
			}
			if st.Totals.ExecutionCount != want || st.Totals.MatchCount != want/2 || st.Totals.ActionCounts.Deny != want/2 {
				t.Fatalf("stats over %v..%v: %+v, want %d executions", r.since, r.until, st.Totals, want)
			}
		}
	})
}
