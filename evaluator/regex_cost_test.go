package evaluator

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/internal/costtext"
)

// countWork is the work matchRE2 does on text: the bytes the literal scans read, and the runs of the
// regexp engine with the bytes they were given (the whole text for a pattern the filter cannot split or
// a text it cannot decide).
func (r *Regex) countWork(text string) regexWork {
	var w regexWork
	if r.branches != nil {
		if _, ok := r.branches.matchCounting(text, nil, &w); ok {
			return w
		}
	}
	w.runs++
	w.bytes += len(text)
	return w
}

// maxGrowth is how much more work a text four times as long may cost: the bound on time,
// t(4x) <= 4.5 t(x).
const maxGrowth = 4.5

// runWeight is what a byte given to a regexp run costs against a byte of the literal scan.
const runWeight = 20

// maxWorkPerByte bounds the work per byte of text at any size: about 7 bytes given to the regexp engine
// per byte of text. Before the segment windows, every branch whose literal sets occurred anywhere ran
// over the whole text: 49 of the 67 branches of prompt-injection on 64 KB of prose, about 1,000 units per
// byte.
const maxWorkPerByte = 150

// negligibleWorkPerByte is a work per byte below which growth is not judged: half a byte given to the
// regexp engine per byte of text, beside the two literal passes (a sentence shape that first shows in a
// longer text moves such a figure by more than the bound without costing anything that counts).
const negligibleWorkPerByte = 12

// TestRegexCostGrowsWithTheText fails when a shipped pattern's work grows faster than the text. The work
// is counted, not timed (deterministic on any machine): on ordinary prose and on prose dense in trigger
// words, w(n) = n per literal pass + runWeight times the bytes given to the regexp engine. From 16 KB on,
// w(4n) must be at most maxGrowth w(n) where w(4n)/4n is above negligibleWorkPerByte (below 16 KB the
// generated prose has not shown every sentence shape yet, and fewer windows open per byte); at every
// size from 4 KB, w(n)/n at most maxWorkPerByte. Before the segment windows, w(16 KB) was 7 and w(64 KB)
// 5 times w(4 KB) on ordinary prose for prompt-injection, and w(n)/n reached 1,000.
func TestRegexCostGrowsWithTheText(t *testing.T) {
	patterns, _ := shippedRegexes(t)
	names := make([]string, 0, len(patterns))
	for name := range patterns {
		names = append(names, name)
	}
	sort.Strings(names)
	sizes := []int{4 << 10, 16 << 10, 64 << 10, 256 << 10}
	texts := map[string][]string{}
	for _, kind := range []string{costtext.Ordinary, costtext.Triggers} {
		for _, n := range sizes {
			texts[kind] = append(texts[kind], costtext.Text(kind, n))
		}
	}
	var report strings.Builder
	for _, name := range names {
		r, err := NewRegex(patterns[name], true, false, false, 0)
		if err != nil || r.re2 == nil {
			continue
		}
		for _, kind := range []string{costtext.Ordinary, costtext.Triggers} {
			fmt.Fprintf(&report, "%-44s %-8s", name, kind)
			prev := 0.0
			for i, text := range texts[kind] {
				w := r.countWork(text)
				work := float64(w.scanned) + runWeight*float64(w.bytes)
				perByte := work / float64(len(text))
				fmt.Fprintf(&report, " %6.1f", perByte)
				if perByte > maxWorkPerByte {
					t.Errorf("%s on %s text of %d bytes: work %.0f per byte (at most %d)", name, kind, len(text), perByte, maxWorkPerByte)
				}
				if i > 1 && work > maxGrowth*prev && perByte > negligibleWorkPerByte {
					t.Errorf("%s on %s text: work %.0f at %d bytes, %.1f times the work at %d bytes (at most %.1f)",
						name, kind, work, len(text), work/prev, len(texts[kind][i-1]), maxGrowth)
				}
				prev = work
			}
			report.WriteString("\n")
		}
	}
	t.Logf("work per byte at %v bytes:\n%s", sizes, report.String())
}
