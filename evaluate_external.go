package guard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guardrail-control/guard/evaluator"
)

// DefaultMaxConcurrency bounds how many controls with external evaluators one evaluation runs at once.
const DefaultMaxConcurrency = 8

// DefaultEvaluationTimeout is the deadline the server (per POST /evaluation) and the client library
// (per in-process evaluation) put on one whole evaluation when none is configured. The engine itself
// applies no default: it honours the deadline of the context it is given.
const DefaultEvaluationTimeout = 2 * time.Second

// Errors of the leaves of an evaluation that was stopped by its caller's context: the leaf's evaluator
// was interrupted, or never started. Both are evaluator errors, so the control's on_error decides.
var (
	// ErrEvaluationDeadline is reported for a control whose evaluator could not run to the end because
	// the deadline of the context given to Evaluate or Check passed.
	ErrEvaluationDeadline = errors.New("evaluation deadline exceeded")
	// ErrEvaluationCancelled is reported for a control whose evaluator could not run to the end because
	// the context given to Evaluate or Check was cancelled (a client that went away).
	ErrEvaluationCancelled = errors.New("evaluation cancelled")
)

// stoppedError is the leaf error for a context error.
func stoppedError(ctxErr error) error {
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return ErrEvaluationDeadline
	}
	return ErrEvaluationCancelled
}

// outcome is the result of one control in a concurrent evaluation.
type outcome struct {
	out  nodeOut
	dur  time.Duration
	done bool
}

// needsConcurrency reports whether any control that will be evaluated has an external evaluator.
func (r *run) needsConcurrency(cands []int32, decisionOnly bool) bool {
	for _, ci := range cands {
		c := &r.snap.controls[ci]
		if decisionOnly && c.class == classOther {
			break
		}
		if c.hasExternal {
			return true
		}
	}
	return false
}

// concurrent evaluates cands with each control that has an external evaluator in its own goroutine (at
// most maxConc at once) while the other controls are evaluated here, in order. Within one control the
// leaves still run left to right with short-circuit, so the semantics are those of a sequential
// evaluation. As soon as any deny control genuinely matches, the rest is cancelled.
//
// It returns the outcomes by candidate position (done is false for controls that were not finished)
// and whether every goroutine has finished; when not, the scratch must not be reused.
func (r *run) concurrent(cands []int32, decisionOnly bool, maxConc int) ([]outcome, bool) {
	n := len(cands)
	for pos, ci := range cands {
		if decisionOnly && r.snap.controls[ci].class == classOther {
			n = pos
			break
		}
	}
	cands = cands[:n]
	// Select every path, scan every text and measure every run up front: from here on the goroutines
	// only read the scratch.
	for _, ci := range cands {
		for _, p := range r.snap.controls[ci].paths {
			d, err := r.sc.dataFor(r.snap, r.step, p)
			if err != nil {
				continue
			}
			if _, ok := d.Value.(string); !ok {
				continue
			}
			cp := &r.snap.paths[p]
			if cp.ac != nil {
				r.sc.scanFor(r.snap, p, d.Text)
			}
			for _, k := range cp.runs {
				r.sc.runFor(r.snap, k, d.Text)
			}
		}
	}
	if maxConc < 1 {
		maxConc = 1
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	sub := *r
	sub.ctx = ctx
	type finished struct {
		pos int
		out nodeOut
		dur time.Duration
	}
	results := make(chan finished, n) // buffered: a goroutine never blocks on an abandoned evaluation
	sem := make(chan struct{}, maxConc)
	pending := 0
	for pos, ci := range cands {
		c := &r.snap.controls[ci]
		if !c.hasExternal {
			continue
		}
		pending++
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			own := sub // each goroutine has its own clock
			o := own.node(&c.root)
			results <- finished{pos, o, own.elapsed()}
		}()
	}
	outs := make([]outcome, n)
	decided := func(pos int) bool {
		o := &outs[pos].out
		return r.snap.controls[cands[pos]].class == classDeny && o.err == nil && o.matched
	}
	for pos, ci := range cands {
		c := &r.snap.controls[ci]
		if c.hasExternal {
			continue
		}
		outs[pos] = outcome{out: r.node(&c.root), done: true}
		outs[pos].dur = r.elapsed()
		if decided(pos) {
			return outs, pending == 0
		}
	}
	for ; pending > 0; pending-- {
		f := <-results
		outs[f.pos] = outcome{out: f.out, dur: f.dur, done: true}
		if decided(f.pos) {
			return outs, pending == 1
		}
	}
	return outs, true
}

// callExternal runs an external evaluator under its timeout_ms. The call runs in its own goroutine so
// that an evaluator that ignores its context still cannot hold the evaluation past the timeout.
func callExternal(ctx context.Context, l *cLeaf, d *evaluator.Data) (evaluator.Result, error) {
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	type reply struct {
		res evaluator.Result
		err error
	}
	ch := make(chan reply, 1)
	data := *d
	go func() {
		defer func() {
			if recover() != nil {
				ch <- reply{err: errEvaluatorPanic}
			}
		}()
		res, err := l.ev.Evaluate(cctx, &data)
		ch <- reply{res, err}
	}()
	select {
	case rep := <-ch:
		if rep.err != nil && cctx.Err() != nil {
			return evaluator.Result{}, externalCtxErr(ctx, l)
		}
		return rep.res, rep.err
	case <-cctx.Done():
		return evaluator.Result{}, externalCtxErr(ctx, l)
	}
}

func externalCtxErr(parent context.Context, l *cLeaf) error {
	if err := parent.Err(); err != nil {
		return stoppedError(err)
	}
	return fmt.Errorf("timed out after %d ms", l.timeout.Milliseconds())
}
