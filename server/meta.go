package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

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

type evaluatorInfo struct {
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Version        string          `json:"version"`
	ConfigSchema   json.RawMessage `json:"config_schema"`
	RequiresAPIKey bool            `json:"requires_api_key"`
}

func (s *Server) listEvaluators(w http.ResponseWriter, r *http.Request) {
	fs := s.cfg.registry.List()
	out := make([]evaluatorInfo, 0, len(fs))
	for _, f := range fs {
		schema := f.ConfigSchema
		if len(schema) == 0 || !json.Valid(schema) {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, evaluatorInfo{Name: f.Name, Description: f.Description, Version: f.Version, ConfigSchema: schema, RequiresAPIKey: f.RequiresAPIKey})
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Evaluators []evaluatorInfo `json:"evaluators"`
	}{out})
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
