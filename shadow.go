package guard

import (
	"context"
	"errors"
)

// compileShadow compiles the shadow controls of controls (enabled, run by this engine, mode shadow)
// into an engine of their own, or returns nil when there are none: the enforced snapshot never holds
// them, so Evaluate and Check cannot see them. prev is the error of the enforced compilation; the
// result's error adds the shadow controls' problems to it. Strict, a shadow control that does not
// compile fails the whole update, as any other control does.
//
// Every shadow control is compiled in the class that never ends an evaluation: each is evaluated on
// its own, a shadow deny does not stop the others.
func compileShadow(controls []Control, cfg engineConfig, tolerant bool, prev error) (*Engine, error) {
	found := false
	for i := range controls {
		d := &controls[i].Data
		ex := d.Execution
		if ex == "" {
			ex = ExecutionServer
		}
		if d.Enabled && d.Mode == ModeShadow && cfg.executions[ex] {
			found = true
			break
		}
	}
	if !found {
		return nil, prev
	}
	cfg.shadow = true
	s, err := compile(controls, &cfg, tolerant)
	err = joinValidation(prev, err)
	if s == nil {
		return nil, err
	}
	for i := range s.controls {
		s.controls[i].class = classOther
	}
	sh := &Engine{cfg: cfg}
	sh.snap.Store(s)
	return sh, err
}

// joinValidation merges the problems of two validation errors (either may be nil).
func joinValidation(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	var va, vb *ValidationError
	if errors.As(a, &va) && errors.As(b, &vb) {
		return &ValidationError{Problems: append(append([]Problem(nil), va.Problems...), vb.Problems...)}
	}
	return a
}

// HasShadow reports whether the engine holds enabled shadow controls (mode shadow) that it runs.
func (e *Engine) HasShadow() bool { return e.shadow.Load() != nil }

// EvaluateShadow evaluates step at stage against the shadow controls only, each on its own (a matched
// shadow deny does not stop the others), and returns what they would have decided: the lists hold
// every shadow control that applies, the decision fields are those of the shadow set alone (deny if a
// shadow deny control counts as matched, else steer, else allow). It returns nil, nil when the engine
// has no shadow controls: their cost is paid only when they exist. Evaluate and Check never see shadow
// controls; a caller records this result (events with shadow set) and never acts on it.
//
// It fails, as Evaluate does, only for a nil step or an invalid stage.
func (e *Engine) EvaluateShadow(ctx context.Context, step *Step, stage Stage) (*Result, error) {
	sh := e.shadow.Load()
	if sh == nil {
		if step == nil {
			return nil, ErrNilStep
		}
		if !stage.Valid() {
			return nil, ErrInvalidStage
		}
		return nil, nil
	}
	res, err := sh.Evaluate(ctx, step, stage)
	if err != nil {
		return nil, err
	}
	wouldBe(res)
	return res, nil
}

// wouldBe sets the decision fields of a shadow result, whose controls were evaluated without the
// classes that pick a winner: the first deny that counts as matched (a genuine match before a
// fail-closed error), else the first steer, as Evaluate would have picked among them.
func wouldBe(res *Result) {
	var w *ControlResult
	errored := false
	for _, d := range []Decision{DecisionDeny, DecisionSteer} {
		for i := range res.Matches {
			if res.Matches[i].Action == d {
				w = &res.Matches[i]
				break
			}
		}
		if w == nil {
			for i := range res.Errors {
				if res.Errors[i].Action == d && res.Errors[i].Result.Matched {
					w, errored = &res.Errors[i], true
					break
				}
			}
		}
		if w != nil {
			break
		}
	}
	if w == nil {
		return
	}
	res.IsSafe = false
	res.Decision = w.Action
	res.Confidence = w.Result.Confidence
	res.Reason = reasonText(w.ControlName, w.Action, w.Result.Message, errored, w.Metadata, w.SteeringContext)
	if w.Action == DecisionSteer {
		res.SteeringContext = w.SteeringContext
	}
}
