package server

import (
	"net/http"

	guard "github.com/guardrail-control/guard"
)

// obsConfig holds the observability wiring (metrics, event recorder); filled in by WithMetrics and
// WithObservability.
type obsConfig struct{}

// obsRoutes returns the /observability routes (none until the observability package is wired).
func (s *Server) obsRoutes() []route { return nil }

// observeHTTP wraps next with the HTTP metrics middleware when metrics are configured.
func (s *Server) observeHTTP(next http.Handler) http.Handler { return next }

// afterEvaluation records metrics and observability events of one evaluation.
func (s *Server) afterEvaluation(r *http.Request, agent string, step *guard.Step, stage guard.Stage, res *guard.Result) {
}
