package guard

import (
	"context"

	"github.com/guardrail-control/guard/evaluator"
)

// leafFound is what the evaluation of a leaf that can redact found in its string (done), kept in the
// scratch for the redaction pass so that it does not search the string again.
type leafFound struct {
	done  bool
	spans []evaluator.Span
	err   error // the spans could not all be found, or the evaluator failed: the whole string is replaced
}

// payloadRoot is the selector root of the payload a stage redacts.
func payloadRoot(stage Stage) selectorRoot {
	if stage == StagePost {
		return rootOutput
	}
	return rootInput
}

// assignSpanSlots marks the leaves of a redacting control's condition n that can find their spans in
// their evaluation: outside any not, selecting the input or the output (the payload of a stage; "*"
// selects the whole step, an object whose strings are searched one by one), with a built-in evaluator
// that implements evaluator.SpanEvaluator. Each gets a slot of scratch.found.
func assignSpanSlots(s *snapshot, n *cNode) {
	switch n.kind {
	case nodeNot:
		return
	case nodeAnd, nodeOr:
		for i := range n.kids {
			assignSpanSlots(s, &n.kids[i])
		}
		return
	}
	l := n.leaf
	if l == nil || l.external {
		return
	}
	se, ok := l.ev.(evaluator.SpanEvaluator)
	if !ok {
		return
	}
	root := s.paths[l.path].sel.root
	if root != rootInput && root != rootOutput {
		return
	}
	s.spanSlots++
	l.spanEv, l.spanSlot, l.spanRoot = se, int32(s.spanSlots), root
}

// callSpans evaluates a leaf that can redact the payload of this evaluation: with EvaluateSpans when it
// selected a string, keeping what it found (also when it failed: the redaction then fails closed),
// with Evaluate otherwise. A panic is contained as in callLocal.
func (r *run) callSpans(l *cLeaf, d *evaluator.Data) (res evaluator.Result, err error) {
	if _, ok := d.Value.(string); !ok {
		return callLocal(r.ctx, l, d)
	}
	f := &r.sc.found[l.spanSlot-1]
	defer func() {
		if recover() != nil {
			res, err = evaluator.Result{}, errEvaluatorPanic
			*f = leafFound{done: true, err: err}
		}
	}()
	res, found, err := l.spanEv.EvaluateSpans(r.ctx, d)
	if err != nil {
		*f = leafFound{done: true, err: err}
		return res, err
	}
	*f = leafFound{done: true, spans: found.Spans, err: found.Err}
	return res, nil
}

// evaluateSpanner is the Spanner of an evaluator that implements only SpanEvaluator.
type evaluateSpanner struct{ ev evaluator.SpanEvaluator }

func (s evaluateSpanner) Spans(ctx context.Context, d *evaluator.Data) ([]evaluator.Span, error) {
	_, f, err := s.ev.EvaluateSpans(ctx, d)
	if err == nil {
		err = f.Err
	}
	return f.Spans, err
}
