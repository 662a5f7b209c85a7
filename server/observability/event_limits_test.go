package observability

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// nested returns metadata nesting n levels in all (the metadata object is level 1).
func nested(n int) json.RawMessage {
	return json.RawMessage(`{"a":` + strings.Repeat(`[`, n-1) + strings.Repeat(`]`, n-1) + `}`)
}

// emptyObjects returns metadata {"m":[{},{},...]} with n empty objects: n+1 values.
func emptyObjects(n int) json.RawMessage {
	return json.RawMessage(`{"m":[` + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + `]}`)
}

// padded returns metadata of exactly size bytes.
func padded(size int) json.RawMessage {
	const frame = len(`{"p":""}`)
	return json.RawMessage(`{"p":"` + strings.Repeat("x", size-frame) + `"}`)
}

func TestPostEventsLimits(t *testing.T) {
	cases := []struct {
		name  string
		alter func(e map[string]any)
		field string // "" when the event is accepted
		code  string
	}{
		{"metadata at the size limit", func(e map[string]any) { e["metadata"] = padded(MaxMetadataBytes) }, "", ""},
		{"metadata past the size limit", func(e map[string]any) { e["metadata"] = padded(MaxMetadataBytes + 1) }, "metadata", "max_size"},
		{"1 MiB of empty objects", func(e map[string]any) { e["metadata"] = emptyObjects(350_000) }, "metadata", "max_size"},
		{"metadata at the depth limit", func(e map[string]any) { e["metadata"] = nested(MaxMetadataDepth) }, "", ""},
		{"metadata past the depth limit", func(e map[string]any) { e["metadata"] = nested(MaxMetadataDepth + 1) }, "metadata", "max_depth"},
		{"metadata at the element limit", func(e map[string]any) { e["metadata"] = emptyObjects(MaxMetadataElements - 1) }, "", ""},
		{"metadata past the element limit", func(e map[string]any) { e["metadata"] = emptyObjects(MaxMetadataElements) }, "metadata", "max_elements"},
		{"metadata array", func(e map[string]any) { e["metadata"] = []int{1} }, "metadata", "type"},
		{"metadata null", func(e map[string]any) { e["metadata"] = nil }, "", ""},
		{"duration of one day", func(e map[string]any) { e["execution_duration_ms"] = MaxDurationMS }, "", ""},
		{"duration past one day", func(e map[string]any) { e["execution_duration_ms"] = MaxDurationMS + 0.5 }, "execution_duration_ms", "range"},
		{"huge duration", func(e map[string]any) { e["execution_duration_ms"] = 1.7e308 }, "execution_duration_ms", "range"},
		{"duration of zero", func(e map[string]any) { e["execution_duration_ms"] = 0 }, "", ""},
		{"confidence 1e308", func(e map[string]any) { e["confidence"] = 1e308 }, "confidence", "range"},
		{"error message truncated", func(e map[string]any) { e["error_message"] = strings.Repeat("x", MaxErrorMessageBytes) }, "", ""},
		{"error message too long", func(e map[string]any) { e["error_message"] = strings.Repeat("x", MaxErrorMessageBytes+1) }, "error_message", "max_length"},
		{"trace id too long", func(e map[string]any) { e["trace_id"] = strings.Repeat("x", maxShortField+1) }, "trace_id", "max_length"},
		{"evaluator name too long", func(e map[string]any) { e["evaluator_name"] = strings.Repeat("x", maxShortField+1) }, "evaluator_name", "max_length"},
		{"selector path too long", func(e map[string]any) { e["selector_path"] = strings.Repeat("x", maxSelectorPath+1) }, "selector_path", "max_length"},
	}
	h := newHarness(t, &memStore{}, RecorderConfig{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := wireEvent(t, 1)
			tc.alter(ev)
			rec := h.do(http.MethodPost, eventsPath, postBody(wireEvent(t, 0), ev))
			if tc.field == "" {
				var got PostEventsResponse
				decode(t, rec, http.StatusAccepted, &got)
				return
			}
			p := problemAt(t, rec, http.StatusUnprocessableEntity, problem.CodeValidation, "events.1."+tc.field)
			if len(p.Errors) != 1 || p.Errors[0].Code != tc.code {
				t.Fatalf("errors = %+v, want one %s", p.Errors, tc.code)
			}
		})
	}
}

func TestPostEventsKeepsMetadataAndTruncatedMessages(t *testing.T) {
	st := &memStore{}
	h := newHarness(t, st, RecorderConfig{})
	ev := wireEvent(t, 0)
	ev["metadata"] = json.RawMessage(`{"k": {"n": [1, "two", null, true]}}`)
	ev["error_message"] = strings.Repeat("é", MaxErrorMessageBytes/2)
	var got PostEventsResponse
	decode(t, h.do(http.MethodPost, eventsPath, postBody(ev)), http.StatusAccepted, &got)
	h.flush()
	st.mu.Lock()
	stored := slices.Clone(st.events)
	st.mu.Unlock()
	if len(stored) != 1 {
		t.Fatalf("stored %d events", len(stored))
	}
	e := stored[0]
	if b, _ := json.Marshal(e.Metadata); string(b) != `{"k":{"n":[1,"two",null,true]}}` {
		t.Errorf("metadata stored as %s", b)
	}
	if len(e.ErrorMessage) > maxErrorMessage || !strings.HasPrefix(e.ErrorMessage, "éé") {
		t.Errorf("error message of %d bytes stored", len(e.ErrorMessage))
	}
}

func TestJSONShape(t *testing.T) {
	cases := []struct {
		in              string
		depth, elements int
	}{
		{`{}`, 1, 0},
		{`{"a":1}`, 1, 1},
		{`{"a":1,"b":[1,2,3]}`, 2, 5},
		{`{"a":"x,y[{"}`, 1, 1},
		{`{"a":"\"],"}`, 1, 1},
		{` { "a" : [ { } , [ ] ] } `, 3, 3},
		{`{"m":[{},{},{}]}`, 3, 4},
	}
	for _, tc := range cases {
		d, n := jsonShape([]byte(tc.in))
		if d != tc.depth || n != tc.elements {
			t.Errorf("jsonShape(%s) = %d, %d; want %d, %d", tc.in, d, n, tc.depth, tc.elements)
		}
	}
}

// TestStatsAnswerWithHugeStoredDurations reproduces the issue: two events with execution_duration_ms
// 1.7e308 made GET /observability/stats answer 200 with an empty body for their agent. They are refused
// at the API now; stored through the store directly, statistics leave them out and still answer.
func TestStatsAnswerWithHugeStoredDurations(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		if _, ok := st.(*memStore); ok {
			t.Skip("the in-memory fake does not aggregate in a database")
		}
		h := newHarness(t, st, RecorderConfig{})
		events := mkEvents(0, 3)
		huge := 1.7e308
		events[0].ExecutionDurationMS, events[1].ExecutionDurationMS = &huge, &huge
		if err := st.InsertEvents(context.Background(), events); err != nil {
			t.Fatal(err)
		}
		var got StatsResponse
		decode(t, h.do(http.MethodGet, statsPath+"?agent_name=agent-a", nil), http.StatusOK, &got)
		if got.Totals.ExecutionCount != 3 {
			t.Fatalf("stats = %+v", got)
		}
		for _, c := range got.Controls {
			if c.AvgDurationMS > MaxDurationMS {
				t.Fatalf("control %d: avg_duration_ms = %v", c.ControlID, c.AvgDurationMS)
			}
		}
	})
}
