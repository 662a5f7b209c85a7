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
	if r.re2 != nil {
		var out []Span
		for _, m := range r.re2.FindAllStringIndex(d.Text, -1) {
			if m[1] > m[0] {
				out = append(out, Span{Start: m[0], End: m[1], Type: "regex"})
			}
		}
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout, byDeadline := r.timeout, false
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout, byDeadline = max(left, time.Millisecond), true
		}
	}
	out, err := r.bt.findAll(d.Text, regexp2Timeout(timeout))
	if err != nil {
		if errors.Is(err, errRecompile) {
			return nil, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if byDeadline {
			return nil, context.DeadlineExceeded
		}
		return nil, fmt.Errorf("%w after %v", ErrMatchTimeout, r.timeout) // regexp2's error quotes the input
	}
	return out, nil
}

// findAll returns the non-empty matches of the pattern in text as byte spans, all of them found within
// timeout (regexp2's error otherwise).
func (b *backtracker) findAll(text string, timeout time.Duration) ([]Span, error) {
	re, err := b.get()
	if err != nil {
		return nil, err
	}
	defer b.put(re)
	deadline := time.Now().Add(timeout)
	re.MatchTimeout = timeout
	m, err := re.FindStringMatch(text)
	if m == nil || err != nil {
		return nil, err
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
			return nil, ErrMatchTimeout
		}
		re.MatchTimeout = left
		if m, err = re.FindNextMatch(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}
