package observability

import (
	"context"
	"net/http"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

func TestQueryListLimits(t *testing.T) {
	ids := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	strs := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string // "" when the query is accepted
	}{
		{"100 control ids", map[string]any{"control_ids": ids(MaxQueryList)}, ""},
		{"40,000 control ids", map[string]any{"control_ids": ids(40_000)}, "control_ids"},
		{"101 actions", map[string]any{"actions": strs(MaxQueryList+1, "deny")}, "actions"},
		{"101 check stages", map[string]any{"check_stages": strs(MaxQueryList+1, "pre")}, "check_stages"},
		{"101 step types", map[string]any{"step_types": strs(MaxQueryList+1, "tool")}, "step_types"},
		{"long step type", map[string]any{"step_types": []string{"tool", strings.Repeat("x", maxShortField+1)}}, "step_types.1"},
		{"long trace id", map[string]any{"trace_id": strings.Repeat("x", maxShortField+1)}, "trace_id"},
	}
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := newHarness(t, st, RecorderConfig{})
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := h.do(http.MethodPost, queryPath, tc.body)
				if tc.field == "" {
					var q QueryResponse
					decode(t, rec, http.StatusOK, &q)
					return
				}
				problemAt(t, rec, http.StatusUnprocessableEntity, problem.CodeValidation, tc.field)
			})
		}
	})
}

// TestStoreRefusesLongQueryLists checks the store's own bound, for Go callers that skip the API: a
// validation error naming the list, not "too many SQL variables".
func TestStoreRefusesLongQueryLists(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		if _, ok := st.(*memStore); ok {
			t.Skip("the fake has no SQL")
		}
		_, _, err := st.QueryEvents(context.Background(), guard.EventQuery{ControlIDs: make([]int64, 40_000)})
		p := problem.From(err)
		if p.Status != http.StatusUnprocessableEntity || len(p.Problems) != 1 || p.Problems[0].Field != "control_ids" {
			t.Fatalf("err = %v, want a validation error on control_ids", err)
		}
	})
}
