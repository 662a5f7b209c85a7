package observability

import (
	"net/http"
	"testing"
)

// TestReferenceFieldsInAnswers: events carry applies_to and the reference's nulls, an observe event reads
// back observe (and a query for log finds it), and statistics carry the reference's counts.
func TestReferenceFieldsInAnswers(t *testing.T) {
	h := newHarness(t, &memStore{}, RecorderConfig{})
	obs, deny, tool := wireEvent(t, 0), wireEvent(t, 1), wireEvent(t, 2)
	obs["action"], obs["matched"], obs["step_type"], obs["control_id"] = "observe", true, "llm", 1
	delete(obs, "execution_duration_ms")
	deny["action"], deny["matched"], deny["control_id"] = "deny", true, 1
	tool["matched"], tool["control_id"] = false, 1
	if rec := h.do("POST", "/api/v1/observability/events", postBody(obs, deny, tool)); rec.Code != http.StatusAccepted {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	var q struct {
		Events []map[string]any `json:"events"`
	}
	decode(t, h.do("POST", "/api/v1/observability/events/query", map[string]any{"actions": []string{"log"}}), http.StatusOK, &q)
	if len(q.Events) != 1 {
		t.Fatalf("a query for log: %d events, want the observe one", len(q.Events))
	}
	e := q.Events[0]
	for k, want := range map[string]any{"action": "observe", "applies_to": "llm_call", "execution_duration_ms": nil, "error_message": nil, "selector_path": nil} {
		if v, ok := e[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	if m, ok := e["metadata"].(map[string]any); !ok || m == nil {
		t.Errorf("metadata = %v, want an object", e["metadata"])
	}
	var st struct {
		Totals struct {
			Actions    map[string]int `json:"action_counts"`
			Timeseries *[]any         `json:"timeseries"`
		} `json:"totals"`
		Controls []map[string]any `json:"controls"`
	}
	rec := h.do("GET", "/api/v1/observability/stats?agent_name=agent-a", nil)
	decode(t, rec, http.StatusOK, &st)
	if st.Totals.Actions["observe"] != 1 || st.Totals.Actions["log"] != 1 || st.Totals.Actions["deny"] != 1 || st.Totals.Timeseries != nil {
		t.Errorf("totals: %s", rec.Body)
	}
	if len(st.Controls) != 1 || st.Controls[0]["observe_count"] != 1.0 || st.Controls[0]["deny_count"] != 1.0 || st.Controls[0]["steer_count"] != 0.0 {
		t.Errorf("controls: %s", rec.Body)
	}
	var cs struct {
		Stats struct {
			Timeseries []map[string]any `json:"timeseries"`
		} `json:"stats"`
	}
	decode(t, h.do("GET", "/api/v1/observability/stats/controls/1?agent_name=agent-a&include_timeseries=true", nil), http.StatusOK, &cs)
	if len(cs.Stats.Timeseries) == 0 {
		t.Fatal("no time series inside stats")
	}
	if _, ok := cs.Stats.Timeseries[0]["non_match_count"]; !ok {
		t.Errorf("bucket without non_match_count: %v", cs.Stats.Timeseries[0])
	}
}
