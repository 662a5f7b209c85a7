package evaluator

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// byteSetOf is the set of the bytes of chars plus every byte >= 0x80.
func byteSetOf(chars string) ByteSet {
	s := highBytes
	for i := 0; i < len(chars); i++ {
		s.Add(chars[i])
	}
	return s
}

func TestRegexRequiredRun(t *testing.T) {
	const digits = "0123456789"
	tests := []struct {
		pattern string
		ci      bool
		set     string // ASCII members; "" with n == 0: no requirement
		n       int
	}{
		// The benchmark's patterns (bench_test.go, benchRegex).
		{`\b(?:4\d{3}|5[1-5]\d{2}|6011|3[47]\d{2})[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,2}\b`, false, digits + " -", 13},
		{`\b\d{3}-\d{2}-\d{4,8}\b`, false, digits + "-", 11},
		{`(?i)\b(?:ssn|social security(?: number)?)[^0-9]{0,8}\d{3}-\d{2}-\d{4}\b`, false, digits + "-", 11},
		{`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,6}\b`, false, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + digits + "._%+-@", 6},
		{`\bsk-[A-Za-z0-9_\-]{16,}`, false, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + digits + "_-", 19},
		// Folds: every simple fold of a literal's letters (the Kelvin sign and long s are non-ASCII).
		{`kk`, false, "k", 2},
		{`(?i)kk`, false, "kK", 2},
		{`ks`, true, "kKsS", 2},
		{`(?i)caf(?-i:é)`, false, "cCaAfF", 4},
		// Alternations, concatenations, groups.
		{`abc|de`, false, "abcde", 2},
		{`foo.*barbaz`, false, "abrz", 6},
		{`(?:ab\d{4})+x`, false, "ab" + digits + "x", 7},
		{`x(?:\d{3}|.)y`, false, "", 0},
		{`(?:\d\d.|ab)`, false, "ab" + digits, 2},
		{`a\b-\bb`, false, "ab-", 3},
		{`^\d{2}$`, false, digits, 2},
		// No requirement.
		{`x`, false, "", 0},
		{`a.b`, false, "", 0},
		{`.+`, false, "", 0},
		{`\w+`, false, "", 0},
		{`[^0-9]{5}`, false, "", 0},
		{`(?:ab)*`, false, "", 0},
		{`ab|.`, false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := NewRegex(tt.pattern, tt.ci, false, false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			set, n, ok := re.RequiredRun()
			if tt.n == 0 {
				if ok {
					t.Fatalf("got run n=%d, want none", n)
				}
				return
			}
			if !ok || n != tt.n || set != byteSetOf(tt.set) {
				t.Fatalf("got ok=%v n=%d set=%q, want n=%d set=%q", ok, n, asciiMembers(set), tt.n, asciiMembers(byteSetOf(tt.set)))
			}
		})
	}
}

func asciiMembers(s ByteSet) string {
	var b strings.Builder
	for c := 0; c < 0x80; c++ {
		if s.Contains(byte(c)) {
			b.WriteByte(byte(c))
		}
	}
	return b.String()
}

func TestRegexp2HasNoRequiredRun(t *testing.T) {
	re, err := NewRegex(`\d{3}(?=-)`, false, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := re.RequiredRun(); ok {
		t.Fatal("regexp2 pattern offers a run requirement")
	}
}

func TestByteSetLongestRun(t *testing.T) {
	s := byteSetOf("0123456789-")
	tests := []struct {
		text  string
		limit int
		want  int
	}{
		{"", 0, 0},
		{"abc", 0, 0},
		{"a12-3b45", 0, 4},
		{"a12-3b45", 2, 2},
		{"94107-1120.", 0, 10},
		{"1é2", 0, 4}, // é is two bytes >= 0x80
	}
	for _, tt := range tests {
		if got := s.LongestRun(tt.text, tt.limit); got != tt.want {
			t.Errorf("LongestRun(%q, %d) = %d, want %d", tt.text, tt.limit, got, tt.want)
		}
	}
	if s.Len() != 128+11 || !s.Contains(0xff) || s.Contains('a') {
		t.Fatalf("Len %d", s.Len())
	}
}

func randomRunPattern(r *rand.Rand, depth int) string {
	if depth <= 0 {
		atoms := []string{"1", "2", "-", " ", "a", "A", "k", "[0-9]", `\d`, "[ -]", "[a-c]", "[1-5]", "é",
			`\b`, `\B`, "^", "$", ".", "[^0-9]", `\w`, `\s`, "(?i)k", "(?i:a)", "[[:alpha:]]", "x"}
		return atoms[r.IntN(len(atoms))]
	}
	switch r.IntN(9) {
	case 0, 1, 2:
		return randomRunPattern(r, depth-1) + randomRunPattern(r, depth-1)
	case 3:
		return "(?:" + randomRunPattern(r, depth-1) + "|" + randomRunPattern(r, depth-1) + ")"
	case 4:
		return "(" + randomRunPattern(r, depth-1) + ")"
	case 5, 6:
		q := []string{"*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "{3}"}
		return "(?:" + randomRunPattern(r, depth-1) + ")" + q[r.IntN(len(q))]
	case 7:
		return "(?i:" + randomRunPattern(r, depth-1) + ")"
	default:
		return randomRunPattern(r, depth-1) + "|" + randomRunPattern(r, depth-1)
	}
}

func randomRunInput(r *rand.Rand) string {
	parts := []string{"1", "2", "3", "7", "-", " ", "a", "A", "b", "k", "K", "é", "\u212a", "\n", "x", "\xff"}
	if r.IntN(2) == 0 {
		parts = []string{"1", "-", "a", "A", "k", "K", "\u212a"} // fewer symbols: matches of longer runs
	}
	var sb strings.Builder
	for n := r.IntN(24); n > 0; n-- {
		sb.WriteString(parts[r.IntN(len(parts))])
	}
	return sb.String()
}

// TestRequiredRunProperty checks the run requirement's promise on random patterns and inputs: whenever
// the pattern matches, the input has a run of at least n bytes in the set.
func TestRequiredRunProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	patterns, checked := 0, 0
	for i := 0; i < 6000; i++ {
		pattern := randomRunPattern(r, 1+r.IntN(4))
		ci := r.IntN(4) == 0
		ev, err := NewRegex(pattern, ci, r.IntN(4) == 0, r.IntN(4) == 0, time.Second)
		if err != nil {
			continue
		}
		set, n, ok := ev.RequiredRun()
		if !ok {
			continue
		}
		if n < 2 || set.Len() > 200 {
			t.Fatalf("%q: useless requirement n=%d len=%d", pattern, n, set.Len())
		}
		patterns++
		for j := 0; j < 60; j++ {
			in := randomRunInput(r)
			if ev.re2.get().MatchString(in) {
				checked++
				if got := set.LongestRun(in, 0); got < n {
					t.Fatalf("pattern %q (ci=%v) matches %q but its longest run in %q is %d < %d", pattern, ci, in, asciiMembers(set), got, n)
				}
			}
		}
	}
	if patterns < 1000 || checked < 5000 {
		t.Fatalf("only %d patterns with a requirement, %d matching cases checked", patterns, checked)
	}
	t.Logf("%d patterns with a requirement, %d matching cases", patterns, checked)
}

// TestRequiredRunOnTheBenchmarkInput: the text the engine benchmarks use rules out the card and SSN
// patterns by their runs (its longest digit runs are "-2291-7743" and "94107-1120").
func TestRequiredRunOnTheBenchmarkInput(t *testing.T) {
	const in = "Hi, I placed order #A-2291-7743 on 12/03 for 3 items (total $48.20) and it still shows " +
		"'processing'. Could you check the shipping status, please? My zip code is 94107-1120. Thanks a lot, many thanks!!"
	for _, p := range []string{`\b(?:4\d{3}|5[1-5]\d{2}|6011|3[47]\d{2})[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,4}\b`, `\b\d{3}-\d{2}-\d{4,8}\b`} {
		ev, err := NewRegex(p, false, false, false, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		set, n, ok := ev.RequiredRun()
		if !ok || set.LongestRun(in, 0) >= n {
			t.Fatalf("%q: ok=%v n=%d run=%d", p, ok, n, set.LongestRun(in, 0))
		}
		if regexp.MustCompile(p).MatchString(in) {
			t.Fatalf("%q matches", p)
		}
	}
}
