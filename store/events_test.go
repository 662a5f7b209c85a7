package store_test

import (
	"fmt"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func ev(agent string, control int64, at time.Time, matched bool, action guard.Decision) guard.Event {
	return guard.Event{AgentName: agent, ControlID: control, ControlName: fmt.Sprintf("c%d", control),
		CheckStage: guard.StagePre, StepType: "llm", StepName: "chat", Action: action, Matched: matched,
		Confidence: 1, Timestamp: at, Source: "server"}
}

func TestEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		base := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
		dur := 2.5
		var batch []guard.Event
		// 1,200 events (more than one INSERT chunk) for agent a over 20 minutes, alternating match.
		for i := range 1200 {
			e := ev("a", int64(1+i%3), base.Add(time.Duration(i)*time.Second), i%2 == 0, guard.DecisionDeny)
			if i%3 == 1 {
				e.Action = guard.DecisionWarn
			}
			if i%100 == 0 {
				e.ErrorMessage, e.Matched = "boom", false
			}
			e.ExecutionDurationMS = &dur
			batch = append(batch, e)
		}
		special := ev("b", 99, base.Add(time.Hour), true, guard.DecisionSteer)
		special.ControlExecutionID, special.TraceID, special.SpanID = "6f1c0c9e-1111-4a4a-8b8b-000000000001", "trace-1", "span-1"
		special.Metadata, special.EvaluatorName, special.SelectorPath = map[string]any{"k": "v"}, "regex", "input.text"
		special.CheckStage, special.StepType = guard.StagePost, "tool"
		special.SessionID = "sess-1"
		batch = append(batch, special)
		if err := s.InsertEvents(ctx, batch); err != nil {
			t.Fatal(err)
		}

		got, total, err := s.QueryEvents(ctx, guard.EventQuery{TraceID: "trace-1"})
		if err != nil || total != 1 || len(got) != 1 {
			t.Fatalf("by trace: %d %v", total, err)
		}
		if g := got[0]; g.ControlExecutionID != special.ControlExecutionID || g.SpanID != "span-1" || g.Metadata["k"] != "v" ||
			!g.Timestamp.Equal(special.Timestamp) || g.ExecutionDurationMS != nil || g.EvaluatorName != "regex" || g.CheckStage != guard.StagePost ||
			g.SessionID != "sess-1" {
			t.Fatalf("round trip = %+v", g)
		}
		yes := true
		start, end := base.Add(100*time.Second), base.Add(200*time.Second)
		queries := []struct {
			name  string
			q     guard.EventQuery
			total int
		}{
			{"all", guard.EventQuery{}, 1201},
			{"agent", guard.EventQuery{AgentName: "a"}, 1200},
			{"controls", guard.EventQuery{ControlIDs: []int64{1, 99}}, 401},
			{"actions", guard.EventQuery{Actions: []guard.Decision{guard.DecisionWarn}}, 400},
			{"matched", guard.EventQuery{Matched: &yes}, 589},
			{"stage", guard.EventQuery{CheckStages: []guard.Stage{guard.StagePost}}, 1},
			{"step type", guard.EventQuery{StepTypes: []string{"tool", "x"}}, 1},
			{"time range", guard.EventQuery{StartTime: &start, EndTime: &end}, 100},
			{"session", guard.EventQuery{SessionID: "sess-1"}, 1},
			{"session of another agent", guard.EventQuery{AgentName: "a", SessionID: "sess-1"}, 0},
		}
		for _, tc := range queries {
			tc.q.Limit = 10
			got, total, err := s.QueryEvents(ctx, tc.q)
			if err != nil || total != tc.total || len(got) != min(10, tc.total) {
				t.Errorf("%s: total %d (%d rows, %v), want %d", tc.name, total, len(got), err, tc.total)
			}
		}
		page, _, _ := s.QueryEvents(ctx, guard.EventQuery{AgentName: "a", Limit: 5, Offset: 5})
		if !page[0].Timestamp.Equal(base.Add(1194*time.Second)) || !page[4].Timestamp.Equal(base.Add(1190*time.Second)) {
			t.Fatalf("offset page not newest first: %v .. %v", page[0].Timestamp, page[4].Timestamp)
		}

		st, err := s.Stats(ctx, guard.StatsQuery{AgentName: "a", Since: base, Until: base.Add(20 * time.Minute), Bucket: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		tot := st.Totals
		if tot.ExecutionCount != 1200 || tot.MatchCount != 588 || tot.ErrorCount != 12 || tot.NonMatchCount != 600 {
			t.Fatalf("totals = %+v", tot)
		}
		if tot.ActionCounts.Deny+tot.ActionCounts.Warn != tot.MatchCount || tot.ActionCounts.Allow != 0 {
			t.Fatalf("action counts = %+v", tot.ActionCounts)
		}
		if len(st.Controls) != 3 || st.Controls[0].ControlID != 1 || st.Controls[0].ExecutionCount != 400 ||
			st.Controls[0].AvgDurationMS != 2.5 || st.Controls[0].AvgConfidence != 1 || st.Controls[0].ControlName != "c1" {
			t.Fatalf("controls = %+v", st.Controls)
		}
		if len(tot.Timeseries) != 4 || tot.Timeseries[0].ExecutionCount != 300 || !tot.Timeseries[3].Timestamp.Equal(base.Add(15*time.Minute)) {
			t.Fatalf("timeseries = %+v", tot.Timeseries)
		}
		var sum int64
		for _, p := range tot.Timeseries {
			sum += p.ExecutionCount
		}
		if sum != 1200 {
			t.Fatalf("timeseries sums to %d", sum)
		}
		// One control, and empty buckets are present as zeros.
		two := int64(2)
		st, err = s.Stats(ctx, guard.StatsQuery{AgentName: "a", ControlID: &two, Since: base, Until: base.Add(time.Hour), Bucket: 10 * time.Minute})
		if err != nil || len(st.Controls) != 1 || st.Totals.ExecutionCount != 400 || len(st.Totals.Timeseries) != 6 || st.Totals.Timeseries[5].ExecutionCount != 0 {
			t.Fatalf("one control = %+v %v", st, err)
		}
		st, err = s.Stats(ctx, guard.StatsQuery{AgentName: "nobody", Since: base, Until: base.Add(time.Hour)})
		if err != nil || st.Totals.ExecutionCount != 0 || st.Controls == nil || st.Totals.Timeseries != nil {
			t.Fatalf("no events = %+v %v", st, err)
		}

		// Pruning cuts at the minute holding the time given: 10:10:30 prunes the first 600 events.
		n, err := s.PruneEvents(ctx, base.Add(630*time.Second))
		if err != nil || n != 600 {
			t.Fatalf("pruned %d, %v", n, err)
		}
		_, total, _ = s.QueryEvents(ctx, guard.EventQuery{})
		if total != 601 {
			t.Fatalf("after prune total = %d", total)
		}
		// The aggregates went with the events: stats over the whole range count what is left.
		st, err = s.Stats(ctx, guard.StatsQuery{AgentName: "a", Since: base, Until: base.Add(20 * time.Minute), Bucket: time.Minute})
		if err != nil || st.Totals.ExecutionCount != 600 || st.Totals.Timeseries[9].ExecutionCount != 0 || st.Totals.Timeseries[10].ExecutionCount != 60 {
			t.Fatalf("stats after prune = %+v, %v", st.Totals, err)
		}
	})
}
