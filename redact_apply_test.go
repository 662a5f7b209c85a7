package guard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestApplySpans(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		spans []redactSpan
		want  string
	}{
		{"none", "abc", nil, "abc"},
		{"one", "my pin 1234", []redactSpan{{start: 7, end: 11, typ: "pin", tmpl: "[{type}]"}}, "my pin [pin]"},
		{"unsorted and adjacent stay apart", "aabb", []redactSpan{{start: 2, end: 4, typ: "b", tmpl: "{type}"}, {start: 0, end: 2, typ: "a", tmpl: "{type}"}}, "ab"},
		{"overlap merges, the earliest's replacement", "0123456789", []redactSpan{{start: 4, end: 8, typ: "late", tmpl: "<{type}>"}, {start: 2, end: 5, typ: "early", tmpl: "<{type}>"}}, "01<early>89"},
		{"same start: the longest wins", "0123456789", []redactSpan{{start: 2, end: 4, typ: "short", tmpl: "{type}"}, {start: 2, end: 6, typ: "long", tmpl: "{type}"}}, "01long6789"},
		{"a contained span disappears", "0123456789", []redactSpan{{start: 1, end: 9, typ: "out", tmpl: "{type}"}, {start: 3, end: 4, typ: "in", tmpl: "{type}"}}, "0out9"},
		{"out of range is clamped", "abc", []redactSpan{{start: -5, end: 1, tmpl: "X"}, {start: 2, end: 99, tmpl: "Y"}}, "XbY"},
		{"empty and inverted spans are dropped", "abc", []redactSpan{{start: 1, end: 1, tmpl: "X"}, {start: 2, end: 1, tmpl: "Y"}, {start: 5, end: 9, tmpl: "Z"}}, "abc"},
		{"widened to whole characters", "aéb", []redactSpan{{start: 2, end: 3, tmpl: "X"}}, "aXb"},
		{"whole replaces everything", "secret", []redactSpan{{start: 2, end: 3, tmpl: "[{type}]", typ: "t", whole: true}}, "[t]"},
		{"no {type} in the template", "abc", []redactSpan{{start: 0, end: 3, tmpl: "***", typ: "t"}}, "***"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := applySpans(tc.text, tc.spans); got != tc.want {
				t.Errorf("applySpans = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzApplySpans: whatever the spans, applying them never panics, keeps every byte outside the spans
// (the text with no span is unchanged), and gives valid UTF-8 from valid UTF-8.
func FuzzApplySpans(f *testing.F) {
	f.Add("my pin 1234 and é", 7, 11, 2, 4, "[{type}]")
	f.Add("", 0, 0, -1, 5, "x")
	f.Add("aéb\xffc", 2, 3, 3, 5, "")
	f.Add("日本語テキスト", 1, 4, 5, 100, "<{type}>")
	f.Fuzz(func(t *testing.T, text string, s1, e1, s2, e2 int, tmpl string) {
		spans := []redactSpan{{start: s1, end: e1, typ: "a", tmpl: tmpl}, {start: s2, end: e2, typ: "b", tmpl: tmpl}}
		out := applySpans(text, spans)
		if utf8.ValidString(text) && utf8.ValidString(tmpl) && !utf8.ValidString(out) {
			t.Fatalf("applySpans(%q) = %q: not valid UTF-8", text, out)
		}
		if applySpans(text, nil) != text {
			t.Fatal("no span changed the text")
		}
		// What precedes the first span and follows the last one is kept.
		lo, hi := len(text), 0
		for _, s := range []redactSpan{{start: s1, end: e1}, {start: s2, end: e2}} {
			st, en := max(s.start, 0), min(s.end, len(text))
			if st < en {
				lo, hi = min(lo, st), max(hi, en)
			}
		}
		if lo < hi {
			for lo > 0 && !utf8.RuneStart(text[lo]) {
				lo--
			}
			for hi < len(text) && !utf8.RuneStart(text[hi]) {
				hi++
			}
			if !strings.HasPrefix(out, text[:lo]) || !strings.HasSuffix(out, text[hi:]) {
				t.Fatalf("applySpans(%q, %d-%d, %d-%d) = %q: the text around the spans changed", text, s1, e1, s2, e2, out)
			}
		} else if out != text {
			t.Fatalf("applySpans(%q) with no effective span = %q", text, out)
		}
	})
}
