package client

import (
	"context"
	"fmt"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// policy is one immutable snapshot of the agent's controls, compiled twice: the sdk controls (always
// evaluated in-process) and the server controls (evaluated by the server, or in-process as a fallback).
type policy struct {
	sdk      *guard.Engine
	srv      *guard.Engine
	controls []guard.Control
	source   string // SourceServer, SourceFile or SourceNone
}

// Where the agent's current controls came from.
const (
	SourceNone   = "none"   // no controls: the server was unreachable at Init and there was no controls file
	SourceFile   = "file"   // the controls file, because the server was unreachable at Init
	SourceServer = "server" // the server, at Init or at the last successful refresh
)

// compile builds a policy from controls. Controls whose evaluators are not available in this process are
// compiled with a stand-in evaluator that always fails, so that they fall to their on_error.
func (a *Agent) compile(controls []guard.Control, source string) (*policy, error) {
	cs := make([]guard.Control, len(controls))
	for i, c := range controls {
		c.Data.Condition = substituteUnavailable(c.Data.Condition, a.reg)
		cs[i] = c
	}
	p := &policy{controls: controls, source: source}
	p.sdk = guard.New(guard.WithRegistry(a.reg), guard.WithExecution(guard.ExecutionSDK), guard.WithLogger(a.base))
	if err := p.sdk.Update(cs); err != nil {
		return nil, err
	}
	p.srv = guard.New(guard.WithRegistry(a.reg), guard.WithExecution(guard.ExecutionServer), guard.WithLogger(a.base))
	if err := p.srv.Update(cs); err != nil {
		return nil, err
	}
	return p, nil
}

// fromAgentControls turns the server's list into engine controls. A control is enabled when both its
// record and its data say so.
func fromAgentControls(acs []guard.AgentControl) []guard.Control {
	out := make([]guard.Control, 0, len(acs))
	for _, ac := range acs {
		id := ac.ControlID
		if id == 0 {
			id = ac.ID
		}
		d := ac.Control
		d.Enabled = d.Enabled && ac.Enabled
		if d.Execution == "" {
			d.Execution = guard.ExecutionServer
		}
		out = append(out, guard.Control{ID: id, Name: ac.Name, Data: d})
	}
	return out
}

// unavailableEvaluator is the registry name of the stand-in for evaluators missing in this process.
const unavailableEvaluator = "agent_control.unavailable"

// localRegistry copies the available factories of base and adds the stand-in evaluator.
func localRegistry(base *evaluator.Registry) *evaluator.Registry {
	r := evaluator.NewRegistry()
	for _, f := range base.List() {
		r.Register(*f)
	}
	r.Register(evaluator.Factory{
		Name:         unavailableEvaluator,
		Description:  "Stands in for an evaluator this process does not have: always fails, so on_error decides.",
		Version:      "1",
		ConfigSchema: []byte(`{"type":"object"}`),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			name, _ := config["evaluator"].(string)
			return unavailable{name: name}, nil
		},
	})
	return r
}

type unavailable struct{ name string }

func (u unavailable) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{}, fmt.Errorf("evaluator %q is not available in this process", u.name)
}

// substituteUnavailable returns c with every leaf whose evaluator reg does not have replaced by the
// stand-in (keeping its on_error). c itself is not modified; an unchanged tree is returned as is.
func substituteUnavailable(c guard.Condition, reg *evaluator.Registry) guard.Condition {
	switch {
	case c.Evaluator != nil:
		if _, ok := reg.Lookup(c.Evaluator.Name); ok {
			return c
		}
		cfg := map[string]any{"evaluator": c.Evaluator.Name}
		if oe, ok := c.Evaluator.Config["on_error"]; ok {
			cfg["on_error"] = oe
		}
		c.Evaluator = &guard.EvaluatorSpec{Name: unavailableEvaluator, Config: cfg, Metadata: c.Evaluator.Metadata}
		return c
	case c.Not != nil:
		n := substituteUnavailable(*c.Not, reg)
		c.Not = &n
		return c
	case c.And != nil:
		c.And = substituteList(c.And, reg)
		return c
	case c.Or != nil:
		c.Or = substituteList(c.Or, reg)
		return c
	}
	return c
}

func substituteList(list []guard.Condition, reg *evaluator.Registry) []guard.Condition {
	out := make([]guard.Condition, len(list))
	for i, c := range list {
		out[i] = substituteUnavailable(c, reg)
	}
	return out
}
