package evaluator

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestRegexRequiredLiterals(t *testing.T) {
	tests := []struct {
		pattern string
		ci      bool
		want    []string // nil: no prefilter
		folds   bool
	}{
		{`secret`, false, []string{"secret"}, false},
		{`Secret`, false, []string{"secret"}, false},
		{`secret`, true, []string{"secret"}, true},
		{`(?i)secret`, false, []string{"secret"}, true},
		{`ignore (all )?previous instructions`, true, []string{"previous instructions"}, true},
		{`\b\d{3}-\d{2}-\d{4}\b`, false, []string{"-"}, false},
		{`foo|bar`, false, []string{"foo", "bar"}, false},
		{`foo|ba.`, false, []string{"foo", "ba"}, false},
		{`foo|.*`, false, nil, false},
		{`a[bc]d`, false, []string{"abd", "acd"}, false},
		{`[a-z]+@example\.com`, false, []string{"@example.com"}, false},
		{`(?:abc)+x`, false, []string{"abc"}, false},
		{`(abc){2,}`, false, []string{"abc"}, false},
		{`(abc){0,3}`, false, nil, false},
		{`x*`, false, nil, false},
		{`.`, false, nil, false},
		{`^$`, false, nil, false},
		{`[ab]`, false, []string{"a", "b"}, false},
		{`[a-f]`, false, nil, false},
		{`café`, false, []string{"café"}, false},
		{`café`, true, nil, true},
		{`(?i)caf(?-i:é)`, false, []string{"café"}, true},
		{`(?i)caf(?-i:é)|x`, false, []string{"café", "x"}, true},
		{`(?i)(é|a)`, false, nil, true},
		{`(?i)k`, false, []string{"k"}, true},
		{`ab(cd|ef)gh`, false, []string{"abcdgh", "abefgh"}, false},
		{`card (number|no)\.? ?\d{4}`, true, []string{"card number", "card no"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := NewRegex(tt.pattern, tt.ci, false, false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			lits, folds, ok := re.RequiredLiterals()
			if tt.want == nil {
				if ok {
					t.Fatalf("got literals %q, want none", lits)
				}
				return
			}
			if !ok {
				t.Fatalf("no literals, want %q", tt.want)
			}
			got := append([]string(nil), lits...)
			sort.Strings(got)
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) || folds != tt.folds {
				t.Fatalf("got %q folds=%v, want %q folds=%v", got, folds, want, tt.folds)
			}
		})
	}
}

func TestRegexp2HasNoPrefilter(t *testing.T) {
	re, err := NewRegex(`secret(?=s)`, false, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := re.RequiredLiterals(); ok {
		t.Fatal("regexp2 pattern offers a prefilter")
	}
}

// randomPattern builds a pattern from a small grammar over a tiny alphabet, so that random inputs often
// match.
func randomPattern(r *rand.Rand, depth int) string {
	if depth <= 0 {
		return randomAtom(r)
	}
	switch r.IntN(9) {
	case 0, 1:
		return randomPattern(r, depth-1) + randomPattern(r, depth-1)
	case 2:
		return randomPattern(r, depth-1) + "|" + randomPattern(r, depth-1)
	case 3:
		return "(" + randomPattern(r, depth-1) + ")"
	case 4:
		q := []string{"*", "+", "?", "{2}", "{0,2}", "{1,3}", "+?"}
		return "(?:" + randomPattern(r, depth-1) + ")" + q[r.IntN(len(q))]
	case 5:
		return "(?i:" + randomPattern(r, depth-1) + ")"
	default:
		return randomAtom(r) + randomPattern(r, depth-1)
	}
}

func randomAtom(r *rand.Rand) string {
	atoms := []string{"a", "b", "c", "A", "ab", "bc", "[ab]", "[Bc]", "[a-c]", ".", `\b`, "^", "$", " ", `\w`, "é", "k", "(?i)b"}
	return atoms[r.IntN(len(atoms))]
}

func randomInput(r *rand.Rand) string {
	parts := []string{"a", "b", "c", "A", "B", "C", " ", "é", "É", "k", "K", "\n"}
	var sb strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		sb.WriteString(parts[r.IntN(len(parts))])
	}
	return sb.String()
}

// TestRequiredLiteralsProperty checks the prefilter's promise on random patterns and inputs: whenever
// the pattern matches, one of its literals occurs in the input (ASCII case-insensitively). A pattern
// that folds case only promises this for ASCII input.
func TestRequiredLiteralsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for i := 0; i < 3000; i++ {
		pattern := randomPattern(r, 1+r.IntN(4))
		ci := r.IntN(4) == 0
		ev, err := NewRegex(pattern, ci, false, false, time.Second)
		if err != nil {
			continue
		}
		lits, folds, ok := ev.RequiredLiterals()
		if !ok {
			continue
		}
		for _, l := range lits {
			if l == "" {
				t.Fatalf("%q: empty literal", pattern)
			}
		}
		prefix := ""
		if ci {
			prefix = "(?i)"
		}
		re := regexp.MustCompile(prefix + pattern)
		for j := 0; j < 40; j++ {
			in := randomInput(r)
			if folds && !isASCII(in) {
				continue
			}
			if !re.MatchString(in) {
				continue
			}
			checked++
			if !containsAnyFold(in, lits) {
				t.Fatalf("pattern %q (ci=%v) matches %q but none of %q occurs", pattern, ci, in, lits)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d matching cases checked", checked)
	}
}

func containsAnyFold(s string, lits []string) bool {
	s = asciiLower(s)
	for _, l := range lits {
		if strings.Contains(s, asciiLower(l)) {
			return true
		}
	}
	return false
}
