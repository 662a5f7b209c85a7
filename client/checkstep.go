package client

import (
	"context"
	"errors"

	"github.com/guardrail-control/guard"
)

// CheckStep evaluates one stage of a step against the agent's controls, exactly as a function wrapped by
// Protect is checked: sdk controls in-process, server controls in-process or by POST /evaluation (the
// same choice Protect makes, see Config.LocalServerControls), with the same events and logs. It returns
// nil to proceed, *guard.ControlViolationError for a deny and *guard.ControlSteerError for a steer.
//
// It is for callers that see steps as data rather than as Go functions: gateways and middleware that
// check calls they only forward (the MCP gateway in client/mcpgateway). The step's Input must already be
// a JSON value (string, float64, bool, nil, []any, map[string]any), and so must its Output at stage post;
// step.Type and step.Name are required.
//
// When a control with action.redact matched, CheckStep replaces step.Input (stage pre) or step.Output
// (stage post) with the redacted value: the caller hands on that instead of what it had (a new value;
// the one it passed is not modified).
func (a *Agent) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	if step == nil || step.Type == "" || step.Name == "" {
		return errors.New("guard client: CheckStep needs a step with a type and a name")
	}
	if !stage.Valid() {
		return errors.New(`guard client: CheckStep needs stage "pre" or "post"`)
	}
	cfg := protectConfig{stepType: step.Type, stepName: step.Name}
	_, err := a.check(ctx, step, stage, &cfg)
	return err
}
