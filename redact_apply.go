package guard

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// redactSpan is a span to replace in one string of the payload, with the replacement of the control that
// asked for it. whole replaces the value at its place in the payload whatever it is (a subtree the
// engine would not walk).
type redactSpan struct {
	start, end int
	typ, tmpl  string
	whole      bool
}

// replacementText is tmpl with {type} replaced by typ.
func replacementText(tmpl, typ string) string {
	if !strings.Contains(tmpl, "{type}") {
		return tmpl
	}
	return strings.ReplaceAll(tmpl, "{type}", typ)
}

// applySpans returns text with every span replaced. Spans are clamped to the text, widened to whole
// UTF-8 sequences (so the result is valid UTF-8 when text is), and merged where they overlap: a merged
// span takes the replacement of the span that starts first (on a tie, the longest, then the first given).
// Empty spans are dropped; adjacent spans stay apart, each with its own replacement. It reorders spans.
func applySpans(text string, spans []redactSpan) string {
	n := len(text)
	kept := spans[:0]
	for _, s := range spans {
		s.start, s.end = max(s.start, 0), min(s.end, n)
		if s.whole {
			s.start, s.end = 0, n
		} else if s.start >= s.end {
			continue
		}
		for s.start > 0 && s.start < n && !utf8.RuneStart(text[s.start]) {
			s.start--
		}
		for s.end < n && s.end > 0 && !utf8.RuneStart(text[s.end]) {
			s.end++
		}
		if s.start < s.end || (s.whole && n == 0) {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return text
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if kept[i].start != kept[j].start {
			return kept[i].start < kept[j].start
		}
		return kept[i].end > kept[j].end
	})
	var b strings.Builder
	b.Grow(n + 16*len(kept))
	prev := 0
	for i := 0; i < len(kept); {
		cur := kept[i]
		end := cur.end
		j := i + 1
		for j < len(kept) && kept[j].start < end {
			end = max(end, kept[j].end)
			j++
		}
		b.WriteString(text[prev:cur.start])
		b.WriteString(replacementText(cur.tmpl, cur.typ))
		prev, i = end, j
	}
	b.WriteString(text[prev:])
	return b.String()
}
