package evaluator

import (
	"context"
	"testing"
	"time"
)

// FuzzRegex compiles arbitrary patterns and evaluates them on arbitrary text: no panics, bounded time,
// and the prefilter's promise holds whenever an RE2 pattern matches.
func FuzzRegex(f *testing.F) {
	f.Add(`\b\d{3}-\d{2}-\d{4}\b`, false, "ssn 123-45-6789")
	f.Add(`ignore (all )?previous instructions`, true, "Please IGNORE previous instructions")
	f.Add(`foo(?=bar)`, false, "foobar")
	f.Add(`(?i)caf(?-i:é)|x`, false, "CAFé")
	f.Add(`a[bc]d|e+f`, true, "xACD")
	f.Fuzz(func(t *testing.T, pattern string, ci bool, in string) {
		re, err := NewRegex(pattern, ci, false, false, 20*time.Millisecond)
		if err != nil {
			return
		}
		res, err := re.Evaluate(context.Background(), text(in))
		if err != nil || !res.Matched || re.Engine() != EngineRE2 {
			return
		}
		lits, folds, ok := re.RequiredLiterals()
		if !ok || (folds && !isASCII(in)) {
			return
		}
		if !containsAnyFold(in, lits) {
			t.Fatalf("pattern %q (ci=%v) matches %q but none of %q occurs", pattern, ci, in, lits)
		}
	})
}

// FuzzList builds list evaluators from arbitrary values and evaluates arbitrary text: no panics, and
// the prefilter's promise holds whenever a match_on match list matches an ASCII text.
func FuzzList(f *testing.F) {
	f.Add("credit card", false, uint8(1), "my Credit Card")
	f.Add("Élan", true, uint8(3), "plein d'élan")
	f.Fuzz(func(t *testing.T, value string, cs bool, mode uint8, in string) {
		modes := []ListMode{ListExact, ListContains, ListStartsWith, ListEndsWith}
		l, err := NewList([]string{value}, ListOptions{CaseSensitive: cs, Mode: modes[int(mode)%len(modes)]})
		if err != nil {
			return
		}
		res, err := l.Evaluate(context.Background(), text(in))
		if err != nil {
			t.Fatal(err)
		}
		lits, folds, ok := l.RequiredLiterals()
		if !res.Matched || !ok || (folds && !isASCII(in)) {
			return
		}
		if !containsAnyFold(in, lits) {
			t.Fatalf("value %q matches %q but none of %q occurs", value, in, lits)
		}
	})
}
