package client

import (
	"context"
	"net/http"

	"github.com/guardrail-control/guard"
)

// ControlTestOutcome is the outcome of one test of a control's data (data.tests), as POST /controls/test
// reports it.
type ControlTestOutcome struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Outcome is match, no_match, error (an evaluator failed) or not_applied (the scope left the step out).
	Outcome  string         `json:"outcome"`
	Decision guard.Decision `json:"decision"` // what the control alone decided
	Message  string         `json:"message,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// ControlTestReport is the answer of POST /controls/test.
type ControlTestReport struct {
	Passed bool                 `json:"passed"`
	Tests  []ControlTestOutcome `json:"tests"`
}

// TestControlData runs the tests data carries (data.tests) on the server and returns every outcome,
// passing or not; data that is not valid for another reason is an *APIError (422). An admin key is
// needed when authentication is on.
func (c *HTTPClient) TestControlData(ctx context.Context, data guard.ControlData) (ControlTestReport, error) {
	body := struct {
		Data guard.ControlData `json:"data"`
	}{Data: wireData(data)}
	var out ControlTestReport
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/controls/test", in: body, out: &out})
	return out, err
}
