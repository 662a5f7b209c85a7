package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/templates"
)

// templateSummary is a template in GET /control-templates.
type templateSummary struct {
	Name        string                `json:"name"`
	Title       string                `json:"title"`
	Description string                `json:"description"`
	Category    string                `json:"category"`
	Evaluators  []string              `json:"evaluators"`
	Parameters  []templates.Parameter `json:"parameters"`
}

// templateDetail is GET /control-templates/{name}: the summary and the control data with its placeholders.
type templateDetail struct {
	templateSummary
	DataTemplate json.RawMessage `json:"data_template"`
}

func summarize(t *templates.Template) templateSummary {
	return templateSummary{Name: t.Name, Title: t.Title, Description: t.Description, Category: t.Category,
		Evaluators: t.Evaluators(), Parameters: t.Parameters}
}

// availableTemplates are the shipped templates this server can render: those whose evaluators its registry
// has (a server built without the sql evaluator does not offer destructive-sql).
func (s *Server) availableTemplates() []*templates.Template {
	return templates.Shipped().Available(func(name string) bool {
		_, ok := s.cfg.registry.Lookup(name)
		return ok
	})
}

// pathTemplate finds the template named by the path, among the available ones; otherwise a 404.
func (s *Server) pathTemplate(r *http.Request) (*templates.Template, error) {
	name := r.PathValue("template_name")
	for _, t := range s.availableTemplates() {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, problem.New(http.StatusNotFound, problem.CodeNotFound, "control template not found")
}

// listTemplates is GET /control-templates.
func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	ts := s.availableTemplates()
	out := make([]templateSummary, 0, len(ts))
	for _, t := range ts {
		out = append(out, summarize(t))
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Templates []templateSummary `json:"templates"`
	}{out})
}

// getTemplate is GET /control-templates/{template_name}.
func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) {
	t, err := s.pathTemplate(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, templateDetail{templateSummary: summarize(t), DataTemplate: t.Data})
}

type renderRequest struct {
	Parameters map[string]any `json:"parameters"`
}

type renderResponse struct {
	ControlData  guard.ControlData       `json:"control_data"`
	OmittedTests []templates.OmittedTest `json:"omitted_tests"`
}

// renderTemplate is POST /control-templates/{template_name}/render: the parameters are checked, substituted
// and the result validated with the server's evaluators; the template's tests run under the evaluation
// timeout. Nothing is stored.
func (s *Server) renderTemplate(w http.ResponseWriter, r *http.Request) {
	t, err := s.pathTemplate(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var req renderRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.evalTimeout)
	defer cancel()
	out, err := t.Render(ctx, req.Parameters, templates.WithRegistry(s.cfg.registry))
	if err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			err = problem.Validation("the parameters are not valid", ve.Problems...)
		}
		s.writeErr(w, r, err)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, renderResponse{ControlData: out.Data, OmittedTests: out.OmittedTests})
}
