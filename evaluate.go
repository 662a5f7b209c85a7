package guard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/guardrail-control/guard/evaluator"
)

// Errors of Evaluate and Check for arguments that cannot be evaluated at all.
var (
	ErrNilStep      = errors.New("guard: step is nil")
	ErrInvalidStage = errors.New("guard: stage must be one of pre, post")
)

// run is one evaluation of one step against one snapshot.
type run struct {
	ctx  context.Context
	snap *snapshot
	step *Step
	sc   *scratch
	// timed: measure ControlResult.Duration, from the first evaluator a control runs to its end (the
	// clock is read only for controls that run an evaluator: reading it costs more than a skipped leaf).
	timed bool
	start time.Time
}

// elapsed returns the duration of the control just evaluated and resets the clock.
func (r *run) elapsed() time.Duration {
	if r.start.IsZero() {
		return 0
	}
	d := time.Since(r.start)
	r.start = time.Time{}
	return d
}

// nodeOut is the outcome of a condition node: matched with a confidence (the minimum over the leaves
// that ran), the message and metadata of the leaf that decided it, or an evaluator error (err and the
// leaf whose on_error applies).
type nodeOut struct {
	matched bool
	conf    float64
	msg     string
	meta    map[string]any
	err     error
	errLeaf *cLeaf
}

// effective reports whether the outcome counts as a match for the decision: a match, or an error of a
// leaf whose on_error is deny (fail closed).
func (o *nodeOut) effective() bool {
	if o.err != nil {
		return o.errLeaf == nil || o.errLeaf.onError != evaluator.OnErrorAllow
	}
	return o.matched
}

// node evaluates a condition tree left to right with short-circuit; an error ends the tree.
func (r *run) node(n *cNode) nodeOut {
	switch n.kind {
	case nodeAnd:
		out := nodeOut{matched: true, conf: 1}
		for i := range n.kids {
			k := r.node(&n.kids[i])
			if k.err != nil {
				return k
			}
			out.conf = math.Min(out.conf, k.conf)
			if !k.matched {
				k.conf = out.conf
				return k
			}
			if out.msg == "" {
				out.msg = k.msg
			}
			if out.meta == nil {
				out.meta = k.meta
			}
		}
		return out
	case nodeOr:
		out := nodeOut{conf: 1}
		for i := range n.kids {
			k := r.node(&n.kids[i])
			if k.err != nil {
				return k
			}
			out.conf = math.Min(out.conf, k.conf)
			if k.matched {
				k.conf = out.conf
				return k
			}
			if out.msg == "" {
				out.msg = k.msg
			}
		}
		return out
	case nodeNot:
		k := r.node(&n.kids[0])
		if k.err == nil {
			k.matched = !k.matched
			k.msg, k.meta = "", nil
		}
		return k
	}
	return r.leaf(n.leaf)
}

// leaf evaluates one selector + evaluator leaf, answering "no match, confidence 1" without running the
// evaluator when the prefilter shows that none of its required literals occurs in the text, or that the
// text has no run of characters as long as the evaluator requires (the run is measured only then).
func (r *run) leaf(l *cLeaf) nodeOut {
	d, err := r.sc.dataFor(r.snap, r.step, l.path)
	if err != nil {
		return nodeOut{err: err, errLeaf: l}
	}
	// The same test as ruledOut, written out: this is the path of nearly every leaf, a call costs here.
	if l.filtered || l.runMin > 0 {
		if _, ok := d.Value.(string); ok {
			if l.filtered {
				st := r.sc.scanFor(r.snap, l.path, d.Text)
				if !(l.foldsCase && st == scanNonASCII) && !r.sc.anyBit(l) {
					return nodeOut{conf: 1}
				}
			}
			if l.runMin > 0 && r.sc.runFor(r.snap, l.runSet, d.Text) < l.runMin {
				return nodeOut{conf: 1}
			}
		}
	}
	// No evaluator starts once the caller's deadline has passed or the caller has gone: the leaf is an
	// evaluator error, which its on_error turns into a decision (an atomic load when the context is live).
	if err := r.ctx.Err(); err != nil {
		return nodeOut{err: stoppedError(err), errLeaf: l}
	}
	if r.timed && r.start.IsZero() {
		r.start = time.Now()
	}
	var res evaluator.Result
	switch {
	case l.external:
		res, err = callExternal(r.ctx, l, d)
	case l.spanEv != nil && l.spanRoot == r.sc.payload:
		res, err = r.callSpans(l, d)
	default:
		res, err = callLocal(r.ctx, l, d)
	}
	if err != nil {
		if cerr := r.ctx.Err(); cerr != nil {
			// The evaluator gave up because the evaluation was stopped: say that, not its own words.
			err = stoppedError(cerr)
		} else if errors.Is(err, context.DeadlineExceeded) {
			// It stopped at the deadline a moment before the context's timer fired.
			err = ErrEvaluationDeadline
		}
		return nodeOut{err: err, errLeaf: l}
	}
	out := nodeOut{matched: res.Matched, conf: clampConfidence(res.Confidence), msg: res.Message, meta: res.Metadata}
	if out.matched && out.meta == nil {
		out.meta = l.specMeta
	}
	return out
}

// ruledOut reports whether the prefilter shows that leaf l cannot match d: the test leaf makes before
// running an evaluator. The redaction pass asks it for a leaf without recorded spans: what the evaluator
// cannot match, it finds no span of, and the scan and runs it reads were made by the evaluation.
func (r *run) ruledOut(l *cLeaf, d *evaluator.Data) bool {
	if _, ok := d.Value.(string); !ok {
		return false
	}
	if l.filtered {
		st := r.sc.scanFor(r.snap, l.path, d.Text)
		if !(l.foldsCase && st == scanNonASCII) && !r.sc.anyBit(l) {
			return true
		}
	}
	return l.runMin > 0 && r.sc.runFor(r.snap, l.runSet, d.Text) < l.runMin
}

// errEvaluatorPanic is reported when an evaluator panics: a bug in the evaluator, contained.
var errEvaluatorPanic = errors.New("evaluator panicked")

// callLocal runs a built-in (non-external) evaluator, which enforces its own timeout.
func callLocal(ctx context.Context, l *cLeaf, d *evaluator.Data) (res evaluator.Result, err error) {
	defer func() {
		if recover() != nil {
			res, err = evaluator.Result{}, errEvaluatorPanic
		}
	}()
	return l.ev.Evaluate(ctx, d)
}

func clampConfidence(c float64) float64 {
	switch {
	case math.IsNaN(c) || c < 0:
		return 0
	case c > 1:
		return 1
	}
	return c
}

// Evaluate checks step at stage against every enabled control that applies and returns the full result.
// It fails only for a nil step (ErrNilStep) or an invalid stage (ErrInvalidStage); evaluator failures
// are reported inside the result.
//
// Every evaluated control appears in exactly one list:
//   - Matches: its condition matched.
//   - NonMatches: its condition was evaluated and did not match.
//   - Errors: an evaluator in its condition failed (or the selected data could not be turned into
//     text, see MaxSelectedDepth). Result.Error holds the failure and Result.Matched what on_error made
//     of it: true for on_error deny (the default: the control counts as matched, so its action applies
//     and a deny control blocks), false for on_error allow (fail open). Confidence is 0.
//
// Controls are evaluated, and appear in each list, in this order: deny controls, then steer controls,
// then the others, each group by control id. Once a deny control has matched, the remaining controls are
// not evaluated and are not listed, except that the remaining controls with action.redact are evaluated
// for Result.Redacted alone (what a refused step leaves behind, an approval request or a captured step,
// carries the redactions of every redacting control that matches it). Controls with external evaluators run concurrently (see
// WithMaxConcurrency); after a deny, the ones still running are cancelled and not listed.
//
// Decision: deny if a deny control counts as matched, else steer if a steer control does, else allow.
// The winner among several is the first genuine match in evaluation order, or failing that the first
// control that counts as matched through on_error deny. Confidence is the winner's; for allow it is the
// minimum confidence of the listed matches and non-matches (1 when there are none). Reason is the
// winner's action metadata "reason", else (steer) its steering message, else its evaluator's message,
// else a default sentence naming the control; for a control that failed closed it says so.
//
// The deadline of ctx bounds the whole evaluation, not only each evaluator: once it has passed (or ctx
// is cancelled) no evaluator starts, an evaluator that is running is interrupted (the regex evaluator
// shortens its match timeout to the time left, external evaluators get ctx), and every control that
// still needed an evaluator is filed in Errors with ErrEvaluationDeadline (or ErrEvaluationCancelled)
// as its error, so its on_error decides: with the default deny, an evaluation that ran out of time
// blocks. The server and the client library give each evaluation DefaultEvaluationTimeout unless
// configured otherwise; a ctx without a deadline leaves only the per-evaluator timeout_ms.
//
// ControlResult.Duration is the time from the first evaluator the control ran to the end of its
// condition; it is 0 when the prefilter answered every leaf without running an evaluator.
//
// The result shares read-only data with the compiled controls (metadata maps, steering contexts):
// callers must not modify them.
func (e *Engine) Evaluate(ctx context.Context, step *Step, stage Stage) (*Result, error) {
	if step == nil {
		return nil, ErrNilStep
	}
	if !stage.Valid() {
		return nil, ErrInvalidStage
	}
	if ctx == nil {
		ctx = context.Background()
	}
	snap := e.load()
	if snap.session != nil {
		return e.evaluateSession(ctx, snap, step, stage)
	}
	return e.evaluate(ctx, snap, step, stage, nil), nil
}

// evaluate is Evaluate on snap, with sv the session state it reads (nil when snap uses none).
func (e *Engine) evaluate(ctx context.Context, snap *snapshot, step *Step, stage Stage, sv *sessionView) *Result {
	res := &Result{
		IsSafe:     true,
		Decision:   DecisionAllow,
		Confidence: 1,
		Matches:    []ControlResult{},
		Errors:     []ControlResult{},
		NonMatches: []ControlResult{},
	}
	sc := snap.getScratch()
	sc.sess = sv
	cands := snap.candidates(stage, step.Type, step.Name, sc)
	if len(cands) == 0 {
		snap.putScratch(sc)
		return res
	}
	r := run{ctx: ctx, snap: snap, step: step, sc: sc, timed: true}
	b := resultBuilder{res: res, snap: snap, denyAt: -1, denyErrAt: -1, steerAt: -1, steerErrAt: -1, minConf: 1}
	b.ids.rng = sc.ids
	reuse := true
	stop := len(cands) // candidates from stop on were not listed: a deny ended the evaluation before them
	if snap.hasExternal && r.needsConcurrency(cands, false) {
		var outs []outcome
		outs, reuse = r.concurrent(cands, false, e.cfg.maxConcurrency)
		var cnt listCounts
		for pos := range outs {
			if outs[pos].done && !cnt.add(&outs[pos].out, snap.controls[cands[pos]].class) {
				stop = pos + 1
				break
			}
		}
		b.size(&cnt)
		for pos, o := range outs {
			if o.done && !b.add(&snap.controls[cands[pos]], &o.out, o.dur) {
				break
			}
		}
	} else {
		// Evaluate first, keeping the outcomes in the scratch, then size the lists exactly: the result
		// costs what the evaluated controls need, not a slot per candidate.
		// The scratch keeps the outcomes of the controls visited; a control the live index rules out
		// (live.go) is not visited: its outcome is known.
		recs := sc.recs[:0]
		var cnt listCounts
		live := snap.useLive(cands)
		if live {
			r.markLive()
		}
		done := len(cands)
		for pos, ci := range cands {
			if live && !sc.isLive(ci) {
				cnt.nonMatches++
				continue
			}
			c := &snap.controls[ci]
			o := r.node(&c.root)
			recs = append(recs, outRec{ci: ci, dur: r.elapsed(), out: o})
			if !cnt.add(&o, c.class) {
				done = pos + 1
				break
			}
		}
		sc.recs = recs
		stop = done
		b.size(&cnt)
		ruledOut := nodeOut{conf: 1}
		k := 0
		for _, ci := range cands[:done] {
			if live && !sc.isLive(ci) {
				b.add(&snap.controls[ci], &ruledOut, 0)
				continue
			}
			b.add(&snap.controls[ci], &recs[k].out, recs[k].dur)
			k++
		}
		if live {
			clear(sc.live)
		}
	}
	b.finish()
	if snap.hasRedact && stop < len(cands) {
		// A deny ended the evaluation: what the refused step still leaves behind (an approval request, a
		// captured step) carries the redactions of the redacting controls after it too.
		after, rr := r.redactingAfter(cands[stop:], reuse)
		if after != nil {
			res.Redacted = rr.redaction(append(b.redacting, after...), stage)
			b.redacting = nil
		}
		if rr.sc != sc {
			snap.putScratch(rr.sc)
		}
	}
	if b.redacting != nil {
		res.Redacted = r.redaction(b.redacting, stage)
	}
	if reuse {
		snap.putScratch(sc)
	}
	return res
}

// redactingAfter evaluates the controls with action.redact among rest, the candidates a deny left
// unevaluated, and returns those that count as matched (nil when none), with the run whose scratch holds
// their outcomes. They are not listed in the result (a deny ends the evaluation): they only redact. When
// the evaluation's scratch may still be read by evaluators a deny abandoned (shared false), they run on a
// fresh one, which the caller returns to the pool.
func (r *run) redactingAfter(rest []int32, shared bool) ([]*cControl, *run) {
	var out []*cControl
	rr := r
	for _, ci := range rest {
		c := &r.snap.controls[ci]
		if c.redactWith == "" {
			continue
		}
		if rr == r && !shared {
			fresh := *r
			fresh.sc = r.snap.getScratch()
			fresh.sc.sess = r.sc.sess
			rr = &fresh
		}
		o := rr.node(&c.root)
		rr.start = time.Time{}
		if o.effective() {
			out = append(out, c)
		}
	}
	return out, rr
}

// outRec is the outcome of one control of a sequential evaluation, kept in the scratch until the result
// is built.
type outRec struct {
	ci  int32
	dur time.Duration
	out nodeOut
}

// listCounts counts the entries of each list of a result.
type listCounts struct {
	matches, errors, nonMatches int
}

// add counts outcome o of a control of class class and reports whether evaluation goes on after it (the
// rule of resultBuilder.add: it stops after a genuine deny match).
func (n *listCounts) add(o *nodeOut, class uint8) bool {
	switch {
	case o.err != nil:
		n.errors++
	case o.matched:
		n.matches++
		return class != classDeny
	default:
		n.nonMatches++
	}
	return true
}

// size gives the result's lists their exact capacity, in one allocation, and sizes the id batch.
func (b *resultBuilder) size(n *listCounts) {
	total := n.matches + n.errors + n.nonMatches
	if total == 0 {
		return
	}
	all := make([]ControlResult, 0, total)
	b.res.Matches = all[0:0:n.matches]
	b.res.Errors = all[n.matches : n.matches : n.matches+n.errors]
	b.res.NonMatches = all[n.matches+n.errors : n.matches+n.errors : total]
	b.ids.left = total
}

// resultBuilder files control outcomes into a Result in evaluation order.
type resultBuilder struct {
	res                                    *Result
	snap                                   *snapshot
	ids                                    idGen
	denyAt, denyErrAt, steerAt, steerErrAt int // index into Matches or Errors, -1 if none
	minConf                                float64
	// redacting are the controls with action.redact that count as matched, in evaluation order (nil
	// when none: the common case costs nothing).
	redacting []*cControl
}

// add files the outcome of control c and reports whether evaluation should go on (false after a
// genuine deny match).
func (b *resultBuilder) add(c *cControl, o *nodeOut, dur time.Duration) bool {
	eff := o.effective()
	var list *[]ControlResult
	switch {
	case o.err != nil:
		list = &b.res.Errors
	case o.matched:
		list = &b.res.Matches
	default:
		list = &b.res.NonMatches
	}
	// Fill the entry in place, writing only the fields that are not zero: the lists were made with their
	// exact capacity (size), so the slot is already zeroed memory, and a ControlResult is large and full
	// of pointers, each written through the GC's write barrier while a collection runs.
	at := len(*list)
	if at < cap(*list) {
		*list = (*list)[:at+1]
	} else {
		*list = append(*list, ControlResult{})
	}
	cr := &(*list)[at]
	cr.ControlExecutionID = b.ids.id()
	cr.ControlID = c.id
	cr.ControlVersion = c.version
	cr.ControlName = c.name
	cr.Action = c.decision
	if dur != 0 {
		cr.Duration = dur
	}
	if c.firstLeaf != nil {
		cr.EvaluatorName = c.evName
		cr.SelectorPath = c.selPath
	}
	if eff {
		if c.redactWith != "" {
			b.redacting = append(b.redacting, c)
		}
		if c.metadata != nil {
			cr.Metadata = c.metadata
		}
		if c.steering != nil {
			cr.SteeringContext = c.steering
		}
	}
	if o.err != nil {
		cr.Result = EvaluatorResult{Matched: eff, Error: errorText(o)}
		if eff {
			switch {
			case c.class == classDeny && b.denyErrAt < 0:
				b.denyErrAt = at
			case c.class == classSteer && b.steerErrAt < 0:
				b.steerErrAt = at
			}
		}
		return true
	}
	cr.Result.Matched, cr.Result.Confidence = o.matched, o.conf
	if o.msg != "" {
		cr.Result.Message = o.msg
	}
	if o.meta != nil {
		cr.Result.Metadata = o.meta
	}
	if o.conf < b.minConf { // clamped to [0, 1]: never NaN
		b.minConf = o.conf
	}
	if !o.matched {
		return true
	}
	switch c.class {
	case classDeny:
		b.denyAt = at
		return false
	case classSteer:
		if b.steerAt < 0 {
			b.steerAt = at
		}
	}
	return true
}

// finish sets the decision fields from the filed outcomes.
func (b *resultBuilder) finish() {
	r := b.res
	var w *ControlResult
	errored := false
	switch {
	case b.denyAt >= 0:
		w = &r.Matches[b.denyAt]
	case b.denyErrAt >= 0:
		w, errored = &r.Errors[b.denyErrAt], true
	case b.steerAt >= 0:
		w = &r.Matches[b.steerAt]
	case b.steerErrAt >= 0:
		w, errored = &r.Errors[b.steerErrAt], true
	default:
		r.Confidence = b.minConf
		return
	}
	r.IsSafe = false
	r.Decision = w.Action
	r.Confidence = w.Result.Confidence
	r.Reason = reasonText(w.ControlName, w.Action, w.Result.Message, errored, w.Metadata, w.SteeringContext)
	if w.Action == DecisionSteer {
		r.SteeringContext = w.SteeringContext
	}
	if b.snap.hasApproval && !errored {
		b.markApproval(w)
	}
}

// errorText is the error string of a failed condition: the evaluator's name and its error, the name
// only once when the evaluator's own error already starts with it ("ext.toxicity: ...") or names it
// (a leaf UpdateTolerant could not build).
func errorText(o *nodeOut) string {
	msg := o.err.Error()
	if _, named := o.err.(unavailableError); named || o.errLeaf == nil || strings.HasPrefix(msg, o.errLeaf.evName+": ") {
		return msg
	}
	return o.errLeaf.evName + ": " + msg
}

// reasonText is the human reason of a winning control: what the control's author wrote (action
// metadata "reason", else for steer the steering message), else the evaluator's message, else a default
// sentence naming the control.
func reasonText(name string, d Decision, msg string, errored bool, meta map[string]any, st *SteeringContext) string {
	if errored {
		return fmt.Sprintf("control %q could not be evaluated and fails closed (on_error: deny)", name)
	}
	if s, ok := meta["reason"].(string); ok && s != "" {
		return s
	}
	if d == DecisionSteer && st != nil && st.Message != "" {
		return st.Message
	}
	if msg != "" {
		return msg
	}
	if d == DecisionSteer {
		return fmt.Sprintf("steered by control %q", name)
	}
	return fmt.Sprintf("denied by control %q", name)
}
