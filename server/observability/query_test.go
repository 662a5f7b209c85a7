package observability

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

const queryPath = "/api/v1/observability/events/query"

// queryEvent is event i of the query fixture: i minutes before baseTime, so index order is newest first.
func queryEvent(i int) guard.Event {
	e := mkEvent(i)
	e.ControlExecutionID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	e.Timestamp = baseTime.Add(-time.Duration(i) * time.Minute)
	if i >= 10 {
		e.AgentName = "agent-b"
	}
	e.ControlID = int64(1 + i%3)
	e.Action = []guard.Decision{guard.DecisionDeny, guard.DecisionSteer, guard.DecisionLog, guard.DecisionWarn, guard.DecisionAllow}[i%5]
	e.Matched = i%2 == 0
	e.CheckStage = guard.StagePre
	if i%4 >= 2 {
		e.CheckStage = guard.StagePost
	}
	e.StepType = "llm"
	if i%3 == 0 {
		e.StepType = "tool"
	}
	if i < 4 {
		e.TraceID = "t1"
	}
	return e
}

const queryFixtureSize = 12

func TestQueryEventsFilters(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		fixture := make([]guard.Event, queryFixtureSize)
		for i := range fixture {
			fixture[i] = queryEvent(i)
		}
		if err := st.InsertEvents(context.Background(), fixture); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, st, RecorderConfig{})
		cases := []struct {
			name   string
			body   any
			keep   func(i int) bool
			limit  int
			offset int
		}{
			{"empty body", "", func(int) bool { return true }, 100, 0},
			{"everything", map[string]any{}, func(int) bool { return true }, 100, 0},
			{"agent, normalised", map[string]any{"agent_name": " AGENT-B"}, func(i int) bool { return i >= 10 }, 100, 0},
			{"control ids", map[string]any{"control_ids": []int{1}}, func(i int) bool { return i%3 == 0 }, 100, 0},
			{"observe means log", map[string]any{"actions": []string{"observe"}}, func(i int) bool { return i%5 == 2 }, 100, 0},
			{"two actions", map[string]any{"actions": []string{"deny", "steer"}}, func(i int) bool { return i%5 < 2 }, 100, 0},
			{"not matched", map[string]any{"matched": false}, func(i int) bool { return i%2 == 1 }, 100, 0},
			{"post stage", map[string]any{"check_stages": []string{"post"}}, func(i int) bool { return i%4 >= 2 }, 100, 0},
			{"step type", map[string]any{"step_types": []string{"tool"}}, func(i int) bool { return i%3 == 0 }, 100, 0},
			{"trace", map[string]any{"trace_id": "t1"}, func(i int) bool { return i < 4 }, 100, 0},
			{"time window", map[string]any{
				"start_time": baseTime.Add(-5 * time.Minute).Format(time.RFC3339),
				"end_time":   baseTime.Add(-2 * time.Minute).Format(time.RFC3339)},
				func(i int) bool { return i > 2 && i <= 5 }, 100, 0},
			{"combined", map[string]any{"agent_name": "agent-a", "matched": true, "control_ids": []int{1, 2}},
				func(i int) bool { return i < 10 && i%2 == 0 && i%3 != 2 }, 100, 0},
			{"page", map[string]any{"limit": 2, "offset": 3}, func(int) bool { return true }, 2, 3},
			{"past the end", map[string]any{"offset": 50}, func(int) bool { return true }, 100, 50},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var matching []string
				for i := range queryFixtureSize {
					if tc.keep(i) {
						matching = append(matching, queryEvent(i).ControlExecutionID)
					}
				}
				var got QueryResponse
				decode(t, h.do(http.MethodPost, queryPath, tc.body), http.StatusOK, &got)
				want := matching[min(tc.offset, len(matching)):min(tc.offset+tc.limit, len(matching))]
				var ids []string
				for _, e := range got.Events {
					ids = append(ids, e.ControlExecutionID)
				}
				if got.Events == nil || !slices.Equal(ids, want) || got.Total != len(matching) ||
					got.Limit != tc.limit || got.Offset != tc.offset {
					t.Fatalf("got ids %v total %d limit %d offset %d; want %v total %d limit %d offset %d",
						ids, got.Total, got.Limit, got.Offset, want, len(matching), tc.limit, tc.offset)
				}
			})
		}
	})
}

// TestQueryEventsRangeCodes: issue 23. An offset beyond ±14:00 and a number beyond its field's range,
// however spelled, are code "range" at the field.
func TestQueryEventsRangeCodes(t *testing.T) {
	h := newHarness(t, &memStore{}, RecorderConfig{})
	for _, tc := range []struct{ body, field string }{
		{`{"start_time":"2026-11-27T10:00:00+24:00"}`, "start_time"},
		{`{"end_time":"2026-11-27T10:00:00-15:00"}`, "end_time"},
		{`{"limit":1e400}`, "limit"},
		{`{"offset":99999999999999999999}`, "offset"},
	} {
		p := problemAt(t, h.do(http.MethodPost, queryPath, tc.body), http.StatusUnprocessableEntity, problem.CodeValidation, tc.field)
		if p.Errors[0].Code != "range" {
			t.Errorf("%s: problems %+v, want range", tc.body, p.Errors)
		}
	}
}

func TestQueryEventsRejectsBadQueries(t *testing.T) {
	h := newHarness(t, &memStore{}, RecorderConfig{})
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"not json", "[", http.StatusBadRequest, problem.CodeInvalidJSON, ""},
		{"limit 0", map[string]any{"limit": 0}, http.StatusUnprocessableEntity, problem.CodeValidation, "limit"},
		{"limit over 1000", map[string]any{"limit": 1001}, http.StatusUnprocessableEntity, problem.CodeValidation, "limit"},
		{"negative offset", map[string]any{"offset": -1}, http.StatusUnprocessableEntity, problem.CodeValidation, "offset"},
		{"repeated key", `{"agent_name":"a","agent_name":"b"}`, http.StatusUnprocessableEntity, problem.CodeValidation, "agent_name"},
		{"wrong type", map[string]any{"control_ids": "1"}, http.StatusUnprocessableEntity, problem.CodeValidation, "control_ids"},
		{"bad action", map[string]any{"actions": []string{"allow", "explode"}}, http.StatusUnprocessableEntity, problem.CodeValidation, "actions.1"},
		{"bad stage", map[string]any{"check_stages": []string{"mid"}}, http.StatusUnprocessableEntity, problem.CodeValidation, "check_stages.0"},
		{"bad agent", map[string]any{"agent_name": "no spaces"}, http.StatusUnprocessableEntity, problem.CodeValidation, "agent_name"},
		{"bad start", map[string]any{"start_time": "yesterday"}, http.StatusUnprocessableEntity, problem.CodeValidation, "start_time"},
		{"end before start", map[string]any{"start_time": "2026-01-02T00:00:00Z", "end_time": "2026-01-01T00:00:00Z"},
			http.StatusUnprocessableEntity, problem.CodeValidation, "end_time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			problemAt(t, h.do(http.MethodPost, queryPath, tc.body), tc.status, tc.code, tc.field)
		})
	}
}
