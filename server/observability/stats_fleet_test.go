package observability

import (
	"net/http"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestStatsAcrossAgents: without agent_name the statistics cover every agent, break them down per agent
// and carry the p95 duration; the response has no agent_name.
func TestStatsAcrossAgents(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := statsHarness(t, st)
		var got StatsResponse
		body := h.do(http.MethodGet, statsPath+"?include_timeseries=true&include_p95=true", nil)
		decode(t, body, http.StatusOK, &got)
		if got.AgentName != "" || got.TimeRange != "1h" || got.Totals.ExecutionCount != 12 || len(got.Totals.Timeseries) != 60 {
			t.Fatalf("fleet stats = %+v", got)
		}
		want := []guard.AgentStats{
			{AgentName: "agent-a", ExecutionCount: 10, MatchCount: 5, NonMatchCount: 4, ErrorCount: 1,
				ActionCounts: guard.ActionCounts{Allow: 1, Deny: 1, Steer: 1, Warn: 1, Log: 1}},
			{AgentName: "agent-b", ExecutionCount: 2, MatchCount: 1, NonMatchCount: 1, ActionCounts: guard.ActionCounts{Deny: 1}}, // i = 10 (deny), 11
		}
		if len(got.Agents) != 2 || got.Agents[0] != want[0] || got.Agents[1] != want[1] {
			t.Fatalf("agents = %+v, want %+v", got.Agents, want)
		}
		if got.Totals.P95DurationMS == nil || *got.Totals.P95DurationMS != 1.5 || got.Totals.P95SampleSize != 12 {
			t.Fatalf("p95 = %v over %d", got.Totals.P95DurationMS, got.Totals.P95SampleSize)
		}

		// One agent: no breakdown, but a p95 over its own events.
		var one StatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"?agent_name=agent-b&include_p95=1", nil), http.StatusOK, &one)
		if one.Agents != nil || one.AgentName != "agent-b" || one.Totals.P95SampleSize != 2 {
			t.Fatalf("agent-b stats = %+v", one)
		}
		// Without include_p95, no p95.
		var plain StatsResponse
		decode(t, h.do(http.MethodGet, statsPath, nil), http.StatusOK, &plain)
		if plain.Totals.P95DurationMS != nil || plain.Totals.P95SampleSize != 0 || plain.Totals.ExecutionCount != 12 {
			t.Fatalf("stats without include_p95 = %+v", plain.Totals)
		}

		// A control across agents: its figures per agent, and its time series on request.
		var cs ControlStatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"/controls/2?include_timeseries=true", nil), http.StatusOK, &cs)
		if cs.AgentName != "" || cs.Stats.ExecutionCount != 4 || len(cs.Agents) != 2 || cs.Agents[0].ExecutionCount != 3 ||
			cs.Agents[1].AgentName != "agent-b" || cs.Agents[1].ExecutionCount != 1 || len(cs.Timeseries) != 60 {
			t.Fatalf("control 2 across agents = %+v", cs)
		}
		var n int64
		for _, p := range cs.Timeseries {
			n += p.ExecutionCount
		}
		if n != 4 {
			t.Fatalf("control 2 time series counts %d executions, want 4", n)
		}
		var csa ControlStatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"/controls/2?agent_name=agent-a", nil), http.StatusOK, &csa)
		if csa.Agents != nil || csa.Timeseries != nil || csa.Stats.ExecutionCount != 3 {
			t.Fatalf("control 2 of agent-a = %+v", csa)
		}
	})
}
