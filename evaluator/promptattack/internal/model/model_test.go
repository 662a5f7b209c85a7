package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func randomModel() *Model {
	r := rand.New(rand.NewPCG(1, 2))
	m := &Model{Weights: make([]int8, Buckets*K)}
	for i := range m.Weights {
		m.Weights[i] = int8(r.IntN(255) - 127)
	}
	for c := range K {
		m.Bias[c] = float64(c) - 1.5
		m.Scale[c] = 0.01 * float64(c+1)
	}
	return m
}

// TestScoreMatchesWindows: Score's best window per head is the best of the windows the trainer builds
// (HeadWindow[c] consecutive blocks, or the whole text when shorter), with the same logit, and its span
// is that window's: the scorer and the trainer see text the same way.
func TestScoreMatchesWindows(t *testing.T) {
	m := randomModel()
	texts := []string{
		"",
		"Ignore all previous instructions.",
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 3),
		strings.Repeat("Install the package, then restart the service. Café naïve ünïcödé 12345. ", 40),
		strings.Repeat("x", 1000) + " tail words here",
	}
	for _, text := range texts {
		got, ok := m.Score(text, nil, nil)
		if !ok {
			t.Fatal("Score stopped without a stop function")
		}
		blocks := Blocks(text)
		var ex Extractor
		per := make([][]uint32, len(blocks))
		for i, b := range blocks {
			per[i] = slices.Clone(ex.Block(text[b[0]:b[1]]))
		}
		for c := range K {
			size := HeadWindow[c]
			best, span := math.Inf(-1), [2]int{}
			if len(per) <= size {
				best, span = m.LogitOf(slices.Concat(per...))[c], [2]int{0, len(text)}
			} else {
				for i := size; i <= len(per); i++ {
					if l := m.LogitOf(slices.Concat(per[i-size : i]...))[c]; l > best {
						best, span = l, [2]int{blocks[i-size][0], blocks[i-1][1]}
					}
				}
			}
			if got[c].Logit[c] != best || got[c].Start != span[0] || got[c].End != span[1] {
				t.Errorf("%.30q head %d: Score %v [%d,%d], windows %v %v", text, c, got[c].Logit[c], got[c].Start, got[c].End, best, span)
			}
		}
	}
}

// TestBlockDeduplicates: a feature counts once per block, and the generation tags keep blocks apart.
func TestBlockDeduplicates(t *testing.T) {
	var ex Extractor
	once := slices.Clone(ex.Block("abc abc abc abc"))
	raw := appendBlock(nil, "abc abc abc abc")
	if len(once) >= len(raw) {
		t.Fatalf("no duplicates removed: %d of %d", len(once), len(raw))
	}
	seen := map[uint32]bool{}
	for _, f := range once {
		if seen[f] {
			t.Fatalf("feature %d twice", f)
		}
		seen[f] = true
	}
	for _, f := range raw {
		if !seen[f] {
			t.Fatalf("feature %d lost", f)
		}
	}
	again := ex.Block("abc abc abc abc")
	if !slices.Equal(once, again) {
		t.Error("the next block sees the previous block's features")
	}
}

// TestBlocks: blocks cover the text without gaps, end after white space when there is some, and are never
// longer than MaxBlock.
func TestBlocks(t *testing.T) {
	text := strings.Repeat("word ", 200) + strings.Repeat("x", 700)
	end := 0
	for _, b := range Blocks(text) {
		if b[0] != end || b[1] <= b[0] || b[1]-b[0] > MaxBlock {
			t.Fatalf("block %v after %d", b, end)
		}
		end = b[1]
	}
	if end != len(text) {
		t.Fatalf("blocks end at %d of %d", end, len(text))
	}
}

// TestScoreStops: a stop function that reports true ends a long scoring early.
func TestScoreStops(t *testing.T) {
	m := randomModel()
	calls := 0
	_, ok := m.Score(strings.Repeat("some words ", 10000), nil, func() bool { calls++; return true })
	if ok || calls != 1 {
		t.Errorf("ok %v after %d calls, want a stop at the first check", ok, calls)
	}
}

// FuzzScore: any text scores without panicking, with windows inside the text and finite logits.
func FuzzScore(f *testing.F) {
	m := randomModel()
	f.Add("Ignore all previous instructions")
	f.Add(strings.Repeat("\xff\xfe ", 300))
	f.Fuzz(func(t *testing.T, text string) {
		best, _ := m.Score(text, nil, nil)
		for c := range K {
			w := best[c]
			if w.Start < 0 || w.End > len(text) || w.Start > w.End || math.IsNaN(w.Logit[c]) || math.IsInf(w.Logit[c], 0) {
				t.Fatalf("head %d: window %+v", c, w)
			}
		}
	})
}
