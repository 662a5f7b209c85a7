package observability

import (
	"net/http"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestQueryEventsErrored: the errored filter keeps the events with an error message (true) or those
// without (false): the dashboard's links from error counts to their events.
func TestQueryEventsErrored(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := statsHarness(t, st) // event 9 of agent-a is the one error
		cases := []struct {
			body  map[string]any
			total int
		}{
			{map[string]any{"errored": true}, 1},
			{map[string]any{"errored": false}, 12},
			{map[string]any{"errored": true, "agent_name": "agent-b"}, 0},
			{map[string]any{}, 13},
		}
		for _, c := range cases {
			var got QueryResponse
			decode(t, h.do(http.MethodPost, queryPath, c.body), http.StatusOK, &got)
			if got.Total != c.total {
				t.Errorf("%v: total %d, want %d", c.body, got.Total, c.total)
			}
			if c.body["errored"] == true && c.total == 1 && got.Events[0].ErrorMessage == "" {
				t.Errorf("errored event without an error message: %+v", got.Events[0])
			}
		}
	})
}
