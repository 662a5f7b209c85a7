package guard

import "context"

// checkSession is Check on a snapshot whose controls use session state. It decides as Check does (deny
// and steer controls in order, stopping at the first genuine match) and then, only when the step is let
// through, evaluates the controls with action.session.add_labels that apply to it, whose labels the step
// adds: no result lists are built. A snapshot with external evaluators goes through Evaluate.
func (e *Engine) checkSession(ctx context.Context, snap *snapshot, step *Step, stage Stage) error {
	if snap.hasExternal {
		res, err := e.evaluateSession(ctx, snap, step, stage)
		if err != nil {
			return err
		}
		return res.Err()
	}
	var d decider
	v, err := e.sessionLoop(ctx, snap, step, stage, func(v *sessionView) sessOutcome {
		var out sessOutcome
		d, out = e.decideSession(ctx, snap, step, stage, v)
		return out
	})
	if err != nil {
		return err
	}
	defer v.release()
	berr := d.err()
	if berr == nil {
		return nil
	}
	w := d.won
	if w == nil {
		w = d.fbDeny
	}
	if w == nil {
		w = d.fbSteer
	}
	if facts := v.history(snap, w); len(facts) > 0 {
		suffix := " (session history: " + historyText(facts) + ")"
		switch x := berr.(type) {
		case *ControlViolationError:
			x.Message += suffix
		case *ControlSteerError:
			x.Message += suffix
		}
	}
	return berr
}

// decideSession is one sequential Check of step with session view v.
func (e *Engine) decideSession(ctx context.Context, snap *snapshot, step *Step, stage Stage, v *sessionView) (decider, sessOutcome) {
	sc := snap.getScratch()
	sc.sess = v
	defer snap.putScratch(sc)
	cands := snap.candidates(stage, step.Type, step.Name, sc)
	r := run{ctx: ctx, snap: snap, step: step, sc: sc}
	var d decider
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
	out := sessOutcome{decision: DecisionAllow}
	switch {
	case d.won != nil:
		out.decision, out.winner = d.won.decision, d.won
	case d.fbDeny != nil:
		out.decision, out.winner = DecisionDeny, d.fbDeny
	case d.fbSteer != nil:
		out.decision, out.winner = DecisionSteer, d.fbSteer
	}
	if out.winner != nil || len(snap.session.effects) == 0 {
		return d, out
	}
	// Let through: the labelling controls that apply (candidates of class other, not visited above).
	for _, ci := range cands {
		c := &snap.controls[ci]
		if c.class != classOther || c.effect == nil || len(c.effect.AddLabels) == 0 {
			continue
		}
		if o := r.node(&c.root); o.effective() {
			out.effects = append(v.effects, c)
			v.effects = out.effects
		}
	}
	return d, out
}
