package server

import (
	"context"
	"strconv"

	guard "github.com/guardrail-control/guard"
)

// Step labels: a step schema registered with initAgent may declare session labels ("labels":
// ["egress"]); the agent's engine adds them to the session of each such step let through at the pre stage
// (docs/control-language.md, "Sessions"). The store moves the agent's revision when its step labels
// change, so the engine cache recompiles, and reads them again, as it does on a change of controls.

// stepLabelReader is the store's reader of an agent's step labels (store.Store has it).
type stepLabelReader interface {
	AgentStepLabels(ctx context.Context, agent string) (map[string][]string, error)
}

// applyStepLabels gives eng the labels of the agent's steps, when its controls use session state (the
// labels mean nothing to the others, which then cost no query).
func (c *engineCache) applyStepLabels(ctx context.Context, agent string, eng *guard.Engine) error {
	if !eng.UsesSessions() {
		return nil
	}
	r, ok := c.reader.(stepLabelReader)
	if !ok {
		return nil
	}
	labels, err := r.AgentStepLabels(ctx, agent)
	if err != nil {
		return err
	}
	eng.SetStepLabels(labels)
	return nil
}

// stepLabelSet returns the labels of the agent's steps as a set for replay engines (empty when the store
// cannot read them).
func (s *Server) stepLabelSet(ctx context.Context, agent string) (*guard.StepLabels, error) {
	set := &guard.StepLabels{}
	r, ok := s.store.(stepLabelReader)
	if !ok {
		return set, nil
	}
	labels, err := r.AgentStepLabels(ctx, agent)
	if err != nil {
		return set, err
	}
	set.Set(labels)
	return set, nil
}

// stepLabelProblems validates the labels of registered steps (at <stepsField>.<i>.labels).
func stepLabelProblems(steps []guard.StepSchema, stepsField string) []guard.Problem {
	var probs []guard.Problem
	for i := range steps {
		probs = append(probs, guard.CheckLabels(steps[i].Labels, stepsField+"."+strconv.Itoa(i)+".labels")...)
	}
	return probs
}
