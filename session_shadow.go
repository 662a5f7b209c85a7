package guard

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Shadow controls that read session state are evaluated with the enforced ones of the same step
// (EvaluateWithShadow), on the state as it was before the step: the state the enforced controls read,
// not the one their commit leaves, so that a shadow control decides — and numbers its events — as the
// same control enforced would. A shadow count or sum that no enforced control keeps has counters of its
// own, its would-be counters (keys starting with shadowKeyPrefix): they count the steps the enforced
// controls let through and the shadow controls would have let through, as the counter would count them
// were the shadow controls enforced, and they are committed with the step (the same store operation,
// no extra round trip). A shadow control never writes labels, and never adds to an enforced counter.

// shadowKeyPrefix starts the key of a would-be counter in a session or agent state.
const shadowKeyPrefix = "w"

// IsShadowCounter reports whether a counter key of a SessionState is a shadow control's would-be
// counter (the session view shows them apart).
func IsShadowCounter(key string) bool { return strings.HasPrefix(key, shadowKeyPrefix) }

// markShadowCounters gives the counters of the shadow snapshot sh that no enforced control of s keeps
// keys of their own (shadowKeyPrefix), and lists them in sh's plan as its own: the enforced evaluation
// commits what the step adds to them.
func markShadowCounters(sh, s *snapshot) {
	if sh == nil || sh.session == nil {
		return
	}
	kept := map[string]bool{}
	if s.session != nil {
		for _, sel := range s.session.counters {
			kept[selIdentity(sel)] = true
		}
		for _, sel := range s.session.agentCtrs {
			kept[selIdentity(sel)] = true
		}
	}
	for i := range sh.paths {
		sel := sh.paths[i].sel.sess
		if sel == nil || kept[selIdentity(sel)] {
			continue
		}
		switch sel.kind {
		case sessCount:
			sel.keyPre = shadowKeyPrefix + sel.keyPre
		case sessCountNamed, sessSum:
			sel.key = shadowKeyPrefix + sel.key
		default:
			continue
		}
		sh.session.ownShadow = true
	}
}

// selIdentity names the counter a selector reads: selectors of equal identity read one counter.
func selIdentity(sel *sessionSel) string {
	return fmt.Sprintf("%t|%d|%d|%s", sel.agent, sel.kind, sel.window.Milliseconds(), sel.name)
}

// shadowPass is the evaluation of the shadow controls within the enforced evaluation of a step.
type shadowPass struct {
	eng  *Engine   // the shadow engine
	snap *snapshot // its snapshot (with a session plan)
	res  *Result   // the last attempt's result; nil when skipped (the deadline had passed)
}

// run evaluates the shadow controls on the states the enforced attempt read (sess, ag), or with the
// session leaves failing when storeErr is set, and adds the step's would-be contributions to c when the
// enforced controls let the step through (out) and the shadow controls would have too.
func (p *shadowPass) run(ctx context.Context, id string, sess, ag *SessionState, step *Step, stage Stage, now time.Time,
	storeErr error, out sessOutcome, c *SessionCommit) {
	p.res = nil
	if ctx.Err() != nil {
		return // the request's deadline passed during the enforced controls: nothing left for these
	}
	var sv *sessionView
	if storeErr != nil {
		sv = getView()
		sv.id, sv.err, sv.stage, sv.step, sv.plan = id, storeErr, stage, step, p.snap.session
	} else {
		sv = p.eng.newView(p.snap.session, id, sess, ag, step, stage, now)
	}
	res := p.eng.evaluate(ctx, p.snap, step, stage, sv)
	wouldBe(res)
	sv.finish(p.snap, res)
	p.res = res
	if c != nil && storeErr == nil && p.snap.session.ownShadow && !blocks(out.decision) && !blocks(res.Decision) {
		for _, a := range sv.adds {
			if IsShadowCounter(a.key) && c.Write {
				c.Adds = append(c.Adds, CounterAdd{Key: a.key, WindowMS: a.window, Add: a.add})
			}
		}
		for _, a := range sv.agAdds {
			if IsShadowCounter(a.key) {
				c.AgentAdds = append(c.AgentAdds, CounterAdd{Key: a.key, WindowMS: a.window, Add: a.add})
			}
		}
	}
	sv.release()
}

// EvaluateWithShadow evaluates step at stage against the enforced controls, as Evaluate does, and
// against the shadow controls, as EvaluateShadow does (shadow is nil when the engine has none, or when
// ctx's deadline passed during the enforced controls), with one difference that matters to controls
// reading session state: both read the session as it was before the step, and the step's commit also
// keeps the shadow controls' would-be counters and the step's record (so that shadow controls number
// steps as enforced ones do, even on an agent whose only session controls are in shadow). Evaluate
// followed by EvaluateShadow reads, in the shadow pass, the state the enforced pass committed.
func (e *Engine) EvaluateWithShadow(ctx context.Context, step *Step, stage Stage) (res, shadow *Result, err error) {
	sh := e.shadow.Load()
	if sh == nil {
		res, err = e.Evaluate(ctx, step, stage)
		return res, nil, err
	}
	if step == nil {
		return nil, nil, ErrNilStep
	}
	if !stage.Valid() {
		return nil, nil, ErrInvalidStage
	}
	if ctx == nil {
		ctx = context.Background()
	}
	snap, ssnap := e.load(), sh.load()
	if ssnap.session == nil {
		// The shadow controls read no session state: the two passes are independent.
		if res, err = e.Evaluate(ctx, step, stage); err != nil || ctx.Err() != nil {
			return res, nil, err
		}
		shadow, err = e.EvaluateShadow(ctx, step, stage)
		return res, shadow, err
	}
	plan := snap.session
	if plan == nil {
		plan = noSessionPlan // only the shadow controls use sessions: the enforced pass records the step
	}
	pass := &shadowPass{eng: sh, snap: ssnap}
	v, err := e.sessionLoopPlan(ctx, snap, plan, step, stage, func(v *sessionView) sessOutcome {
		res = e.evaluate(ctx, snap, step, stage, v)
		return outcomeOf(snap, res)
	}, pass)
	if err != nil {
		return nil, nil, err
	}
	v.finish(snap, res)
	v.release()
	return res, pass.res, nil
}

// noSessionPlan is the session plan of an enforced snapshot without session controls whose shadow
// controls read session state: it reads nothing and writes the step's record.
var noSessionPlan = &sessionPlan{}
