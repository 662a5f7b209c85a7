package observability

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// TestDurablePostEventsAnswersOnceCommitted checks the durable mode: 201 only after the store holds
// the events, nothing left in the buffer; a failed write is a 503 with Retry-After and nothing stored.
func TestDurablePostEventsAnswersOnceCommitted(t *testing.T) {
	eachStore(t, func(t *testing.T, st guard.EventStore) {
		h := newHarness(t, st, RecorderConfig{})
		h.api.Durable = true
		var got PostEventsResponse
		decode(t, h.do(http.MethodPost, eventsPath, postBody(wireEvent(t, 0), wireEvent(t, 1))), http.StatusCreated, &got)
		if got != (PostEventsResponse{Received: 2, Stored: 2, Status: "queued"}) {
			t.Fatalf("response = %+v", got)
		}
		// No flush: the events are in the database already.
		var q QueryResponse
		decode(t, h.do(http.MethodPost, queryPath, map[string]any{}), http.StatusOK, &q)
		if q.Total != 2 {
			t.Fatalf("the store holds %d events after the 201, want 2", q.Total)
		}
		if s := h.api.Recorder.Stats(); s.Pending != 0 || s.PendingBytes != 0 || s.Written != 2 {
			t.Fatalf("recorder stats = %+v", s)
		}
	})
}

func TestDurablePostEventsReportsAFailedWrite(t *testing.T) {
	st := &memStore{fail: func(int) error { return errors.New("connection refused: secret-host:5432") }}
	h := newHarness(t, st, RecorderConfig{})
	h.api.Durable = true
	rec := h.do(http.MethodPost, eventsPath, postBody(wireEvent(t, 0)))
	p := problemOf(t, rec, http.StatusServiceUnavailable, problem.CodeDatabaseUnavailable)
	if rec.Header().Get("Retry-After") == "" || st.count() != 0 {
		t.Fatalf("Retry-After %q, %d stored", rec.Header().Get("Retry-After"), st.count())
	}
	if len(p.Errors) != 0 || strings.Contains(rec.Body.String(), "secret-host") {
		t.Fatalf("problem = %s", rec.Body)
	}
}
