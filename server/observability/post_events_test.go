package observability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

const eventsPath = "/api/v1/observability/events"

func TestPostEventsStoresTheBatch(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := newHarness(t, st, RecorderConfig{})
		a, b, c, d := wireEvent(t, 0), wireEvent(t, 1), wireEvent(t, 2), wireEvent(t, 3)
		a["agent_name"] = "  Agent-A "
		b["action"] = "observe"
		b["applies_to"] = "llm_call" // step_type (tool) wins when both are given
		d["applies_to"] = "llm_call"
		delete(d, "step_type")
		delete(c, "source") // defaults to sdk
		c["applies_to"] = "tool_call"
		delete(c, "step_type")
		c["trace_id"], c["span_id"] = "trace-1", "span-1"
		c["metadata"] = map[string]any{"k": "v"}
		c["error_message"] = strings.Repeat("é", maxErrorMessage) // truncated, not refused

		var got PostEventsResponse
		decode(t, h.do(http.MethodPost, eventsPath, postBody(a, b, c, d)), http.StatusAccepted, &got)
		if got != (PostEventsResponse{Received: 4, Enqueued: 4, Dropped: 0, Status: "queued"}) {
			t.Fatalf("response = %+v", got)
		}
		h.flush()
		var q QueryResponse
		decode(t, h.do(http.MethodPost, queryPath, map[string]any{}), http.StatusOK, &q)
		if q.Total != 4 || len(q.Events) != 4 {
			t.Fatalf("stored %d events (%d returned), want 4", q.Total, len(q.Events))
		}
		byID := map[string]guard.Event{}
		for _, e := range q.Events {
			byID[e.ControlExecutionID] = e
		}
		if e := byID[a["control_execution_id"].(string)]; e.AgentName != "agent-a" {
			t.Errorf("agent name stored as %q, want it normalised", e.AgentName)
		}
		if e := byID[b["control_execution_id"].(string)]; e.Action != guard.DecisionObserve || e.StepType != "tool" {
			t.Errorf("observe stored as %q, want observe (as written); step type %q, want step_type's tool over applies_to", e.Action, e.StepType)
		}
		if e := byID[d["control_execution_id"].(string)]; e.StepType != "llm" {
			t.Errorf("applies_to llm_call stored as step type %q, want llm", e.StepType)
		}
		e := byID[c["control_execution_id"].(string)]
		if e.Source != SourceSDK || e.StepType != "tool" || e.TraceID != "trace-1" || e.SpanID != "span-1" || e.Metadata["k"] != "v" ||
			len(e.ErrorMessage) > maxErrorMessage || !strings.HasPrefix(e.ErrorMessage, "éé") ||
			e.ExecutionDurationMS == nil || *e.ExecutionDurationMS != 1.5 || e.ControlName != "control-3" {
			t.Errorf("stored event = %+v", e)
		}
	})
}

func TestPostEventsRejectsInvalidEvents(t *testing.T) {
	const secret = "s3cr3t-VALUE"
	cases := []struct {
		name  string
		alter func(e map[string]any)
		field string
		code  string
	}{
		{"execution id not a uuid", func(e map[string]any) { e["control_execution_id"] = secret }, "control_execution_id", "format"},
		{"missing agent", func(e map[string]any) { delete(e, "agent_name") }, "agent_name", "required"},
		{"bad agent name", func(e map[string]any) { e["agent_name"] = secret + " !" }, "agent_name", "invalid"},
		{"missing control id", func(e map[string]any) { delete(e, "control_id") }, "control_id", "required"},
		{"negative control id", func(e map[string]any) { e["control_id"] = -1 }, "control_id", "range"},
		{"control id not a number", func(e map[string]any) { e["control_id"] = secret }, "control_id", "type"},
		{"missing stage", func(e map[string]any) { delete(e, "check_stage") }, "check_stage", "required"},
		{"bad stage", func(e map[string]any) { e["check_stage"] = secret }, "check_stage", "enum"},
		{"missing action", func(e map[string]any) { delete(e, "action") }, "action", "required"},
		{"bad action", func(e map[string]any) { e["action"] = secret }, "action", "enum"},
		{"missing timestamp", func(e map[string]any) { delete(e, "timestamp") }, "timestamp", "required"},
		{"bad timestamp", func(e map[string]any) { e["timestamp"] = secret }, "timestamp", "format"},
		{"timestamp offset +24:00", func(e map[string]any) { e["timestamp"] = "2026-11-27T10:00:00+24:00" }, "timestamp", "range"},
		{"timestamp offset -14:30", func(e map[string]any) { e["timestamp"] = "2026-11-27T10:00:00-14:30" }, "timestamp", "range"},
		{"control id 1e400", func(e map[string]any) { e["control_id"] = json.RawMessage("1e400") }, "control_id", "range"},
		{"duration 1e400", func(e map[string]any) { e["execution_duration_ms"] = json.RawMessage("1e400") }, "execution_duration_ms", "range"},
		{"confidence below 0", func(e map[string]any) { e["confidence"] = -0.1 }, "confidence", "range"},
		{"confidence above 1", func(e map[string]any) { e["confidence"] = 1.01 }, "confidence", "range"},
		{"confidence not a number", func(e map[string]any) { e["confidence"] = secret }, "confidence", "type"},
		{"matched not a boolean", func(e map[string]any) { e["matched"] = secret }, "matched", "type"},
		{"server source", func(e map[string]any) { e["source"] = SourceServer }, "source", "reserved"},
		{"bad source", func(e map[string]any) { e["source"] = secret }, "source", "enum"},
		{"repeated key", nil, "metadata.k", "duplicate_key"},
		{"negative duration", func(e map[string]any) { e["execution_duration_ms"] = -1 }, "execution_duration_ms", "range"},
		{"long control name", func(e map[string]any) { e["control_name"] = strings.Repeat("x", 256) }, "control_name", "max_length"},
		{"long step name", func(e map[string]any) { e["step_name"] = strings.Repeat("x", 256) }, "step_name", "max_length"},
		{"metadata not an object", func(e map[string]any) { e["metadata"] = secret }, "metadata", "type"},
	}
	h := newHarness(t, &memStore{}, RecorderConfig{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := wireEvent(t, 1)
			if tc.alter != nil {
				tc.alter(bad)
			} else {
				bad["metadata"] = map[string]any{"k": "MARK"}
			}
			raw, err := json.Marshal(postBody(wireEvent(t, 0), bad, wireEvent(t, 2)))
			if err != nil {
				t.Fatal(err)
			}
			// A body encoding/json cannot produce: one key twice in the metadata.
			body := strings.Replace(string(raw), `"k":"MARK"`, `"k":"v","k":"`+secret+`"`, 1)
			rec := h.do(http.MethodPost, eventsPath, body)
			p := problemOf(t, rec, http.StatusUnprocessableEntity, problem.CodeValidation)
			want := "events.1." + tc.field
			if len(p.Errors) != 1 || p.Errors[0].Field != want || p.Errors[0].Code != tc.code {
				t.Fatalf("errors = %+v, want one %s on %s", p.Errors, tc.code, want)
			}
			if strings.Contains(rec.Body.String(), secret) {
				t.Fatalf("the response echoes the client's value: %s", rec.Body)
			}
		})
	}
	h.flush()
	if n := h.api.Recorder.Stats().Received; n != 0 {
		t.Fatalf("%d events of rejected batches reached the recorder", n)
	}
}

func TestPostEventsReportsEveryBadEvent(t *testing.T) {
	h := newHarness(t, &memStore{}, RecorderConfig{})
	a, b := wireEvent(t, 0), wireEvent(t, 1)
	a["source"] = SourceServer
	a["confidence"] = 2
	b["check_stage"] = "during"
	p := problemOf(t, h.do(http.MethodPost, eventsPath, postBody(a, wireEvent(t, 2), b)), http.StatusUnprocessableEntity, problem.CodeValidation)
	got := map[string]bool{}
	for _, e := range p.Errors {
		got[e.Field] = true
	}
	for _, f := range []string{"events.0.source", "events.0.confidence", "events.2.check_stage"} {
		if !got[f] {
			t.Errorf("no error on %s in %+v", f, p.Errors)
		}
	}
}

func TestPostEventsRejectsBadBatches(t *testing.T) {
	many := make([]map[string]any, MaxEventsPerRequest+1)
	for i := range many {
		many[i] = map[string]any{"control_execution_id": uuid.NewString()}
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no body", "", http.StatusBadRequest, problem.CodeInvalidJSON, ""},
		{"not json", "{", http.StatusBadRequest, problem.CodeInvalidJSON, ""},
		{"no events", map[string]any{}, http.StatusUnprocessableEntity, problem.CodeValidation, "events"},
		{"null events", `{"events": null}`, http.StatusUnprocessableEntity, problem.CodeValidation, "events"},
		{"empty events", postBody(), http.StatusUnprocessableEntity, problem.CodeValidation, "events"},
		{"events not an array", `{"events": {"a": 1}}`, http.StatusUnprocessableEntity, problem.CodeValidation, "events"},
		{"repeated top-level key", `{"events": [], "events": []}`, http.StatusUnprocessableEntity, problem.CodeValidation, "events"},
		{"event not an object", `{"events": [1]}`, http.StatusUnprocessableEntity, problem.CodeValidation, "events.0"},
		{"null event", `{"events": [null]}`, http.StatusUnprocessableEntity, problem.CodeValidation, "events.0"},
		{"too many events", map[string]any{"events": many}, http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge, ""},
	}
	h := newHarness(t, &memStore{}, RecorderConfig{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := problemAt(t, h.do(http.MethodPost, eventsPath, tc.body), tc.status, tc.code, tc.field)
			if tc.status == http.StatusRequestEntityTooLarge && !strings.Contains(p.Detail, fmt.Sprint(MaxEventsPerRequest)) {
				t.Fatalf("detail %q does not give the limit", p.Detail)
			}
		})
	}
}

func TestPostEventsRefusesWhatDoesNotFitAndLosesNothingElse(t *testing.T) {
	st := &memStore{block: make(chan struct{})}
	h := newHarness(t, st, RecorderConfig{BufferSize: 100, BatchSize: 10})
	accepted, refused := 0, 0
	for r := 0; r < 6; r++ { // 240 events into a buffer of 100 while the database is stuck
		events := make([]map[string]any, 40)
		for i := range events {
			events[i] = wireEvent(t, r*40+i)
		}
		rec := h.do(http.MethodPost, eventsPath, postBody(events...))
		if rec.Code == http.StatusServiceUnavailable {
			problemOf(t, rec, http.StatusServiceUnavailable, CodeBufferFull)
			if ra := rec.Header().Get("Retry-After"); ra == "" {
				t.Fatal("503 without Retry-After")
			}
			refused += 40
			continue
		}
		var got PostEventsResponse
		decode(t, rec, http.StatusAccepted, &got)
		if got != (PostEventsResponse{Received: 40, Enqueued: 40, Status: "queued"}) {
			t.Fatalf("response = %+v", got)
		}
		accepted += 40
	}
	if accepted != 80 || refused != 160 {
		t.Fatalf("accepted %d and refused %d events, want 80 and 160: a request is taken whole or not at all", accepted, refused)
	}
	close(st.block)
	h.flush()
	if st.count() != accepted {
		t.Fatalf("stored %d events, the responses accepted %d", st.count(), accepted)
	}
	m := scrape(t, h.metrics)
	if v := counterValue(t, m, "guard_events_refused_total", nil); v != float64(refused) {
		t.Fatalf("events_refused_total = %v, want %d", v, refused)
	}
	if v := counterValue(t, m, "guard_events_dropped_total", map[string]string{"reason": DropBufferFull}); v != 0 {
		t.Fatalf("events_dropped_total{buffer_full} = %v, want 0: posted events are refused, not dropped", v)
	}
}

// TestPostEventsAssignsAnExecutionID: an event without control_execution_id (absent, empty or null), as
// the reference accepts it, is stored with a fresh UUID of its own.
func TestPostEventsAssignsAnExecutionID(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := newHarness(t, st, RecorderConfig{})
		absent, empty, null := wireEvent(t, 0), wireEvent(t, 1), wireEvent(t, 2)
		delete(absent, "control_execution_id")
		empty["control_execution_id"] = ""
		null["control_execution_id"] = nil
		if rec := h.do(http.MethodPost, eventsPath, postBody(absent, empty, null)); rec.Code != http.StatusAccepted {
			t.Fatalf("post: %d %s", rec.Code, rec.Body)
		}
		var q QueryResponse
		decode(t, h.do(http.MethodPost, queryPath, map[string]any{}), http.StatusOK, &q)
		ids := map[string]bool{}
		for _, e := range q.Events {
			if _, err := uuid.Parse(e.ControlExecutionID); err != nil {
				t.Errorf("stored execution id %q is not a UUID", e.ControlExecutionID)
			}
			ids[e.ControlExecutionID] = true
		}
		if q.Total != 3 || len(ids) != 3 {
			t.Fatalf("stored %d events with %d distinct ids, want 3 and 3", q.Total, len(ids))
		}
	})
}
