package server

import (
	"context"
	"net/http"
	"time"

	"github.com/guardrail-control/guard/server/problem"
)

// readyTimeout bounds the database ping of GET /ready: a probe must get an answer before its own timeout
// (Kubernetes' default is 1 s; set timeoutSeconds to at least 3 for this endpoint).
const readyTimeout = 2 * time.Second

// readyResponse is the 200 body of GET /ready.
type readyResponse struct {
	Status   string `json:"status"`
	Database string `json:"database"`
}

// ready is GET /ready, the readiness probe: 200 when the database answers, otherwise 503
// DATABASE_UNAVAILABLE, so an orchestrator can act on the status code alone. GET /health stays the
// liveness answer (200 whenever the process serves HTTP): a database outage should take a replica out of
// the load balancer, not restart it.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	w.Header().Set("Cache-Control", "no-store")
	if err := s.store.Ping(ctx); err != nil {
		problem.Write(w, r, nil, problem.New(http.StatusServiceUnavailable, problem.CodeDatabaseUnavailable,
			"not ready: the database does not answer"))
		return
	}
	problem.WriteJSON(w, http.StatusOK, readyResponse{Status: "ready", Database: "ok"})
}
