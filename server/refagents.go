package server

import (
	"context"
	"errors"
	"reflect"
	"time"

	guard "github.com/guardrail-control/guard"
)

// The agent answers with every field of the reference's models (docs/compatibility.md), beside guard's.

// refStepKey is a step named as the reference's overwrite_changes names it.
type refStepKey struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// overwriteChanges is the reference's InitAgentOverwriteChanges: what a registration changed. guard has
// no agent-registered evaluators, so the evaluator lists are always empty.
type overwriteChanges struct {
	MetadataChanged   bool         `json:"metadata_changed"`
	StepsAdded        []refStepKey `json:"steps_added"`
	StepsUpdated      []refStepKey `json:"steps_updated"`
	StepsRemoved      []refStepKey `json:"steps_removed"`
	EvaluatorsAdded   []string     `json:"evaluators_added"`
	EvaluatorsUpdated []string     `json:"evaluators_updated"`
	EvaluatorsRemoved []string     `json:"evaluators_removed"`
	EvaluatorRemovals []struct{}   `json:"evaluator_removals"`
}

// registeredBefore reads what an agent was before a registration; nil when it did not exist.
func (s *Server) registeredBefore(ctx context.Context, name string) (*guard.Agent, []guard.StepSchema, error) {
	agent, steps, err := s.store.GetAgent(ctx, name)
	if errors.Is(err, guard.ErrAgentNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return &agent, steps, nil
}

// diffRegistration compares an agent before and after a registration.
func diffRegistration(before *guard.Agent, oldSteps []guard.StepSchema, after guard.Agent, newSteps []guard.StepSchema) overwriteChanges {
	ch := overwriteChanges{StepsAdded: []refStepKey{}, StepsUpdated: []refStepKey{}, StepsRemoved: []refStepKey{},
		EvaluatorsAdded: []string{}, EvaluatorsUpdated: []string{}, EvaluatorsRemoved: []string{}, EvaluatorRemovals: []struct{}{}}
	if before == nil {
		for _, st := range newSteps {
			ch.StepsAdded = append(ch.StepsAdded, refStepKey{st.Type, st.Name})
		}
		return ch
	}
	ch.MetadataChanged = before.Description != after.Description || before.Version != after.Version ||
		!reflect.DeepEqual(nonNilMap(before.Metadata), nonNilMap(after.Metadata))
	old := make(map[refStepKey]guard.StepSchema, len(oldSteps))
	for _, st := range oldSteps {
		old[refStepKey{st.Type, st.Name}] = st
	}
	seen := make(map[refStepKey]bool, len(newSteps))
	for _, st := range newSteps {
		k := refStepKey{st.Type, st.Name}
		seen[k] = true
		if prev, ok := old[k]; !ok {
			ch.StepsAdded = append(ch.StepsAdded, k)
		} else if !reflect.DeepEqual(prev, st) {
			ch.StepsUpdated = append(ch.StepsUpdated, k)
		}
	}
	for _, st := range oldSteps {
		if k := (refStepKey{st.Type, st.Name}); !seen[k] {
			ch.StepsRemoved = append(ch.StepsRemoved, k)
		}
	}
	return ch
}

// replaces reports whether the registration changes what strict mode keeps: the agent's description,
// version or metadata, or a step's schema, or removes a step (adding steps is not replacing).
func (c *overwriteChanges) replaces() bool {
	return c.MetadataChanged || len(c.StepsUpdated)+len(c.StepsRemoved) > 0
}

func (c *overwriteChanges) any() bool {
	return c.MetadataChanged || len(c.StepsAdded)+len(c.StepsUpdated)+len(c.StepsRemoved) > 0
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// agentOut is an agent with the reference's agent_created_at and agent_updated_at beside guard's
// created_at and updated_at.
type agentOut struct {
	guard.Agent
	AgentCreatedAt time.Time `json:"agent_created_at"`
	AgentUpdatedAt time.Time `json:"agent_updated_at"`
}

func toAgentOut(a guard.Agent) agentOut {
	a = fixAgent(a)
	return agentOut{Agent: a, AgentCreatedAt: a.CreatedAt, AgentUpdatedAt: a.UpdatedAt}
}

// stepOut is a step with the reference's optional fields present (null when the step has none).
type stepOut struct {
	guard.StepSchema
	Description  *string        `json:"description"`
	InputSchema  map[string]any `json:"input_schema"`
	OutputSchema map[string]any `json:"output_schema"`
	Metadata     map[string]any `json:"metadata"`
}

func toStepsOut(steps []guard.StepSchema) []stepOut {
	out := make([]stepOut, len(steps))
	for i, st := range steps {
		o := stepOut{StepSchema: st, InputSchema: st.InputSchema, OutputSchema: st.OutputSchema, Metadata: st.Metadata}
		if st.Description != "" {
			o.Description = &steps[i].Description
		}
		out[i] = o
	}
	return out
}
