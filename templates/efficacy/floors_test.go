package efficacy

import (
	"strings"
	"testing"
)

func TestFloorsCheck(t *testing.T) {
	rep := &Report{Rows: []Row{
		{Template: "t", Corpus: "a", Kind: Attack, Items: 10, Hits: 9, Rate: 0.9},
		{Template: "t", Corpus: "b", Kind: Benign, Items: 100, Hits: 1, Rate: 0.01},
	}}
	cases := []struct {
		name   string
		floors Floors
		want   []string // substrings, one per expected complaint
	}{
		{"at the floors", Floors{"t|a|attack": 0.9, "t|b|benign": 0.01}, nil},
		{"recall below", Floors{"t|a|attack": 0.95, "t|b|benign": 0.01}, []string{"below its floor"}},
		{"fp above", Floors{"t|a|attack": 0.9, "t|b|benign": 0.005}, []string{"above its ceiling"}},
		{"no floor", Floors{"t|a|attack": 0.9}, []string{"no floor recorded"}},
		{"stale floor", Floors{"t|a|attack": 0.9, "t|b|benign": 0.01, "t|c|attack": 0.5}, []string{"not measured"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.floors.Check(rep)
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %d complaints", got, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("complaint %q does not say %q", got[i], w)
				}
			}
		})
	}
	if bad := FloorsOf(rep).Check(rep); len(bad) != 0 {
		t.Errorf("a report does not pass its own floors: %q", bad)
	}
}

// TestOwnCorporaUsed: every file of testdata is measured by some suite (a case file nobody reads is a case
// that protects nothing).
func TestOwnCorporaUsed(t *testing.T) {
	names, err := ownNames()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, s := range Suites {
		for _, c := range append(append([]string{}, s.Attacks...), s.Benign...) {
			used[c] = true
		}
	}
	for _, c := range PIISuite.Corpora {
		used[c] = true
	}
	for _, n := range names {
		if !used[n] {
			t.Errorf("%s is in testdata but no suite measures it", n)
		}
		if _, err := Load("", n); err != nil {
			t.Error(err)
		}
	}
}

func TestByteOffset(t *testing.T) {
	s := "Sz\u00f6ll\u00f6sy a@b.c"
	if got := byteOffset(s, 9); s[got:] != "a@b.c" {
		t.Errorf("byteOffset = %d (%q)", got, s[got:])
	}
}
