package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/server/openapi"
	"github.com/guardrail-control/guard/server/problem"
)

// healthResponse is GET /health. The endpoint is a liveness probe: it answers 200 whenever the process
// serves HTTP, and reports the database separately ("ok" or "unavailable") so a readiness check can
// look at it without restarting a server whose database is briefly away.
type healthResponse struct {
	Status   string `json:"status"`
	Version  string `json:"version"`
	Database string `json:"database"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	db := "ok"
	if err := s.store.Ping(ctx); err != nil {
		db = "unavailable"
	}
	problem.Respond(w, r, s.log, http.StatusOK, healthResponse{Status: "healthy", Version: s.cfg.version, Database: db})
}

// evaluatorInfo is one evaluator as GET /evaluators shows it: the reference's EvaluatorInfo (timeout_ms
// is the default timeout, which a config's timeout_ms overrides).
type evaluatorInfo struct {
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Version        string          `json:"version"`
	ConfigSchema   json.RawMessage `json:"config_schema"`
	RequiresAPIKey bool            `json:"requires_api_key"`
	TimeoutMS      int64           `json:"timeout_ms"`
}

// listEvaluators answers the reference's shape, a map from evaluator name to its info (its clients
// validate it so; encoding/json writes the names sorted). guard's dashboard reads the same map.
func (s *Server) listEvaluators(w http.ResponseWriter, r *http.Request) {
	fs := s.cfg.registry.List()
	out := make(map[string]evaluatorInfo, len(fs))
	for _, f := range fs {
		schema := f.ConfigSchema
		if len(schema) == 0 || !json.Valid(schema) {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		timeout := evaluator.DefaultTimeout
		if f.External {
			timeout = evaluator.DefaultExternalTimeout
		}
		out[f.Name] = evaluatorInfo{Name: f.Name, Description: f.Description, Version: f.Version, ConfigSchema: schema,
			RequiresAPIKey: f.RequiresAPIKey, TimeoutMS: timeout.Milliseconds()}
	}
	problem.Respond(w, r, s.log, http.StatusOK, out)
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openapi.Document)
}

func (s *Server) docs(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// frame-ancestors 'none': no other site may frame the reference page (clickjacking).
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	_, _ = w.Write(openapi.DocsPage)
}
