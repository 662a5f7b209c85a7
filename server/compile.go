package server

import (
	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// A control that was valid when saved can fail to compile later (an external evaluator that is no longer
// configured, a rule that became stricter). Such a control must neither take the agent's other controls
// down nor silently disappear: the engine compiles it with guard.Engine.UpdateTolerant, which turns each
// leaf it cannot build into an evaluator error under that leaf's on_error (deny, the default, fails
// closed) and a control whose scope or action no longer validates into a deny of every step. Either way
// the control appears in the result's errors list, and the server logs why.

// compile builds the engine of an agent's controls: only enabled server controls take part.
func (c *engineCache) compile(agent string, acs []guard.AgentControl) *guard.Engine {
	controls := make([]guard.Control, 0, len(acs))
	for _, ac := range acs {
		d := ac.Control
		if !ac.Enabled || !d.Enabled || (d.Execution != "" && d.Execution != guard.ExecutionServer) {
			continue
		}
		controls = append(controls, guard.Control{ID: ac.ControlID, Name: ac.Name, Data: d, Version: ac.Version})
	}
	eng := guard.New(guard.WithRegistry(c.reg), guard.WithExecution(guard.ExecutionServer), guard.WithLogger(c.log),
		guard.WithAgentName(agent), guard.WithSessionStore(c.sessionStore()))
	err := eng.UpdateTolerant(controls)
	for _, cp := range guard.ProblemsByControl(err) {
		ct := &controls[cp.Index]
		c.log.Error("control does not compile; it is evaluated as an error (its on_error decides, a broken scope or action denies every step)",
			zap.String("agent", agent), zap.Int64("control_id", ct.ID), zap.String("control", ct.Name),
			zap.Error(&guard.ValidationError{Problems: cp.Problems}))
	}
	return eng
}
