package client

import "github.com/guardrail-control/guard"

// Step labels (guard.StepSchema.Labels) are sent with the registration, where the server applies them to
// its own evaluations, and applied here to the in-process engines (sdk controls, and server controls
// evaluated locally), so that a session control decides the same in both places.

func newStepLabels(steps []guard.StepSchema) *guard.StepLabels {
	sl := &guard.StepLabels{}
	sl.Set(guard.LabelsOfSteps(steps))
	return sl
}

// SetStepLabels replaces the labels the in-process engines give the agent's steps with those steps
// declare; call it when the agent registers a new list of steps (the MCP gateway does on a change of its
// upstream's tools). The labels of the server's own evaluations come from the registration.
func (a *Agent) SetStepLabels(steps []guard.StepSchema) {
	if a.stepLabels == nil { // an Agent not made by Init has no in-process engines
		return
	}
	a.stepLabels.Set(guard.LabelsOfSteps(steps))
}
