package store_test

import (
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestMigrationRemovesDuplicateEvents: a database written before idempotent ingest may hold two events
// with one control_execution_id (the server's copy and an SDK's). Migration 00003 keeps the first, makes
// the id unique and rebuilds the per-minute aggregates, so statistics stop counting the pair twice.
func TestMigrationRemovesDuplicateEvents(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		s, err := store.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.MigrateUpTo(ctx, 2); err != nil {
			t.Fatal(err)
		}
		base := time.Date(2026, 5, 6, 7, 8, 0, 0, time.UTC)
		for i, e := range []struct {
			id, source string
			matched    bool
		}{
			{"11111111-0000-4000-8000-000000000001", "server", true},
			{"11111111-0000-4000-8000-000000000001", "sdk", true},
			{"11111111-0000-4000-8000-000000000002", "server", false},
		} {
			ts := base.Add(time.Duration(i) * time.Second).UnixMicro()
			if err := s.ExecForTest(ctx, `INSERT INTO events (control_execution_id, agent_name, control_id, control_name, check_stage,
				step_type, step_name, action, matched, confidence, ts, source) VALUES (?, 'old', 1, 'c1', 'pre', 'llm', 'chat', 'deny', ?, 1, ?, ?)`,
				e.id, e.matched, ts, e.source); err != nil {
				t.Fatal(err)
			}
			// The aggregates as the old InsertEvents kept them: every copy counted.
			if err := s.ExecForTest(ctx, `INSERT INTO event_rollups VALUES ('old', ?, 1, 'c1', 1, ?, ?, 0, 0, ?, 0, 0, 0, 1, 0, 0)
				ON CONFLICT (agent_name, minute, control_id) DO UPDATE SET executions = event_rollups.executions + 1,
				matches = event_rollups.matches + excluded.matches, non_matches = event_rollups.non_matches + excluded.non_matches,
				denies = event_rollups.denies + excluded.denies`,
				ts/60_000_000, b2i(e.matched), b2i(!e.matched), b2i(e.matched)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		got, total, err := s.QueryEvents(ctx, guard.EventQuery{AgentName: "old"})
		if err != nil || total != 2 {
			t.Fatalf("after the migration: %d events (%v), want 2", total, err)
		}
		for _, e := range got {
			if e.ControlExecutionID == "11111111-0000-4000-8000-000000000001" && e.Source != "server" {
				t.Fatalf("kept the later copy: %+v", e)
			}
		}
		st, err := s.Stats(ctx, guard.StatsQuery{AgentName: "old", Since: base.Add(-time.Hour), Until: base.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if st.Totals.ExecutionCount != 2 || st.Totals.MatchCount != 1 || st.Totals.ActionCounts.Deny != 1 {
			t.Fatalf("aggregates after the migration: %+v", st.Totals)
		}
		e := ev("old", 1, base, true, guard.DecisionDeny)
		e.ControlExecutionID = "11111111-0000-4000-8000-000000000002"
		if n, err := s.InsertEventsCounted(ctx, []guard.Event{e}); err != nil || n != 0 {
			t.Fatalf("a known id after the migration: stored %d (%v)", n, err)
		}
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
