package observability

import (
	"net/http"

	"github.com/guardrail-control/guard/server/problem"
)

// StatusResponse is the answer of GET /observability/status, the reference implementation's probe of its
// event pipeline, with guard's buffer figures beside its fields.
type StatusResponse struct {
	// Status is "healthy" when events are recorded and stored, "disabled" when OBSERVABILITY_ENABLED is
	// false (the other endpoints then answer 503).
	Status              string `json:"status"`
	IngestorInitialized bool   `json:"ingestor_initialized"` // the recorder (buffer and writer) runs
	StoreInitialized    bool   `json:"store_initialized"`    // an event store is configured
	Durable             bool   `json:"durable"`              // OBSERVABILITY_DURABLE
	Pending             int    `json:"pending"`              // events buffered, not written yet
	Dropped             int64  `json:"dropped"`              // events dropped since the start (buffer full)
}

// Status answers GET /observability/status. It answers 200 also when observability is disabled, saying
// so, since its purpose is to tell.
func (a *API) Status(w http.ResponseWriter, r *http.Request) {
	out := StatusResponse{Status: "healthy", IngestorInitialized: a.Enabled && a.Recorder != nil,
		StoreInitialized: a.Enabled && a.Store != nil, Durable: a.Durable}
	if !out.IngestorInitialized || !out.StoreInitialized {
		out.Status = "disabled"
	}
	if a.Recorder != nil {
		st := a.Recorder.Stats()
		out.Pending, out.Dropped = st.Pending, st.Dropped
	}
	problem.Respond(w, r, a.logger(), http.StatusOK, out)
}
