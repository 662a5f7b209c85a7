package evaluator

import (
	"regexp/syntax"
	"sync"
	"unicode/utf8"

	"github.com/guardrail-control/guard/internal/ahocorasick"
)

// A branch whose literal sets all occur somewhere in a long text used to run over the whole text, and
// the sets of the prompt-family branches are common English ("the", "your", "you", "all"): the longer
// the text, the more branches ran, each over all of it, so the cost grew faster than the text. A branch
// can match only where its literals occur together, and no branch can match across some bytes
// ("[^.!?\n]*?" between the words of a phrase never crosses a full stop, "end\s+of\s+the\s+document"
// holds no "k"): such a byte is a separator of the branch. The text between two separators is a segment; every match of the branch lies
// inside one segment, so the branch runs only on the segments that hold a literal of each of its sets,
// each at most once. The cost is one pass for the hits plus, per branch, at most the text once.

// separatorsOf returns the separators of a branch (re parsed with syntax.Perl and simplified): the ASCII
// bytes that no match of re holds, and those that a match holds only as its last byte when every match
// is at least two bytes long and no literal of litSets holds them. Punctuation ends phrases in prose; a
// branch that spells out its words ("end of the document") consumes only their letters, and any other
// letter separates too; a phrase that may end with a full stop ("your system prompt.") still never holds
// one inside. Only ASCII bytes separate: they never occur inside the encoding of another character.
func separatorsOf(re *syntax.Regexp, litSets [][]string) ByteSet {
	all, notLast := consumed(re)
	var litBytes ByteSet
	for _, set := range litSets {
		for _, l := range set {
			for i := 0; i < len(l); i++ {
				addRune(&litBytes, rune(l[i]), true)
			}
		}
	}
	lastOnly := minMatchLen(re) >= 2
	var sep ByteSet
	for c := 0; c < utf8.RuneSelf; c++ {
		b := byte(c)
		if !all.Contains(b) || lastOnly && !notLast.Contains(b) && !litBytes.Contains(b) {
			sep.Add(b)
		}
	}
	return sep
}

// consumed returns the ASCII bytes some match of re may hold (all), and those it may hold at another
// place than its last byte (notLast; a superset where telling is hard).
func consumed(re *syntax.Regexp) (all, notLast ByteSet) {
	fold := re.Flags&syntax.FoldCase != 0
	switch re.Op {
	case syntax.OpLiteral:
		for i, r := range re.Rune {
			addRune(&all, r, fold)
			if i < len(re.Rune)-1 {
				addRune(&notLast, r, fold)
			}
		}
	case syntax.OpCharClass:
		for k := 0; k+1 < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1] && r < utf8.RuneSelf; r++ {
				addRune(&all, r, fold)
			}
		}
	case syntax.OpAnyChar:
		all = ByteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	case syntax.OpAnyCharNotNL:
		all = ByteSet{^uint64(0) &^ (1 << '\n'), ^uint64(0), ^uint64(0), ^uint64(0)}
	case syntax.OpCapture:
		return consumed(re.Sub[0])
	case syntax.OpQuest:
		return consumed(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		all, _ = consumed(re.Sub[0])
		notLast = all // a copy may follow
	case syntax.OpRepeat:
		all, notLast = consumed(re.Sub[0])
		if re.Max != 1 {
			notLast = all
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			a, n := consumed(sub)
			all, notLast = union(all, a), union(notLast, n)
		}
	case syntax.OpConcat:
		// A byte is not last when it is not last in its part, or when a later part may hold a byte.
		later := false
		for i := len(re.Sub) - 1; i >= 0; i-- {
			a, n := consumed(re.Sub[i])
			all, notLast = union(all, a), union(notLast, n)
			if later {
				notLast = union(notLast, a)
			}
			later = later || a != ByteSet{} || maxMayHoldNonASCII(re.Sub[i])
		}
	}
	return all, notLast
}

// maxMayHoldNonASCII reports whether re may hold a character that is not ASCII (so a later part of a
// concatenation may consume something even when its ASCII set is empty).
func maxMayHoldNonASCII(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return true
			}
		}
		return false
	case syntax.OpCharClass:
		return len(re.Rune) > 0 && re.Rune[len(re.Rune)-1] >= utf8.RuneSelf
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	for _, sub := range re.Sub {
		if maxMayHoldNonASCII(sub) {
			return true
		}
	}
	return false
}

// minMatchLen is the fewest bytes a match of re holds (saturating at 1<<16).
func minMatchLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += utf8.RuneLen(r)
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minMatchLen(re.Sub[0])
	case syntax.OpRepeat:
		return satMul(minMatchLen(re.Sub[0]), re.Min)
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n = satAdd(n, minMatchLen(sub))
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minMatchLen(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // star, quest, assertions, empty match
}

// branchUse is one place a literal gates: branch b, whose sets holding the literal are the bits of mask.
type branchUse struct {
	b    int32
	mask uint64
}

// windowScratch is the per-call state of a windowed match, pooled.
type windowScratch struct {
	hits []ahocorasick.Hit
	// per branch: the segment its sets were last counted in (lo), the sets hit there, and the segment it
	// last ran on.
	segLo, ranLo []int32
	acc          []uint64
	// per separator set: the current segment [lo, hi) (lo the separator before it, or -1; hi the one
	// after it, or len(text)).
	curLo, curHi []int32
}

var windowScratchPool = sync.Pool{New: func() any { return new(windowScratch) }}

// matchWindows reports whether some branch matches text, running each candidate branch (cand[i]: all
// its sets occur in text) only on the segments that hold a literal of each of its sets. found holds the
// literals that occur.
//
// With changed (the normalised pass: text is a normalised text, changed its normalize.Text.ChangedPrefix
// over the original, which did not match), a window that normalisation left as it was is skipped: the
// same window, byte for byte with the same neighbours, was run (or gated out) on the original.
func (f *branchFilter) matchWindows(text string, cand []bool, found *[maxBranchLiterals / 64]uint64, changed []int32, work *regexWork) bool {
	var want [maxBranchLiterals / 64]uint64
	for i, ok := range cand {
		if ok {
			for w := range want {
				want[w] |= f.branchLits[i][w]
			}
		}
	}
	for w := range want {
		want[w] &= found[w]
	}
	s := windowScratchPool.Get().(*windowScratch)
	defer windowScratchPool.Put(s)
	s.hits = f.ac.Hits(text, want[:], s.hits[:0])
	if work != nil {
		work.scanned += len(text)
	}
	nb, ns := len(f.branches), len(f.seps)
	s.segLo, s.ranLo, s.acc = resize(s.segLo, nb), resize(s.ranLo, nb), resizeU64(s.acc, nb)
	s.curLo, s.curHi = resize(s.curLo, ns), resize(s.curHi, ns)
	for i := range nb {
		s.segLo[i], s.ranLo[i] = -2, -2
	}
	for k := range ns {
		s.curLo[k], s.curHi[k] = -2, -1
	}
	for _, h := range s.hits {
		at := h.End - 1
		for _, u := range f.uses[h.Pattern] {
			if !cand[u.b] {
				continue
			}
			br := &f.branches[u.b]
			if br.anchored != nil {
				if u.mask&(1<<uint(br.leadSet)) == 0 {
					continue
				}
				p := int(h.End) - len(f.lits[h.Pattern])
				if br.leadWB && !wordBoundaryAt(text, p) {
					continue
				}
				end := len(text)
				if br.maxLen >= 0 {
					end = min(end, p+br.maxLen+1)
				}
				if changed != nil && br.maxLen >= 0 && changed[end] == changed[max(p-1, 0)] {
					continue // the same bytes, with the same one before, as in the original
				}
				if work != nil {
					// An unbounded run reads as far as the branch can go: reach bytes but for white space.
					n := min(end-p, br.reach)
					work.runs++
					work.bytes += n
					if br.maxLen < 0 {
						work.whole += n // not skipped on the normalised pass
					}
				}
				if br.anchored.get().MatchString(text[p:end]) {
					return true
				}
				continue
			}
			k := br.sep
			if f.seps[k].Contains(text[at]) {
				// The literal matched case-insensitively where the branch does not fold case ("select"
				// for "SELECT"): no match of the branch holds this occurrence.
				continue
			}
			if at >= s.curHi[k] {
				s.curLo[k], s.curHi[k] = segmentAround(text, int(at), &f.seps[k])
			}
			lo := s.curLo[k]
			if s.segLo[u.b] != lo {
				s.segLo[u.b], s.acc[u.b] = lo, 0
			}
			s.acc[u.b] |= u.mask
			if s.acc[u.b] != br.full || s.ranLo[u.b] == lo || br.atStart && lo >= 0 {
				continue
			}
			s.ranLo[u.b] = lo
			// The window is the segment with the separator before it and the separator after it plus
			// one byte: a match may end with the separator after it ("prompt."), the assertions at
			// the edges (\b, ^ and $ with MULTILINE) see the bytes they see in the whole text, and a
			// separator never starts a match (it is no match's first byte), so no match starts at the
			// window's first byte, where ^ would hold.
			a, b := max(int(lo), 0), min(int(s.curHi[k])+2, len(text))
			if changed != nil && changed[b] == changed[a] {
				continue
			}
			w := text[a:b]
			if work != nil {
				work.runs++
				work.bytes += len(w)
				if len(w) == len(text) {
					work.whole += len(w)
				}
			}
			if br.re.get().MatchString(w) {
				return true
			}
		}
	}
	return false
}

// segmentAround returns the separators around text[at] (not a separator): the last one before it (-1:
// none) and the first one after it (len(text): none).
func segmentAround(text string, at int, sep *ByteSet) (lo, hi int32) {
	lo = -1
	for i := at - 1; i >= 0; i-- {
		if sep.Contains(text[i]) {
			lo = int32(i)
			break
		}
	}
	hi = int32(len(text))
	for i := at + 1; i < len(text); i++ {
		if sep.Contains(text[i]) {
			hi = int32(i)
			break
		}
	}
	return lo, hi
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func resizeU64(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

// regexWork counts the work of a regex evaluation, for the test that holds the cost linear in the text:
// the bytes the literal scans read, and the runs of the regexp engine and the bytes they were given.
type regexWork struct {
	scanned, runs, bytes int
	whole                int // of bytes, those of runs the normalised pass cannot skip (over the whole text, or to its end)
}
