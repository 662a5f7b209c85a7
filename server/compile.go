package server

import (
	"context"
	"encoding/json"
	"errors"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// A control that was valid when saved can fail to compile later (an external evaluator that is no longer
// configured, a rule that became stricter). Such a control must neither take the agent's other controls
// down nor silently disappear. The server compiles every other control as usual and replaces the broken
// control's condition with a leaf of the placeholder evaluator below, which always fails with a message
// saying the control could not be compiled. The control keeps its scope and action, so the engine applies
// the normal on_error rule: by default (on_error deny) the error counts as a match and a deny control
// blocks the step (fail closed); when every leaf of the original condition says on_error allow it counts
// as no match (fail open). Either way the control appears in the result's errors list.

// unavailableEvaluator is the name of the placeholder evaluator (not listed by GET /evaluators, not
// accepted in saved controls).
const unavailableEvaluator = "guard.unavailable"

// withUnavailable returns a registry with every evaluator of reg plus the placeholder.
func withUnavailable(reg *evaluator.Registry) *evaluator.Registry {
	out := evaluator.NewRegistry()
	for _, f := range reg.List() {
		out.Register(*f)
	}
	out.Register(evaluator.Factory{
		Name:         unavailableEvaluator,
		Description:  "placeholder for a control that could not be compiled; always an evaluator error",
		Version:      "1",
		ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			msg, _ := config["message"].(string)
			return failing{msg: msg}, nil
		},
	})
	return out
}

type failing struct{ msg string }

func (f failing) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{}, errors.New(f.msg)
}

func (c *engineCache) newEngine() *guard.Engine {
	return guard.New(guard.WithRegistry(c.reg), guard.WithExecution(guard.ExecutionServer), guard.WithLogger(c.log))
}

// compile builds the engine of an agent's controls: only enabled server controls take part.
func (c *engineCache) compile(agent string, acs []guard.AgentControl) *guard.Engine {
	controls := make([]guard.Control, 0, len(acs))
	for _, ac := range acs {
		d := ac.Control
		if !ac.Enabled || !d.Enabled || (d.Execution != "" && d.Execution != guard.ExecutionServer) {
			continue
		}
		controls = append(controls, guard.Control{ID: ac.ControlID, Name: ac.Name, Data: d})
	}
	eng := c.newEngine()
	err := eng.Update(controls)
	if err == nil {
		return eng
	}
	for i := range controls {
		probe := c.newEngine()
		if perr := probe.Update(controls[i : i+1]); perr == nil {
			continue
		} else {
			c.log.Error("control does not compile; it is evaluated as an error (fail closed unless on_error allow)",
				zap.String("agent", agent), zap.Int64("control_id", controls[i].ID), zap.String("control", controls[i].Name), zap.Error(perr))
		}
		controls[i] = c.failClosed(controls[i])
	}
	if err := eng.Update(controls); err != nil {
		// Cannot happen unless the placeholder itself is refused; keep the agent fail-closed as a whole.
		c.log.Error("agent controls do not compile even with placeholders", zap.String("agent", agent), zap.Error(err))
		denyAll := make([]guard.Control, 0, len(controls))
		for _, ct := range controls {
			denyAll = append(denyAll, placeholder(ct, guard.Scope{}, guard.Action{Decision: guard.DecisionDeny}, "deny"))
		}
		_ = eng.Update(denyAll)
	}
	return eng
}

// failClosed replaces ct's condition with the placeholder; when the scope or the action are what is
// broken, they are widened (every step) and made deny, so the control still fails closed.
func (c *engineCache) failClosed(ct guard.Control) guard.Control {
	onErr := "deny"
	if allLeavesAllow(&ct.Data.Condition) {
		onErr = "allow"
	}
	for _, cand := range []guard.Control{
		placeholder(ct, ct.Data.Scope, ct.Data.Action, onErr),
		placeholder(ct, guard.Scope{}, ct.Data.Action, onErr),
		placeholder(ct, guard.Scope{}, guard.Action{Decision: guard.DecisionDeny}, "deny"),
	} {
		if c.newEngine().Update([]guard.Control{cand}) == nil {
			return cand
		}
	}
	return placeholder(ct, guard.Scope{}, guard.Action{Decision: guard.DecisionDeny}, "deny")
}

func placeholder(ct guard.Control, scope guard.Scope, action guard.Action, onErr string) guard.Control {
	ct.Data = guard.ControlData{
		Description: ct.Data.Description,
		Enabled:     true,
		Execution:   guard.ExecutionServer,
		Scope:       scope,
		Action:      action,
		Condition: guard.Condition{
			Selector: &guard.Selector{Path: "*"},
			Evaluator: &guard.EvaluatorSpec{Name: unavailableEvaluator, Config: map[string]any{
				"on_error": onErr,
				"message":  "control " + ct.Name + " could not be compiled on the server (see the server log)",
			}},
		},
	}
	return ct
}

// allLeavesAllow reports whether every leaf of c sets on_error to allow (a tree with no leaf: false).
func allLeavesAllow(c *guard.Condition) bool {
	leaves, allow := 0, 0
	var walk func(*guard.Condition, int)
	walk = func(n *guard.Condition, depth int) {
		if n == nil || depth > 32 {
			return
		}
		if n.IsLeaf() {
			leaves++
			if n.Evaluator != nil {
				if v, _ := n.Evaluator.Config["on_error"].(string); v == "allow" {
					allow++
				}
			}
			return
		}
		for i := range n.And {
			walk(&n.And[i], depth+1)
		}
		for i := range n.Or {
			walk(&n.Or[i], depth+1)
		}
		walk(n.Not, depth+1)
	}
	walk(c, 0)
	return leaves > 0 && leaves == allow
}
