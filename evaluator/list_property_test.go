package evaluator

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestListMatchesReference compares every match mode, folded and case-sensitive, with a reference
// built from Go regexps on random values and texts over a small alphabet with word and non-word,
// ASCII and non-ASCII characters.
func TestListMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(alphabet []string, n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return sb.String()
	}
	valueAlphabet := []string{"a", "b", "é", "k", " ", "-"}
	textAlphabet := []string{"a", "b", "A", "B", "é", "É", "k", "K", "\u212a", " ", "_", "-", "1"}
	modes := []ListMode{ListExact, ListContains, ListStartsWith, ListEndsWith}
	checked, matched := 0, 0
	for range 4000 {
		v := pick(valueAlphabet, 1+r.IntN(3))
		if strings.TrimSpace(v) == "" {
			continue
		}
		cs := r.IntN(2) == 0
		mode := modes[r.IntN(len(modes))]
		l, err := NewList([]string{v}, ListOptions{CaseSensitive: cs, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		q := regexp.QuoteMeta(v)
		var ref string
		switch mode {
		case ListExact:
			ref = `^` + q + `$`
		case ListContains:
			// Word characters are letters, decimal digits and underscore.
			ref = `(?:^|[^\p{L}\p{Nd}_])` + q + `(?:$|[^\p{L}\p{Nd}_])`
		case ListStartsWith:
			ref = `^` + q
		case ListEndsWith:
			ref = q + `$`
		}
		if !cs {
			ref = `(?i)` + ref
		}
		re := regexp.MustCompile(ref)
		for range 10 {
			in := pick(textAlphabet, r.IntN(8))
			if in == "" {
				continue
			}
			want := re.MatchString(in)
			res, err := l.Evaluate(context.Background(), text(in))
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if want {
				matched++
			}
			if res.Matched != want {
				t.Fatalf("value %q mode %s case_sensitive %v on %q: matched %v, reference %v", v, mode, cs, in, res.Matched, want)
			}
		}
	}
	if checked < 10000 || matched < 500 {
		t.Fatalf("weak test: %d checked, %d matched", checked, matched)
	}
}
