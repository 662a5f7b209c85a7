package client

import (
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
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

// compile builds a policy from controls. It never fails: controls that were valid on the server but do
// not compile in this process (an evaluator it does not have, a config its evaluator refuses) are
// compiled with guard.Engine.UpdateTolerant, so their missing evaluators count as evaluator errors under
// their on_error and a control whose scope or action no longer validates denies every step; each such
// control is logged at warn level.
func (a *Agent) compile(controls []guard.Control, source string) *policy {
	p := &policy{controls: controls, source: source}
	p.sdk = a.engine(controls, guard.ExecutionSDK, source)
	p.srv = a.engine(controls, guard.ExecutionServer, source)
	return p
}

// engine compiles the controls of one execution (the others are dropped by the engine).
func (a *Agent) engine(controls []guard.Control, ex guard.Execution, source string) *guard.Engine {
	e := guard.New(guard.WithRegistry(a.s.Registry), guard.WithExecution(ex), guard.WithLogger(a.base),
		// sdk and in-process server controls each keep their own session state (a step checked by both
		// engines is one step for each of them).
		guard.WithAgentName(a.name+"/"+string(ex)), guard.WithSessionStore(a.sessions),
		guard.WithStepLabelSet(a.stepLabels))
	err := e.UpdateTolerant(controls)
	for _, cp := range guard.ProblemsByControl(err) {
		ct := &controls[cp.Index]
		a.log.Warn("control does not compile in this process; it is evaluated as an error (its on_error decides, a broken scope or action denies every step)",
			zap.String("agent", a.name), zap.String("source", source), zap.Int64("control_id", ct.ID),
			zap.String("control", ct.Name), zap.Error(&guard.ValidationError{Problems: cp.Problems}))
	}
	return e
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
		out = append(out, guard.Control{ID: id, Name: ac.Name, Data: d, Version: ac.Version})
	}
	return out
}
