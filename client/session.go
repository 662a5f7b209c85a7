package client

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/guardrail-control/guard"
)

// Session is one run or conversation of the agent (docs/control-language.md, "Sessions"): the steps
// checked through it, or through a function wrapped by Protect and called with its Context, carry its id
// in context.session_id, so that controls reading session state (rule-of-two, tool-loop, budgets) see
// them together, in-process and on the server alike.
type Session struct {
	a  *Agent
	id string
}

// NewSession opens a session with id (at most guard.MaxSessionIDBytes bytes), or a new random id when id
// is empty.
func (a *Agent) NewSession(id string) (*Session, error) {
	if id == "" {
		id = uuid.NewString()
	}
	if len(id) > guard.MaxSessionIDBytes {
		return nil, errors.New("guard client: a session id must be at most 128 bytes")
	}
	return &Session{a: a, id: id}, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Context returns ctx with the session's id added to the step context (WithStepContext) of the steps
// Protect checks under it; the step context ctx already carries is kept.
func (s *Session) Context(ctx context.Context) context.Context {
	base, _ := ctx.Value(stepContextKey{}).(map[string]any)
	m := make(map[string]any, len(base)+1)
	for k, v := range base {
		m[k] = v
	}
	m["session_id"] = s.id
	return WithStepContext(ctx, m)
}

// CheckStep is Agent.CheckStep for a step of this session: step.Context gets the session id (a new map;
// the caller's is not modified).
func (s *Session) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	if step == nil {
		return s.a.CheckStep(ctx, step, stage)
	}
	m := make(map[string]any, len(step.Context)+1)
	for k, v := range step.Context {
		m[k] = v
	}
	m["session_id"] = s.id
	step.Context = m
	return s.a.CheckStep(ctx, step, stage)
}
