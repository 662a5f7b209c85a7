package observability

import (
	"net/http"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// TestReadYourWrites: an event acknowledged with 202 (buffered, the flush interval an hour away) is
// returned by the next query and counted by the next statistics, on every store; the posted batch is
// still written as one batch.
func TestReadYourWrites(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := newHarness(t, st, RecorderConfig{})
		evs := []map[string]any{wireEvent(t, 0), wireEvent(t, 1), wireEvent(t, 2)}
		evs[0]["action"] = "observe"
		if rec := h.do("POST", "/api/v1/observability/events", postBody(evs...)); rec.Code != http.StatusAccepted {
			t.Fatalf("post: %d %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			name, method, path string
			body               any
			check              func(t *testing.T, rec *http.Response, body []byte)
		}{
			{"query", "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "agent-a"}, nil},
			{"stats", "GET", "/api/v1/observability/stats?agent_name=agent-a", nil, nil},
			{"control stats", "GET", "/api/v1/observability/stats/controls/1?agent_name=agent-a", nil, nil},
		} {
			rec := h.do(tc.method, tc.path, tc.body)
			if rec.Code != http.StatusOK || rec.Header().Get(PendingHeader) != "" {
				t.Fatalf("%s: %d pending %q: %s", tc.name, rec.Code, rec.Header().Get(PendingHeader), rec.Body)
			}
			var out struct {
				Total  *int `json:"total"`
				Totals struct {
					Executions int `json:"execution_count"`
				} `json:"totals"`
				Stats struct {
					Executions int `json:"execution_count"`
				} `json:"stats"`
			}
			decode(t, rec, http.StatusOK, &out)
			got := map[string]int{"query": derefInt(out.Total), "stats": out.Totals.Executions, "control stats": out.Stats.Executions}[tc.name]
			if want := map[string]int{"query": 3, "stats": 3, "control stats": 1}[tc.name]; got != want {
				t.Errorf("%s right after the 202: %d events, want %d: %s", tc.name, got, want, rec.Body)
			}
		}
	})
}

func derefInt(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// TestReadYourWritesIsBounded: when the database does not take the buffered events, a query waits at
// most ReadWait, answers what is stored, and says how many events are pending; a negative ReadWait reads
// without waiting.
func TestReadYourWritesIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		atLeast  time.Duration
		pending  string
		maxTotal int
	}{
		{"bounded wait", 200 * time.Millisecond, 200 * time.Millisecond, "2", 0},
		{"no wait", -1, 0, "2", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{block: make(chan struct{})}
			h := newHarness(t, st, RecorderConfig{RetryAttempts: 1})
			t.Cleanup(func() { close(st.block) })
			h.api.ReadWait = tc.wait
			if rec := h.do("POST", "/api/v1/observability/events", postBody(wireEvent(t, 0), wireEvent(t, 1))); rec.Code != http.StatusAccepted {
				t.Fatalf("post: %d %s", rec.Code, rec.Body)
			}
			start := time.Now()
			rec := h.do("POST", "/api/v1/observability/events/query", map[string]any{})
			took := time.Since(start)
			var out struct {
				Total int `json:"total"`
			}
			decode(t, rec, http.StatusOK, &out)
			if took < tc.atLeast || rec.Header().Get(PendingHeader) != tc.pending || out.Total > tc.maxTotal {
				t.Errorf("took %v (want at least %v), %s %q, total %d", took, tc.atLeast, PendingHeader,
					rec.Header().Get(PendingHeader), out.Total)
			}
			if tc.wait < 0 && st.callCount() != 0 {
				t.Errorf("a read without wait asked for a write (%d calls)", st.callCount())
			}
		})
	}
}

// TestStatus: GET /observability/status says whether the pipeline runs, also when it is disabled (where
// the other endpoints are 503s).
func TestStatus(t *testing.T) {
	h := newHarness(t, &memStore{}, RecorderConfig{})
	var on StatusResponse
	decode(t, h.do("GET", "/api/v1/observability/status", nil), http.StatusOK, &on)
	if on.Status != "healthy" || !on.IngestorInitialized || !on.StoreInitialized {
		t.Errorf("enabled: %+v", on)
	}
	h.api.Enabled = false
	var off StatusResponse
	decode(t, h.do("GET", "/api/v1/observability/status", nil), http.StatusOK, &off)
	if off.Status != "disabled" || off.IngestorInitialized || off.StoreInitialized {
		t.Errorf("disabled: %+v", off)
	}
}
