package server

import (
	"context"
	"errors"
	"net/http"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// checkTests runs a control's own tests (data.tests) with the engine's runner: a failing test is a
// validation problem at data.tests.<i> saying what the control decided. The tests share one evaluation
// deadline.
func (s *Server) checkTests(ctx context.Context, d guard.ControlData) error {
	if len(d.Tests) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.evalTimeout)
	defer cancel()
	err := guard.CheckControlTests(ctx, "", d, guard.WithRegistry(s.cfg.registry))
	var ve *guard.ValidationError
	if errors.As(err, &ve) {
		return problem.Validation("the control does not pass its own tests", ve.WithPrefix("data").Problems...)
	}
	return err
}

// testOutcome is one test's outcome in the answer of POST /controls/test.
type testOutcome struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Outcome is match, no_match, error (an evaluator failed) or not_applied (the scope left the step out).
	Outcome string `json:"outcome"`
	// Decision is what the control alone decided.
	Decision guard.Decision `json:"decision"`
	// Message says what was expected and what the control decided, for a failing test.
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

type testResponse struct {
	Passed bool          `json:"passed"`
	Tests  []testOutcome `json:"tests"`
}

// testControl is POST /controls/test: the data is validated like POST /controls/validate, then its tests
// are run and every outcome returned (200 whether they pass or not), for an editor that shows them live.
func (s *Server) testControl(w http.ResponseWriter, r *http.Request) {
	var req dataRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	d, err := s.parseDataOnly(req.Data)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.evalTimeout)
	defer cancel()
	results, err := guard.RunControlTests(ctx, "", d, guard.WithRegistry(s.cfg.registry))
	if err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			err = problem.Validation("the control data is not valid", ve.WithPrefix("data").Problems...)
		}
		s.writeErr(w, r, err)
		return
	}
	out := testResponse{Passed: true, Tests: make([]testOutcome, 0, len(results))}
	for i, tr := range results {
		o := testOutcome{Name: tr.Name, Passed: tr.Passed, Outcome: "not_applied", Decision: guard.DecisionAllow}
		if res := tr.Result; res != nil {
			o.Decision = res.Decision
			switch {
			case len(res.Errors) > 0:
				o.Outcome, o.Error = "error", res.Errors[0].Result.Error
			case len(res.Matches) > 0:
				o.Outcome = guard.ExpectMatch
			case len(res.NonMatches) > 0:
				o.Outcome = guard.ExpectNoMatch
			}
		}
		if !tr.Passed {
			out.Passed = false
			o.Message = "expected " + d.Tests[i].Expect.String() + "; the control " + guard.Decided(tr.Result)
		}
		out.Tests = append(out.Tests, o)
	}
	problem.Respond(w, r, s.log, http.StatusOK, out)
}
