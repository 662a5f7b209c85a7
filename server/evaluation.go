package server

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

type evaluationRequest struct {
	AgentName string      `json:"agent_name"`
	Step      *guard.Step `json:"step"`
	Stage     string      `json:"stage"`
	// TargetType and TargetID are sent (as null, or together) by the reference implementation's SDKs,
	// whose server merges controls bound to such a target. guard links controls to agents only: they are
	// accepted (strings or null, as declared fields they cost the decoder nothing) and ignored.
	TargetType *string `json:"target_type"`
	TargetID   *string `json:"target_id"`
}

// evaluate is POST /evaluation: the agent's cached engine evaluates the step at the stage. With a tracer
// provider, the evaluation is also a span (tracing.go).
func (s *Server) evaluate(w http.ResponseWriter, r *http.Request) {
	if s.tracer == nil {
		s.evaluateTraced(w, r, nil)
		return
	}
	r, sp := s.startEvaluationSpan(r)
	s.evaluateTraced(w, r, sp)
}

// evaluateTraced is evaluate; sp, when not nil, is ended with the outcome.
func (s *Server) evaluateTraced(w http.ResponseWriter, r *http.Request, sp trace.Span) {
	var req evaluationRequest
	if err := s.decodeEvaluation(w, r, &req); err != nil {
		s.failEvaluation(w, r, sp, err)
		return
	}
	agent, stage, err := validateEvaluation(&req)
	if err == nil && s.auth.enabled {
		err = checkAgent(r.Context(), agent, "agent_name")
	}
	if err != nil {
		s.failEvaluation(w, r, sp, err)
		return
	}
	res, err := s.evaluateStep(r, agent, req.Step, stage)
	if err != nil {
		s.failEvaluation(w, r, sp, err)
		return
	}
	if sp != nil {
		endEvaluationSpan(sp, agent, req.Step, stage, res)
	}
	if err := writeResult(w, res); err != nil {
		s.writeErr(w, r, err)
	}
}

// evaluateStep is the evaluation of POST /evaluation once its request is decoded and checked: the agent's
// cached engine, the request's deadline, approvals (requests opened, grants used), metrics, events,
// capture and shadow controls. r is the request the step came with (its context, trace headers and key);
// the LLM proxy's steps (llmproxy) go through here too, so they are evaluated exactly as POST /evaluation
// evaluates them.
func (s *Server) evaluateStep(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error) {
	eng, err := s.cache.get(r.Context(), agent)
	if err != nil {
		return nil, err
	}
	// One deadline bounds the request's evaluations as a whole, enforced then shadow: controls it leaves
	// unevaluated are evaluator errors, and shadow controls get only what the enforced ones left, so
	// they never delay the answer past it (issue 23: a fresh deadline per pass doubled the bound).
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.evalTimeout)
	defer cancel()
	// Shadow controls are evaluated with the enforced ones, on the session state as it was before the
	// step (EvaluateWithShadow), and recorded once the enforced outcome is.
	shadow := eng.HasShadow() && s.cfg.obs.enabled && s.cfg.obs.recorder != nil
	var res, shadowRes *guard.Result
	if shadow {
		res, shadowRes, err = eng.EvaluateWithShadow(ctx, step, stage)
	} else {
		res, err = eng.Evaluate(ctx, step, stage)
	}
	if err != nil {
		return nil, err
	}
	if res.Approval != nil {
		res = s.settleApproval(r, eng, agent, step, stage, res)
	}
	s.afterEvaluation(r, agent, step, stage, res)
	if shadow {
		s.recordShadow(r, agent, step, stage, shadowRes)
	}
	return res, nil
}

// failEvaluation writes err and, when sp is not nil, records it on the span and ends it.
func (s *Server) failEvaluation(w http.ResponseWriter, r *http.Request, sp trace.Span, err error) {
	if sp != nil {
		failEvaluationSpan(sp, err)
	}
	s.writeErr(w, r, err)
}

func validateEvaluation(req *evaluationRequest) (string, guard.Stage, error) {
	var probs []guard.Problem
	agent, err := guard.NormalizeAgentName(req.AgentName)
	if err != nil {
		probs = append(probs, guard.Problem{Field: "agent_name", Code: "invalid", Message: err.Error()})
	}
	stage, err := guard.ParseStage(req.Stage)
	if err != nil {
		probs = append(probs, guard.Problem{Field: "stage", Code: "enum", Message: "must be one of pre, post"})
	}
	if req.Step == nil {
		probs = append(probs, guard.Problem{Field: "step", Code: "required", Message: "is required"})
	} else {
		if req.Step.Type == "" {
			probs = append(probs, guard.Problem{Field: "step.type", Code: "required", Message: "must be a non-empty string"})
		}
		if req.Step.Name == "" {
			probs = append(probs, guard.Problem{Field: "step.name", Code: "required", Message: "must be a non-empty string"})
		}
		probs = append(probs, sessionIDProblems(req.Step)...)
	}
	if len(probs) > 0 {
		return "", "", problem.Validation("the evaluation request is not valid", probs...)
	}
	return agent, stage, nil
}
