package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/timeparam"
	"github.com/guardrail-control/guard/server/problem"
)

// Bounds of GET /api/v1/steps/captured.
const (
	// maxCapturedReadBytes bounds the step JSON of one answer: beyond it the answer stops early (has_more),
	// so that a hundred large steps cannot make one read hold tens of megabytes. The first step is always
	// returned.
	maxCapturedReadBytes = 8 << 20
	// maxCapturedFilterLen bounds step_type and step_name; a longer one cannot name a registered step.
	maxCapturedFilterLen = 255
)

// capturedStepsPage is the answer of GET /api/v1/steps/captured.
type capturedStepsPage struct {
	AgentName string               `json:"agent_name"`
	Steps     []guard.CapturedStep `json:"steps"`
	Limit     int                  `json:"limit"`
	HasMore   bool                 `json:"has_more"`
}

// listCapturedSteps is GET /api/v1/steps/captured: an agent's captured steps, newest first, for samples
// (the dashboard fills its Try it panel and its tests from them). The steps hold payloads (redacted as
// they were stored, but still the agent's real traffic), so the route takes the admin key, like the replay
// whose samples show the same content.
func (s *Server) listCapturedSteps(w http.ResponseWriter, r *http.Request) {
	q, err := parseCapturedQuery(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := checkAgent(r.Context(), q.AgentName, "agent_name"); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if _, err := s.store.AgentRevision(r.Context(), q.AgentName); errors.Is(err, guard.ErrAgentNotFound) {
		pe := problem.New(http.StatusNotFound, problem.CodeAgentNotFound, "agent not found")
		pe.Problems = []guard.Problem{{Field: "agent_name", Code: "not_found", Message: "no agent has this name"}}
		s.writeErr(w, r, pe)
		return
	} else if err != nil {
		s.writeErr(w, r, err)
		return
	}
	cs, ok := s.store.(guard.CaptureStore)
	if !ok {
		s.writeErr(w, r, problem.New(http.StatusServiceUnavailable, codeReplayUnavailable, "this server's store keeps no captured steps"))
		return
	}
	steps, more, err := cs.CapturedSteps(r.Context(), q)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	for i := range steps {
		// Stored steps are JSON the recorder encoded; one that is not (edited by hand) must not turn the
		// whole answer into a 500: it is reduced to its type and name.
		if !json.Valid(steps[i].Step) {
			steps[i].Step, _ = json.Marshal(map[string]string{"type": steps[i].StepType, "name": steps[i].StepName})
		}
	}
	if steps == nil {
		steps = []guard.CapturedStep{}
	}
	problem.Respond(w, r, s.log, http.StatusOK, capturedStepsPage{AgentName: q.AgentName, Steps: steps, Limit: q.Limit, HasMore: more})
}

// parseCapturedQuery reads the query parameters of GET /steps/captured; every problem names its parameter.
func parseCapturedQuery(r *http.Request) (guard.CaptureQuery, error) {
	qv := r.URL.Query()
	q := guard.CaptureQuery{MaxBytes: maxCapturedReadBytes, NewestFirst: true}
	var probs []guard.Problem
	add := func(field, code, msg string) {
		probs = append(probs, guard.Problem{Field: field, Code: code, Message: msg})
	}
	if raw := qv.Get("agent_name"); raw == "" {
		add("agent_name", "required", "is required")
	} else if name, err := guard.NormalizeAgentName(raw); err != nil {
		add("agent_name", "invalid", err.Error())
	} else {
		q.AgentName = name
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"step_type", &q.StepType}, {"step_name", &q.StepName}} {
		v := qv.Get(f.name)
		if len(v) > maxCapturedFilterLen {
			add(f.name, "max_length", "must be at most 255 bytes")
		}
		*f.dst = v
	}
	if raw := qv.Get("stage"); raw != "" {
		stage, err := guard.ParseStage(raw)
		if err != nil {
			add("stage", "enum", "must be one of pre, post")
		}
		q.Stage = stage
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"start_time", &q.Start}, {"end_time", &q.End}} {
		if raw := qv.Get(f.name); raw != "" {
			t, err := timeparam.Parse(raw)
			if err != nil {
				code, msg := timeparam.Problem(err)
				add(f.name, code, msg)
			}
			*f.dst = t
		}
	}
	if !q.Start.IsZero() && !q.End.IsZero() && !q.Start.Before(q.End) {
		add("start_time", "range", "must be before end_time")
	}
	n, prob := queryLimit(qv)
	if prob != nil {
		probs = append(probs, *prob)
	}
	q.Limit = n
	if len(probs) > 0 {
		return q, problem.Validation("the captured steps request is not valid", probs...)
	}
	return q, nil
}
