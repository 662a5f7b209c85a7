package guard

import "context"

// Check is the decision-only form of Evaluate: it returns nil when the step may proceed,
// *ControlViolationError for a deny, *ControlSteerError for a steer, with the same winner, message and
// metadata as Evaluate followed by Result.Err. It evaluates only deny and steer controls (the others
// cannot change the decision), stops as soon as the decision is known, and builds no per-control list:
// a step that matches nothing costs no allocation when its evaluators allocate none.
// A nil step or an invalid stage returns ErrNilStep or ErrInvalidStage. The deadline of ctx bounds the
// whole check as it does Evaluate: controls it leaves unevaluated fail by their on_error.
func (e *Engine) Check(ctx context.Context, step *Step, stage Stage) error {
	if step == nil {
		return ErrNilStep
	}
	if !stage.Valid() {
		return ErrInvalidStage
	}
	if ctx == nil {
		ctx = context.Background()
	}
	snap := e.load()
	if snap.session != nil {
		return e.checkSession(ctx, snap, step, stage) // session_check.go
	}
	sc := snap.getScratch()
	cands := snap.candidates(stage, step.Type, step.Name, sc)
	r := run{ctx: ctx, snap: snap, step: step, sc: sc}
	if snap.useLive(cands) {
		// Only the controls the step can make effective change the decision: the others would answer
		// "no match" (live.go).
		r.markLive()
		cands = r.liveDenySteer(stage)
	}
	var d decider
	reuse := true
	if snap.hasExternal && r.needsConcurrency(cands, true) {
		var outs []outcome
		outs, reuse = r.concurrent(cands, true, e.cfg.maxConcurrency)
		for pos, o := range outs {
			c := &snap.controls[cands[pos]]
			if !d.wants(c) {
				break
			}
			if o.done && !d.add(c, &o.out) {
				break
			}
		}
	} else {
		for _, ci := range cands {
			c := &snap.controls[ci]
			if !d.wants(c) {
				break
			}
			o := r.node(&c.root)
			if !d.add(c, &o) {
				break
			}
		}
	}
	err := d.err()
	if reuse {
		snap.putScratch(sc)
	}
	return err
}

// decider reaches Check's decision from outcomes fed in evaluation order, with the winner rules of
// Evaluate: the first genuine match, else the first control that counts as matched through on_error.
type decider struct {
	won     *cControl
	wonOut  nodeOut
	fbDeny  *cControl
	fbSteer *cControl
}

// wants reports whether control c can still change the decision.
func (d *decider) wants(c *cControl) bool {
	switch c.class {
	case classDeny:
		return true
	case classSteer:
		return d.fbDeny == nil
	}
	return false
}

// add takes the outcome of c and reports whether the decision is still open.
func (d *decider) add(c *cControl, o *nodeOut) bool {
	if !o.effective() {
		return true
	}
	if o.err == nil {
		d.won, d.wonOut = c, *o
		return false
	}
	switch c.class {
	case classDeny:
		if d.fbDeny == nil {
			d.fbDeny = c
		}
	case classSteer:
		if d.fbSteer == nil {
			d.fbSteer = c
		}
	}
	return true
}

func (d *decider) err() error {
	switch {
	case d.won != nil:
		return blockingError(d.won, d.wonOut.msg, false)
	case d.fbDeny != nil:
		return blockingError(d.fbDeny, "", true)
	case d.fbSteer != nil:
		return blockingError(d.fbSteer, "", true)
	}
	return nil
}

// blockingError is the error of a winning deny or steer control.
func blockingError(c *cControl, msg string, errored bool) error {
	reason := reasonText(c.name, c.decision, msg, errored, c.metadata, c.steering)
	if c.decision == DecisionSteer {
		e := &ControlSteerError{ControlID: c.id, ControlName: c.name, Message: reason, Metadata: c.metadata}
		if c.steering != nil {
			e.SteeringContext = *c.steering
		}
		return e
	}
	return &ControlViolationError{ControlID: c.id, ControlName: c.name, Message: reason, Metadata: c.metadata}
}

// Applies reports whether any enabled control of the snapshot applies to step at stage (false for a nil
// step or an invalid stage). It runs no evaluator.
func (e *Engine) Applies(step *Step, stage Stage) bool {
	if step == nil || !stage.Valid() {
		return false
	}
	return e.load().applies(stage, step.Type, step.Name)
}
