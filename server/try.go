package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// tryRequest is the body of POST /controls/try: a draft control's data, and a step to evaluate it on.
type tryRequest struct {
	Data  json.RawMessage `json:"data"`
	Step  *guard.Step     `json:"step"`
	Stage string          `json:"stage"`
}

// tryControlID is the id the draft gets in the result (a saved control's id is positive).
const tryControlID = 0

// tryControl is POST /controls/try: it evaluates draft control data on one step with the engine and
// the server's evaluator registry, and answers the engine's result exactly as POST /evaluation would
// for an agent whose only control is the draft. The draft is evaluated as enabled whatever its enabled
// and execution fields say (the point is to see what it would decide); nothing is stored, recorded or
// cached. Admin only, like /controls/validate: evaluators can be costly and reach external services.
func (s *Server) tryControl(w http.ResponseWriter, r *http.Request) {
	var req tryRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var probs []guard.Problem
	d, err := s.parseDataOnly(req.Data)
	if err != nil {
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Code != problem.CodeValidation {
			s.writeErr(w, r, err)
			return
		}
		probs = append(probs, pe.Problems...)
	}
	stage, err := guard.ParseStage(req.Stage)
	if err != nil {
		probs = append(probs, guard.Problem{Field: "stage", Code: "enum", Message: "must be one of pre, post"})
	}
	switch {
	case req.Step == nil:
		probs = append(probs, guard.Problem{Field: "step", Code: "required", Message: "is required"})
	default:
		if req.Step.Type == "" {
			probs = append(probs, guard.Problem{Field: "step.type", Code: "required", Message: "must be a non-empty string"})
		}
		if req.Step.Name == "" {
			probs = append(probs, guard.Problem{Field: "step.name", Code: "required", Message: "must be a non-empty string"})
		}
	}
	if len(probs) > 0 {
		s.writeErr(w, r, problem.Validation("the try request is not valid", probs...))
		return
	}
	d.Enabled = true
	eng := guard.New(guard.WithRegistry(s.cfg.registry), guard.WithExecution(guard.ExecutionServer, guard.ExecutionSDK), guard.WithLogger(s.log))
	if err := eng.Update([]guard.Control{{ID: tryControlID, Name: "draft", Data: d}}); err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			s.writeErr(w, r, problem.Validation("the control data is not valid", ve.WithPrefix("data").Problems...))
			return
		}
		s.writeErr(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.evalTimeout)
	res, err := eng.Evaluate(ctx, req.Step, stage)
	cancel()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := writeResult(w, res); err != nil {
		s.writeErr(w, r, err)
	}
}
