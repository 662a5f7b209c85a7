package observability

import (
	"context"
	"net/http"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

const statsPath = "/api/v1/observability/stats"

// statsFixture: agent-a has 10 events in the last hour (one an error), one 2 hours ago; agent-b has 2.
func statsFixture() []guard.Event {
	events := make([]guard.Event, 0, queryFixtureSize+1)
	for i := range queryFixtureSize {
		e := queryEvent(i)
		if i == 9 {
			e.Matched, e.ErrorMessage = false, "evaluator failed"
		}
		events = append(events, e)
	}
	old := queryEvent(0)
	old.ControlExecutionID = "00000000-0000-4000-8000-999999999999"
	old.Timestamp = baseTime.Add(-2 * time.Hour)
	return append(events, old)
}

// statsHarness stores statsFixture in st and serves it.
func statsHarness(t *testing.T, st guard.EventStore) *harness {
	t.Helper()
	if err := st.InsertEvents(context.Background(), statsFixture()); err != nil {
		t.Fatal(err)
	}
	return newHarness(t, st, RecorderConfig{})
}

func TestStatsAggregatesOneAgent(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := statsHarness(t, st)

		var got StatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"?agent_name=Agent-A", nil), http.StatusOK, &got)
		if got.AgentName != "agent-a" || got.TimeRange != "1h" || got.Totals.Timeseries != nil {
			t.Fatalf("header = %q %q, timeseries %v", got.AgentName, got.TimeRange, got.Totals.Timeseries)
		}
		// i in 0..9: matched when even (0 2 4 6 8), 9 is an error, 1 3 5 7 are non-matches.
		// Actions of the matched ones (i%5): deny(0) log(2) allow(4) steer(6) warn(8).
		want := guard.StatsTotals{ExecutionCount: 10, MatchCount: 5, NonMatchCount: 4, ErrorCount: 1,
			ActionCounts: guard.ActionCounts{Allow: 1, Deny: 1, Steer: 1, Warn: 1, Log: 1}}
		if got.Totals.ExecutionCount != want.ExecutionCount || got.Totals.MatchCount != want.MatchCount ||
			got.Totals.NonMatchCount != want.NonMatchCount || got.Totals.ErrorCount != want.ErrorCount ||
			got.Totals.ActionCounts != want.ActionCounts {
			t.Fatalf("totals = %+v, want %+v", got.Totals, want)
		}
		if len(got.Controls) != 3 || got.Controls[0].ControlID != 1 || got.Controls[0].ExecutionCount != 4 ||
			got.Controls[0].ControlName != "control-1" || got.Controls[0].AvgConfidence != 0.5 || got.Controls[0].AvgDurationMS != 1.5 {
			t.Fatalf("controls = %+v", got.Controls)
		}

		// The 24h range takes the older event too.
		decode(t, h.do(http.MethodGet, statsPath+"?agent_name=agent-a&time_range=24h", nil), http.StatusOK, &got)
		if got.Totals.ExecutionCount != 11 {
			t.Fatalf("24h execution count = %d, want 11", got.Totals.ExecutionCount)
		}
		// An agent without events has zeros, not an error.
		decode(t, h.do(http.MethodGet, statsPath+"?agent_name=nobody", nil), http.StatusOK, &got)
		if got.Totals.ExecutionCount != 0 || got.Controls == nil || len(got.Controls) != 0 {
			t.Fatalf("empty agent = %+v", got)
		}
	})
}

func TestStatsTimeseriesCoversTheRange(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := statsHarness(t, st)
		wantPoints := map[string]int{"1m": 60, "5m": 60, "15m": 60, "1h": 60, "6h": 36, "24h": 48, "7d": 56, "30d": 60, "180d": 60, "365d": 73}
		for _, tr := range TimeRanges {
			t.Run(tr.Name, func(t *testing.T) {
				var got StatsResponse
				decode(t, h.do(http.MethodGet, statsPath+"?agent_name=agent-a&include_timeseries=true&time_range="+tr.Name, nil), http.StatusOK, &got)
				ts := got.Totals.Timeseries
				if len(ts) != wantPoints[tr.Name] {
					t.Fatalf("%d points, want %d", len(ts), wantPoints[tr.Name])
				}
				var sum, matches, nonMatches int64
				for k, p := range ts {
					nonMatches += p.NonMatchCount
					if k > 0 && p.Timestamp.Sub(ts[k-1].Timestamp) != tr.Bucket {
						t.Fatalf("point %d at %v after %v: not one bucket (%v) apart", k, p.Timestamp, ts[k-1].Timestamp, tr.Bucket)
					}
					sum += p.ExecutionCount
					matches += p.MatchCount
				}
				if sum != got.Totals.ExecutionCount || matches != got.Totals.MatchCount || nonMatches != got.Totals.NonMatchCount {
					t.Fatalf("series sums %d executions, %d matches; totals say %d, %d", sum, matches,
						got.Totals.ExecutionCount, got.Totals.MatchCount)
				}
				now := baseTime.Add(30 * time.Second)
				if last := ts[len(ts)-1].Timestamp; now.Before(last) || !now.Before(last.Add(tr.Bucket)) {
					t.Fatalf("the last bucket starts at %v and does not hold now (%v)", last, now)
				}
			})
		}
		var got StatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"?agent_name=agent-a&include_timeseries=1", nil), http.StatusOK, &got)
		ts := got.Totals.Timeseries
		// 1h: one-minute buckets ending with the one holding baseTime; event i is i minutes before it.
		for i := range 10 {
			if p := ts[59-i]; p.ExecutionCount != 1 || !p.Timestamp.Equal(baseTime.Add(-time.Duration(i)*time.Minute)) {
				t.Fatalf("bucket of event %d = %+v", i, p)
			}
		}
		if p := ts[59-9]; p.ErrorCount != 1 {
			t.Fatalf("the error event's bucket = %+v", p)
		}
	})
}

func TestControlStats(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := statsHarness(t, st)
		var got ControlStatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"/controls/1?agent_name=agent-a", nil), http.StatusOK, &got)
		// control 1: i = 0 3 6 9 (9 is an error); matched 0 (deny) and 6 (steer).
		if got.AgentName != "agent-a" || got.TimeRange != "1h" || got.ControlID != 1 || got.ControlName != "control-1" ||
			got.Stats.ExecutionCount != 4 || got.Stats.MatchCount != 2 || got.Stats.ErrorCount != 1 || got.Stats.NonMatchCount != 1 ||
			got.Stats.ActionCounts != (guard.ActionCounts{Deny: 1, Steer: 1}) {
			t.Fatalf("control stats = %+v", got)
		}
		decode(t, h.do(http.MethodGet, statsPath+"/controls/77?agent_name=agent-a&time_range=7d", nil), http.StatusOK, &got)
		if got.ControlID != 77 || got.Stats.ControlID != 77 || got.Stats.ExecutionCount != 0 || got.TimeRange != "7d" {
			t.Fatalf("unknown control = %+v, want zeros", got)
		}
	})
}

func TestStatsRejectsBadParameters(t *testing.T) {
	h := newHarness(t, &memStore{}, RecorderConfig{})
	cases := []struct {
		name, path, field string
	}{
		{"bad agent", statsPath + "?agent_name=a%20b", "agent_name"},
		{"unknown range", statsPath + "?agent_name=a&time_range=2h", "time_range"},
		{"bad timeseries flag", statsPath + "?agent_name=a&include_timeseries=maybe", "include_timeseries"},
		{"bad p95 flag", statsPath + "?include_p95=yes", "include_p95"},
		{"control: bad timeseries flag", statsPath + "/controls/1?include_timeseries=2", "include_timeseries"},
		{"control: unknown range", statsPath + "/controls/1?agent_name=a&time_range=1y", "time_range"},
		{"control: bad id", statsPath + "/controls/abc?agent_name=a", "control_id"},
		{"control: negative id", statsPath + "/controls/-3?agent_name=a", "control_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			problemAt(t, h.do(http.MethodGet, tc.path, nil), http.StatusUnprocessableEntity, problem.CodeValidation, tc.field)
		})
	}
}

func TestEndpointsSayWhenObservabilityIsDisabled(t *testing.T) {
	for _, api := range []*API{
		{Store: &memStore{}, Enabled: false},
		{Store: nil, Enabled: true},
		{Store: &memStore{}, Enabled: true, Recorder: nil}, // posting needs a recorder
	} {
		mux := http.NewServeMux()
		api.Routes(mux, "/api/v1")
		h := &harness{t: t, api: api, mux: mux}
		checks := []struct{ method, path string }{
			{http.MethodPost, eventsPath},
			{http.MethodPost, queryPath},
			{http.MethodGet, statsPath + "?agent_name=a"},
			{http.MethodGet, statsPath + "/controls/1?agent_name=a"},
		}
		if api.Store != nil && api.Enabled {
			checks = checks[:1]
		}
		for _, c := range checks {
			body := any(nil)
			if c.method == http.MethodPost {
				body = postBody(wireEvent(t, 0))
			}
			p := problemOf(t, h.do(c.method, c.path, body), http.StatusServiceUnavailable, problem.CodeObservabilityOff)
			if p.Instance != c.path[:len(c.path)-len(queryString(c.path))] {
				t.Errorf("instance = %q for %s", p.Instance, c.path)
			}
		}
	}
}

func queryString(path string) string {
	for i := range path {
		if path[i] == '?' {
			return path[i:]
		}
	}
	return ""
}
