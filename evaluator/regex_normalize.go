package evaluator

import (
	"context"
	"sort"

	"github.com/guardrail-control/guard/evaluator/normalize"
)

// evaluateNormalized is Evaluate with normalize: the text as it is first, then, when it did not match and
// normalisation changes it, the normalised text, where a pattern with a branch filter runs only the
// windows that normalisation changed (one non-ASCII character in a megabyte costs one more literal scan,
// not a second search). Plain ASCII text without an escape character is its own normal form and costs
// one byte scan more.
func (r *Regex) evaluateNormalized(ctx context.Context, d *Data) (Result, error) {
	res, err := r.evaluateText(ctx, d)
	if err != nil || res.Matched || !normalize.Needed(d.Text) {
		return res, err
	}
	n := normalize.String(d.Text)
	if !n.Changed() {
		return res, nil
	}
	if r.re2 != nil && r.branches != nil {
		// The original did not match: only the windows that normalisation changed are run again.
		if m, ok := r.branches.matchCounting(n.S, n.ChangedPrefix(d.Text), nil); ok {
			if !m {
				return Result{Confidence: 1}, nil
			}
			return Result{Matched: true, Confidence: 1, Message: "pattern matched",
				Metadata: map[string]any{"engine": EngineRE2, "normalized": true}}, nil
		}
	}
	res, err = r.evaluateText(ctx, &Data{Value: n.S, Text: n.S})
	if res.Matched {
		res.Metadata["normalized"] = true
	}
	return res, err
}

// findAllNormalized is findAll, and with normalize also the matches in the normalised text mapped back
// to the original, merged and sorted by start (they may overlap).
func (r *Regex) findAllNormalized(ctx context.Context, text string) ([]Span, bool, error) {
	spans, matched, err := r.findAll(ctx, text)
	if err != nil || !r.normalize || !normalize.Needed(text) {
		return spans, matched, err
	}
	n := normalize.String(text)
	if !n.Changed() {
		return spans, matched, nil
	}
	more, m2, err := r.findAll(ctx, n.S)
	if err != nil {
		return spans, matched || m2, err
	}
	for _, s := range more {
		st, en := n.Original(s.Start, s.End)
		if en > st {
			spans = append(spans, Span{Start: st, End: en, Type: s.Type})
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	return spans, matched || m2, nil
}
