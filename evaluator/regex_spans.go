package evaluator

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Spans implements Spanner: every non-overlapping, non-empty match of the pattern in d.Text, left to
// right, with type "regex". RE2 patterns run in linear time; backtracking patterns run under the same
// bound as Evaluate (the shorter of timeout_ms and the time left before ctx's deadline), over all their
// matches together, and fail like Evaluate when it runs out.
func (r *Regex) Spans(ctx context.Context, d *Data) ([]Span, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return nil, nil
	}
	spans, _, err := r.findAllNormalized(ctx, d.Text)
	if err != nil {
		return nil, err
	}
	return spans, nil
}

// EvaluateSpans implements SpanEvaluator: one search for every match gives both the verdict (some match,
// empty ones included, as MatchString) and the spans. A backtracking pattern that runs out of time after
// a match has matched, with Found.Err; before any match it fails as Evaluate does.
func (r *Regex) EvaluateSpans(ctx context.Context, d *Data) (Result, Found, error) {
	if d == nil || d.IsNull() {
		return Result{Confidence: 1}, Found{}, nil
	}
	spans, matched, err := r.findAllNormalized(ctx, d.Text)
	if err != nil && !matched {
		return Result{}, Found{}, err
	}
	if !matched {
		return Result{Confidence: 1}, Found{}, nil
	}
	engine := EngineRE2
	if r.re2 == nil {
		engine = EngineRegexp2
	}
	res := Result{Matched: true, Confidence: 1, Message: "pattern matched", Metadata: map[string]any{"engine": engine}}
	if err != nil {
		return res, Found{Err: err}, nil
	}
	return res, Found{Spans: spans}, nil
}

// findAll returns the non-empty matches of the pattern in text as spans and whether it matched at all
// (an empty match counts). A backtracking pattern runs under Evaluate's bound; when it runs out, err
// says why and matched whether a match was found before.
func (r *Regex) findAll(ctx context.Context, text string) (spans []Span, matched bool, err error) {
	if r.re2 != nil {
		if r.branches != nil {
			// The filter answers most texts (those that cannot match) in one pass; an empty match
			// still counts as matched, so a match goes on to the full search.
			if m, ok := r.branches.match(text); ok && !m {
				return nil, false, nil
			}
		}
		ms := r.re2.get().FindAllStringIndex(text, -1)
		for _, m := range ms {
			if m[1] > m[0] {
				spans = append(spans, Span{Start: m[0], End: m[1], Type: "regex"})
			}
		}
		return spans, len(ms) > 0, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	timeout, byDeadline := r.timeout, false
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout, byDeadline = max(left, time.Millisecond), true
		}
	}
	spans, matched, err = r.bt.findAll(text, regexp2Timeout(timeout))
	if err != nil {
		if errors.Is(err, errRecompile) {
			return nil, matched, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, matched, cerr
		}
		if byDeadline {
			return nil, matched, context.DeadlineExceeded
		}
		return nil, matched, fmt.Errorf("%w after %v", ErrMatchTimeout, r.timeout) // regexp2's error quotes the input
	}
	return spans, matched, nil
}

// findAll returns the non-empty matches of the pattern in text as byte spans, all of them found within
// timeout (regexp2's error otherwise), and whether there was any match (an empty one counts), also when
// the time ran out after it.
func (b *backtracker) findAll(text string, timeout time.Duration) ([]Span, bool, error) {
	re, err := b.get()
	if err != nil {
		return nil, false, err
	}
	defer b.put(re)
	deadline := time.Now().Add(timeout)
	re.MatchTimeout = timeout
	m, err := re.FindStringMatch(text)
	if m == nil || err != nil {
		return nil, false, err
	}
	// regexp2 reports rune positions; byteAt turns them into byte offsets, walking the text once.
	var out []Span
	pos, at := 0, 0 // rune position pos is at byte offset at
	byteAt := func(runes int) int {
		for pos < runes && at < len(text) {
			_, size := utf8.DecodeRuneInString(text[at:])
			at += size
			pos++
		}
		return at
	}
	for m != nil {
		if m.Length > 0 {
			start := byteAt(m.Index)
			out = append(out, Span{Start: start, End: byteAt(m.Index + m.Length), Type: "regex"})
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, true, ErrMatchTimeout
		}
		re.MatchTimeout = left
		if m, err = re.FindNextMatch(m); err != nil {
			return nil, true, err
		}
	}
	return out, true, nil
}
