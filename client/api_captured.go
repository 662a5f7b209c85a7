package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/guardrail-control/guard"
)

// CapturedStepQuery selects the captured steps GET /steps/captured answers: those of AgentName (required),
// optionally of one step type, step name and stage, in [Start, End) (zero bounds do not restrict), at most
// Limit of them (0: the server's default, 20; at most 100), newest first.
type CapturedStepQuery struct {
	AgentName string
	StepType  string
	StepName  string
	Stage     guard.Stage
	Start     time.Time
	End       time.Time
	Limit     int
}

// CapturedStepPage is the answer of GET /steps/captured: the steps, newest first, each with its payload
// (Step, the JSON of a guard.Step as stored, redacted), and whether more matched (HasMore: read older ones
// with an earlier End).
type CapturedStepPage struct {
	AgentName string               `json:"agent_name"`
	Steps     []guard.CapturedStep `json:"steps"`
	Limit     int                  `json:"limit"`
	HasMore   bool                 `json:"has_more"`
}

// CapturedSteps reads an agent's captured steps (GET /steps/captured, admin key: they hold payloads), as
// samples to try a control on or to write its tests from. An unknown agent is an *APIError with status 404;
// an agent the server does not capture has no steps.
func (c *HTTPClient) CapturedSteps(ctx context.Context, q CapturedStepQuery) (*CapturedStepPage, error) {
	v := url.Values{}
	v.Set("agent_name", q.AgentName)
	for k, s := range map[string]string{"step_type": q.StepType, "step_name": q.StepName, "stage": string(q.Stage)} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if !q.Start.IsZero() {
		v.Set("start_time", q.Start.UTC().Format(time.RFC3339Nano))
	}
	if !q.End.IsZero() {
		v.Set("end_time", q.End.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out CapturedStepPage
	if _, err := c.do(ctx, call{method: http.MethodGet, path: "/steps/captured", query: v, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
