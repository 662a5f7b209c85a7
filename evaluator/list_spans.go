package evaluator

import (
	"context"
	"unicode/utf8"
)

// Spans implements Spanner: the occurrences of the listed values in d.Text, compared as Evaluate compares
// them (match_mode, case_sensitive), with type "list". Where several values occur at one place the
// longest wins, and occurrences never overlap. With match_on no_match nothing is reported: what made the
// list match is an absence, which has no place in the text.
func (l *List) Spans(_ context.Context, d *Data) ([]Span, error) {
	if d == nil || d.IsNull() || d.Text == "" || l.opts.NoMatch {
		return nil, nil
	}
	text := ScanText(d)
	switch l.opts.Mode {
	case ListContains:
		return l.containsSpans(text), nil
	case ListStartsWith:
		r, _ := utf8.DecodeRuneInString(text)
		best := 0
		for _, idx := range l.byFirst.get(l.key(r)) {
			if end, ok := l.matchAt(text, 0, l.keys[idx]); ok && end > best {
				best = end
			}
		}
		if best == 0 {
			return nil, nil
		}
		return []Span{{Start: 0, End: best, Type: "list"}}, nil
	case ListEndsWith:
		r, _ := utf8.DecodeLastRuneInString(text)
		best := len(text)
		for _, idx := range l.byLast.get(l.key(r)) {
			if start, ok := l.suffixStart(text, l.keys[idx]); ok && start < best {
				best = start
			}
		}
		if best == len(text) {
			return nil, nil
		}
		return []Span{{Start: best, End: len(text), Type: "list"}}, nil
	}
	if _, ok := l.exactIndex(text); ok {
		return []Span{{Start: 0, End: len(text), Type: "list"}}, nil
	}
	return nil, nil
}

// containsSpans finds the whole-word occurrences of the values, left to right, the longest at each start.
func (l *List) containsSpans(text string) []Span {
	var out []Span
	prevWord := false
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !prevWord {
			best := -1
			for _, idx := range l.byFirst.get(l.key(r)) {
				end, ok := l.matchAt(text, i, l.keys[idx])
				if !ok || end <= best {
					continue
				}
				if end < len(text) {
					if next, _ := utf8.DecodeRuneInString(text[end:]); isWordRune(next) {
						continue
					}
				}
				best = end
			}
			if best > i {
				out = append(out, Span{Start: i, End: best, Type: "list"})
				last, _ := utf8.DecodeLastRuneInString(text[:best])
				i, prevWord = best, isWordRune(last)
				continue
			}
		}
		prevWord = isWordRune(r)
		i += size
	}
	return out
}

// suffixStart reports whether text ends with key (folded unless case-sensitive) and where that suffix
// starts in text.
func (l *List) suffixStart(text, key string) (int, bool) {
	if l.opts.CaseSensitive {
		if len(key) <= len(text) && text[len(text)-len(key):] == key {
			return len(text) - len(key), true
		}
		return 0, false
	}
	i, j := len(text), len(key)
	for j > 0 {
		if i == 0 {
			return 0, false
		}
		kr, ks := utf8.DecodeLastRuneInString(key[:j])
		tr, ts := utf8.DecodeLastRuneInString(text[:i])
		if foldRune(tr) != kr {
			return 0, false
		}
		i -= ts
		j -= ks
	}
	return i, true
}

// EvaluateSpans implements SpanEvaluator: Evaluate, then Spans on the same data. The two answer different
// questions (logic all needs every value, spans report each one found), so nothing is shared; what it
// saves is the engine's second pass over the leaf.
func (l *List) EvaluateSpans(ctx context.Context, d *Data) (Result, Found, error) {
	res, err := l.Evaluate(ctx, d)
	if err != nil {
		return res, Found{}, err
	}
	spans, err := l.Spans(ctx, d)
	return res, Found{Spans: spans, Err: err}, nil
}
