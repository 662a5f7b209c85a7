package observability

import (
	"net/http"
	"unicode/utf8"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// MaxTraceEvents bounds the events GET /observability/traces/{trace_id} returns (the newest).
const MaxTraceEvents = 1000

// traceOut is the answer of GET /observability/traces/{trace_id}: the events of one trace, as
// POST /observability/events/query answers them, and the trace id.
type traceOut struct {
	TraceID string     `json:"trace_id"`
	Events  []eventOut `json:"events"`
	Total   int        `json:"total"`
	Limit   int        `json:"limit"`
	Offset  int        `json:"offset"`
}

// Trace is GET /observability/traces/{trace_id}, which the reference's dashboard reads: the events of one
// trace, newest first, at most MaxTraceEvents (total counts them all). A trace with no events (or none
// the key may read) is a 200 with an empty list, so a dashboard shows an empty trace rather than an error.
// It is POST /observability/events/query with {"trace_id": ..., "limit": 1000}.
func (a *API) Trace(w http.ResponseWriter, r *http.Request) {
	if !a.available(w, r, false) {
		return
	}
	id := r.PathValue("trace_id")
	if id == "" || len(id) > 256 || !utf8.ValidString(id) {
		problem.Write(w, r, a.logger(), problem.Validation("the trace id is not valid",
			guard.Problem{Field: "trace_id", Code: "invalid", Message: "must be 1 to 256 bytes of UTF-8"}))
		return
	}
	scope, err := a.scoped(r.Context(), "", "agent_name")
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	a.catchUp(w, r)
	events, total, err := a.Store.QueryEvents(r.Context(), guard.EventQuery{TraceID: id, Limit: MaxTraceEvents, Scope: scope})
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	if events == nil {
		events = []guard.Event{}
	}
	problem.Respond(w, r, a.logger(), http.StatusOK, traceOut{TraceID: id, Events: toEventsOut(events), Total: total, Limit: MaxTraceEvents})
}
