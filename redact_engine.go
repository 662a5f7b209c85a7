package guard

import (
	"encoding/json"
	"strconv"

	"github.com/guardrail-control/guard/evaluator"
)

// redaction computes Result.Redacted for the redacting controls that counted as matched (see the control
// language's "Redaction"). Only the stage's payload is redacted: the input at pre, the output at post.
// The leaves that contribute are those outside any not (what a negated leaf matches is what the control
// requires to be absent), whose selector starts at that payload (or is "*", the whole step: the payload
// is its part that is redacted), and whose evaluator reports spans (evaluator.SpanEvaluator or
// evaluator.Spanner: regex, list, secrets, pii); the others only gate the control. Each contributing
// leaf's selected value is searched string by string: a string is searched itself, an object or a list
// has each of its string values searched on its own (keys, numbers and booleans are not cut into; a value
// whose strings hold nothing the evaluator finds in its JSON text is replaced whole: foundOutsideStrings). A
// leaf whose evaluation already found its spans (a SpanEvaluator selecting a string: run.callSpans) is
// not searched again; the others (not evaluated because an or stopped earlier, selecting an object, or
// a third-party evaluator that implements only Spanner) are searched here. An evaluator that cannot find
// its spans (a match timeout, the evaluation's deadline, an error) has the whole string replaced:
// redaction fails closed. Spans of every control are merged per string (applySpans). Nil when nothing
// was replaced.
func (r *run) redaction(ctls []*cControl, stage Stage) *Redacted {
	root, payload := payloadRoot(stage), r.step.Input
	if stage == StagePost {
		payload = r.step.Output
	}
	if payload == nil {
		return nil
	}
	doc, ok := copyJSON(payload, 0)
	if !ok {
		n, err := normalizeJSON(payload) // a Go value (struct, typed map): as the selectors see it, a fresh copy
		if err != nil {
			return nil
		}
		doc = n
	}
	found := redactFinds{}
	for _, c := range ctls {
		r.collectSpans(&c.root, c.redactWith, root, doc, found)
	}
	if len(found) == 0 {
		return nil
	}
	out := applyFinds(doc, "", found, 0)
	if stage == StagePost {
		return &Redacted{Output: out}
	}
	return &Redacted{Input: out}
}

// redactFinds are the spans found per string of the payload, keyed by its location (locKey, locIndex).
type redactFinds map[string][]redactSpan

// Locations of values in the payload: each object key is written with its length, so no two paths share
// a key.
func locKey(loc, k string) string       { return loc + "." + strconv.Itoa(len(k)) + ":" + k }
func locIndex(loc string, i int) string { return loc + "#" + strconv.Itoa(i) }

// collectSpans adds the spans of the contributing leaves of n.
func (r *run) collectSpans(n *cNode, tmpl string, root selectorRoot, doc any, found redactFinds) {
	switch n.kind {
	case nodeNot:
		return
	case nodeAnd, nodeOr:
		for i := range n.kids {
			r.collectSpans(&n.kids[i], tmpl, root, doc, found)
		}
		return
	}
	l := n.leaf
	if l == nil {
		return
	}
	sp, ok := l.ev.(evaluator.Spanner)
	if !ok {
		se, ok := l.ev.(evaluator.SpanEvaluator)
		if !ok {
			return
		}
		sp = evaluateSpanner{se}
	}
	sel := &r.snap.paths[l.path].sel
	v, loc := doc, ""
	switch sel.root {
	case rootStep:
	case root:
		for i := range sel.segs {
			seg := &sel.segs[i]
			switch x := v.(type) {
			case map[string]any:
				v, loc = x[seg.key], locKey(loc, seg.key)
			case []any:
				if seg.index < 0 || seg.index >= len(x) {
					return
				}
				v, loc = x[seg.index], locIndex(loc, seg.index)
			default:
				return
			}
		}
	default:
		return
	}
	if l.spanEv != nil && l.spanRoot == root {
		if f := &r.sc.found[l.spanSlot-1]; f.done {
			addFound(found, loc, l.evName, tmpl, f)
			return
		}
		if d, err := r.sc.dataFor(r.snap, r.step, l.path); err == nil && r.ruledOut(l, d) {
			return
		}
	}
	if _, isStr := v.(string); isStr || v == nil {
		r.spansIn(sp, l.evName, tmpl, v, loc, found, 0)
		return
	}
	sub := redactFinds{}
	r.spansIn(sp, l.evName, tmpl, v, loc, sub, 0)
	if len(sub) == 0 && r.foundOutsideStrings(sp, v) {
		// What the leaf found is not in any string of the value (an object key, a number, a match
		// across strings): nothing could be cut out of a string, so the whole value is replaced rather
		// than passed on with what the control matched (issue 23: redaction failing open).
		sub[loc] = []redactSpan{{typ: l.evName, tmpl: tmpl, whole: true}}
	}
	for k, spans := range sub {
		found[k] = append(found[k], spans...)
	}
}

// foundOutsideStrings reports whether sp finds something in the text form of the non-string value v
// (its compact JSON) when the search of its strings one by one found nothing. A value whose text form
// cannot be made, or whose search fails, counts as found: redaction fails closed.
func (r *run) foundOutsideStrings(sp evaluator.Spanner, v any) bool {
	val, text, err := textForm(v)
	if err != nil {
		return true
	}
	spans, err := spansOfData(r, sp, &evaluator.Data{Value: val, Text: text})
	return err != nil || len(spans) > 0
}

// addFound adds what a leaf's evaluation found in the string at loc.
func addFound(found redactFinds, loc, evName, tmpl string, f *leafFound) {
	if f.err != nil {
		found[loc] = append(found[loc], redactSpan{typ: evName, tmpl: tmpl, whole: true})
		return
	}
	for _, s := range f.spans {
		found[loc] = append(found[loc], redactSpan{start: s.Start, end: s.End, typ: s.Type, tmpl: tmpl})
	}
}

// spansIn finds the spans of every string of v (at loc), up to MaxSelectedDepth; a deeper value is
// replaced as a whole.
func (r *run) spansIn(sp evaluator.Spanner, evName, tmpl string, v any, loc string, found redactFinds, depth int) {
	if depth > MaxSelectedDepth {
		found[loc] = append(found[loc], redactSpan{typ: evName, tmpl: tmpl, whole: true})
		return
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
		spans, err := spansOf(r, sp, x)
		addFound(found, loc, evName, tmpl, &leafFound{spans: spans, err: err})
	case map[string]any:
		for k, child := range x {
			r.spansIn(sp, evName, tmpl, child, locKey(loc, k), found, depth+1)
		}
	case []any:
		for i, child := range x {
			r.spansIn(sp, evName, tmpl, child, locIndex(loc, i), found, depth+1)
		}
	}
}

// spansOf asks sp for the spans of s, containing a panic as an error (as callLocal does).
func spansOf(r *run, sp evaluator.Spanner, s string) (spans []evaluator.Span, err error) {
	defer func() {
		if recover() != nil {
			spans, err = nil, errEvaluatorPanic
		}
	}()
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	return sp.Spans(r.ctx, &evaluator.Data{Value: s, Text: s})
}

// spansOfData is spansOf for any selected data d.
func spansOfData(r *run, sp evaluator.Spanner, d *evaluator.Data) (spans []evaluator.Span, err error) {
	defer func() {
		if recover() != nil {
			spans, err = nil, errEvaluatorPanic
		}
	}()
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	return sp.Spans(r.ctx, d)
}

// applyFinds replaces, in v (a copy the redaction owns), the spans found for each of its strings.
func applyFinds(v any, loc string, found redactFinds, depth int) any {
	if spans, ok := found[loc]; ok {
		if s, isStr := v.(string); isStr {
			return applySpans(s, spans)
		}
		for _, sp := range spans {
			if sp.whole {
				return replacementText(sp.tmpl, sp.typ)
			}
		}
	}
	if depth > MaxSelectedDepth {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			x[k] = applyFinds(child, locKey(loc, k), found, depth+1)
		}
	case []any:
		for i, child := range x {
			x[i] = applyFinds(child, locIndex(loc, i), found, depth+1)
		}
	}
	return v
}

// copyJSON deep-copies a value already shaped like decoded JSON; ok is false for anything else (a Go
// struct, a typed map or slice) or a value nested deeper than MaxSelectedDepth.
func copyJSON(v any, depth int) (any, bool) {
	if depth > MaxSelectedDepth {
		return nil, false
	}
	switch x := v.(type) {
	case nil, string, float64, bool, json.Number:
		return x, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			cc, ok := copyJSON(c, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = cc
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			cc, ok := copyJSON(c, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = cc
		}
		return out, true
	}
	return nil, false
}
