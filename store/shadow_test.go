package store_test

import (
	"testing"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestShadowEvents: the shadow flag is stored and read back, filters queries, keeps shadow events out of
// the totals and per-control statistics (and their per-minute aggregates) and counts them in the
// shadow section.
func TestShadowEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		at := time.Now().Add(-time.Hour).Truncate(time.Minute)
		var events []guard.Event
		for i := range 6 {
			e := ev("bot", 7, at.Add(time.Duration(i)*time.Minute), i%2 == 0, guard.DecisionDeny)
			e.Shadow = true
			events = append(events, e)
		}
		events = append(events, ev("bot", 8, at, true, guard.DecisionLog), ev("bot", 8, at.Add(time.Minute), false, guard.DecisionLog))
		if err := s.InsertEvents(ctx, events); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			shadow *bool
			want   int
		}{{nil, 8}, {ptr(true), 6}, {ptr(false), 2}} {
			got, total, err := s.QueryEvents(ctx, guard.EventQuery{AgentName: "bot", Shadow: tc.shadow})
			if err != nil {
				t.Fatal(err)
			}
			if total != tc.want || len(got) != tc.want {
				t.Errorf("shadow %v: %d events (total %d), want %d", tc.shadow, len(got), total, tc.want)
			}
			for _, e := range got {
				if e.Shadow != (e.ControlID == 7) {
					t.Errorf("event of control %d read back with shadow %v", e.ControlID, e.Shadow)
				}
			}
		}
		// Over whole minutes (aggregates) and over a range cut inside minutes (raw events).
		for _, since := range []time.Time{at.Add(-time.Hour), at.Add(-17 * time.Second)} {
			st, err := s.Stats(ctx, guard.StatsQuery{AgentName: "bot", Since: since, Until: time.Now().Add(time.Second), Bucket: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if st.Totals.ExecutionCount != 2 || len(st.Controls) != 1 || st.Controls[0].ControlID != 8 {
				t.Errorf("since %v: totals %+v controls %+v: shadow events must not count", since, st.Totals, st.Controls)
			}
			var series int64
			for _, p := range st.Totals.Timeseries {
				series += p.ExecutionCount
			}
			if series != 2 {
				t.Errorf("since %v: the time series counts %d evaluations, want 2", since, series)
			}
			if len(st.Shadow) != 1 {
				t.Fatalf("since %v: shadow %+v", since, st.Shadow)
			}
			sh := st.Shadow[0]
			if !sh.Shadow || sh.ControlID != 7 || sh.ExecutionCount != 6 || sh.ActionCounts.Deny != 3 || sh.MatchCount != 3 {
				t.Errorf("since %v: shadow stats %+v, want 3 denies of 6", since, sh)
			}
		}
		// No shadow events: an empty, non-nil section.
		st, err := s.Stats(ctx, guard.StatsQuery{AgentName: "other", Since: at, Until: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if st.Shadow == nil || len(st.Shadow) != 0 {
			t.Errorf("shadow of an agent without events = %#v", st.Shadow)
		}
	})
}

func ptr[T any](v T) *T { return &v }
