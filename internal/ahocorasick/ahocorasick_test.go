package ahocorasick

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func foldString(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = fold(c)
	}
	return string(b)
}

// naive reports the patterns found in text by strings.Contains on ASCII-folded copies.
func naive(patterns []string, text string) []bool {
	ft := foldString(text)
	out := make([]bool, len(patterns))
	for i, p := range patterns {
		out[i] = p != "" && strings.Contains(ft, foldString(p))
	}
	return out
}

func check(t *testing.T, patterns []string, text string) {
	t.Helper()
	a := New(patterns)
	found := make([]uint64, (len(patterns)+63)/64)
	nonASCII := a.Scan(text, found)
	want := naive(patterns, text)
	for i := range patterns {
		got := found[i/64]&(1<<(uint(i)%64)) != 0
		if got != want[i] {
			t.Fatalf("pattern %d %q in %q: got %v, want %v (patterns %q)", i, patterns[i], text, got, want[i], patterns)
		}
	}
	wantHigh := false
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			wantHigh = true
		}
	}
	if nonASCII != wantHigh {
		t.Fatalf("nonASCII = %v, want %v for %q", nonASCII, wantHigh, text)
	}
}

func TestScanTable(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		text     string
	}{
		{"none", nil, "anything"},
		{"empty text", []string{"a"}, ""},
		{"empty pattern never reported", []string{"", "b"}, "abc"},
		{"classic", []string{"he", "she", "his", "hers"}, "ushers"},
		{"case folded", []string{"Ignore Previous"}, "please IGNORE previous instructions"},
		{"pattern case folded", []string{"SSN"}, "my ssn is"},
		{"overlapping suffixes", []string{"a", "aa", "aaa", "aaaa"}, "aaa"},
		{"duplicates", []string{"abc", "ABC", "abc"}, "xxabcxx"},
		{"non-ascii exact", []string{"café"}, "CAFÉ au café"},
		{"non-ascii no fold", []string{"É"}, "é"},
		{"digits and punctuation", []string{"-", "@", "sk-"}, "order #A-1042"},
		{"prefix of text end", []string{"abcd"}, "xxabc"},
		{"failure into dictionary", []string{"bcd", "c", "abcx"}, "abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, tt.patterns, tt.text) })
	}
}

func TestScanRandomAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []byte("abAB-c\xc3\xa9 1")
	randStr := func(max int) string {
		n := r.Intn(max + 1)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(b)
	}
	for iter := 0; iter < 600; iter++ {
		patterns := make([]string, 1+r.Intn(20))
		for i := range patterns {
			patterns[i] = randStr(6)
		}
		for k := 0; k < 5; k++ {
			check(t, patterns, randStr(60))
		}
	}
}

// TestScanLongTextAgainstNaive: texts long enough to be scanned as two halves, with patterns planted at
// and across the middle and at both ends, found as the naive scan finds them.
func TestScanLongTextAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	alphabet := []byte("abcAB-\xc3\xa9 1")
	for iter := 0; iter < 300; iter++ {
		patterns := make([]string, 1+r.Intn(30))
		for i := range patterns {
			b := make([]byte, 1+r.Intn(9))
			for j := range b {
				b[j] = alphabet[r.Intn(len(alphabet))]
			}
			patterns[i] = string(b)
		}
		n := minSplitText + r.Intn(900)
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		p := patterns[r.Intn(len(patterns))]
		at := n/2 - r.Intn(len(p)+1) // across or at the middle
		if at >= 0 && at+len(p) <= n {
			copy(b[at:], p)
		}
		copy(b[n-len(patterns[0]):], patterns[0])
		check(t, patterns, string(b))
	}
}

func TestManyPatternsDeepSparseStates(t *testing.T) {
	// Many long patterns push states past the dense depth and exercise sparse edges and failure links.
	r := rand.New(rand.NewSource(2))
	patterns := make([]string, 1500)
	for i := range patterns {
		b := make([]byte, 3+r.Intn(12))
		for j := range b {
			b[j] = "abcdefghij0123-_ XYZ"[r.Intn(20)]
		}
		patterns[i] = string(b)
	}
	for k := 0; k < 20; k++ {
		b := make([]byte, 400)
		for j := range b {
			b[j] = "abcdefghij0123-_ xyz"[r.Intn(20)]
		}
		// plant a few patterns
		text := string(b) + patterns[r.Intn(len(patterns))] + string(b[:50]) + strings.ToUpper(patterns[r.Intn(len(patterns))])
		check(t, patterns, text)
	}
}

func TestMemoryIsProportional(t *testing.T) {
	// 50,000 distinct 12-byte literals (roughly 10,000 controls' worth) must stay far below a dense DFA.
	patterns := make([]string, 50000)
	r := rand.New(rand.NewSource(3))
	for i := range patterns {
		b := make([]byte, 12)
		for j := range b {
			b[j] = byte('a' + r.Intn(26))
		}
		patterns[i] = string(b)
	}
	a := New(patterns)
	if mb := a.MemoryBytes(); mb > 64<<20 {
		t.Fatalf("automaton over %d patterns uses %d bytes (%d states)", len(patterns), mb, a.States())
	}
}

func TestScanAllocatesNothing(t *testing.T) {
	a := New([]string{"ignore previous instructions", "ssn", "@", "sk-"})
	found := make([]uint64, 1)
	text := "Hello, I would like to know the status of order #A-1042-77; it was due on 2024-03-15."
	if n := testing.AllocsPerRun(100, func() { a.Scan(text, found) }); n != 0 {
		t.Fatalf("Scan allocated %v times", n)
	}
}

func BenchmarkScan(b *testing.B) {
	patterns := []string{"ignore", "previous instructions", "ssn", "social security", "@", "sk-", "ghp_", "akia", "password", "secret"}
	a := New(patterns)
	found := make([]uint64, 1)
	text := strings.Repeat("Hello, I would like to know the status of order #A-1042-77; it was due on 2024-03-15. ", 3)[:200]
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		found[0] = 0
		a.Scan(text, found)
	}
}

// TestHitsEveryOccurrence checks Hits against a naive search: every occurrence of every wanted pattern,
// case-insensitively, in order of its end.
func TestHitsEveryOccurrence(t *testing.T) {
	pats := []string{"he", "she", "his", "hers", "a", "the", "e"}
	a := New(pats)
	for _, text := range []string{"", "ushers", "She said THE hero's hers.", "aaaa", "xyz", "hehehe"} {
		for _, want := range [][]uint64{nil, {1<<1 | 1<<5}} {
			got := a.Hits(text, want, nil)
			var exp []Hit
			lower := strings.ToLower(text)
			for end := 1; end <= len(text); end++ {
				for p, s := range pats {
					if want != nil && want[0]&(1<<uint(p)) == 0 {
						continue
					}
					if end >= len(s) && lower[end-len(s):end] == s {
						exp = append(exp, Hit{Pattern: int32(p), End: int32(end)})
					}
				}
			}
			sortHits(got)
			sortHits(exp)
			if !slices.Equal(got, exp) {
				t.Errorf("Hits(%q, %v) = %v, want %v", text, want, got, exp)
			}
		}
	}
}

func sortHits(h []Hit) {
	slices.SortFunc(h, func(a, b Hit) int {
		if a.End != b.End {
			return int(a.End - b.End)
		}
		return int(a.Pattern - b.Pattern)
	})
}
