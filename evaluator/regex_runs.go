package evaluator

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// Limits of run extraction.
const (
	maxRunSetLen = 200     // a set with more byte values (of 256) is too common to filter anything
	minRunLen    = 2       // a shorter run is no filter
	runLenCap    = 1 << 16 // run lengths saturate here
)

// highBytes holds every byte >= 0x80: a non-ASCII character is encoded with such bytes only, so a run
// of characters in a set is a run at least as long of bytes in that set plus highBytes.
var highBytes = ByteSet{0, 0, ^uint64(0), ^uint64(0)}

// runInfo is what run extraction knows of a regexp/syntax node: classOnly means every string the node
// matches is made only of characters in set (ASCII members; non-ASCII ones are covered by highBytes)
// and has at least min of them. A class-only node whose set is too broad is not class-only.
type runInfo struct {
	classOnly bool
	set       ByteSet
	min       int
}

// runSeg is a candidate requirement: every match holds n consecutive characters in set.
type runSeg struct {
	set ByteSet
	n   int
}

// requiredRun derives from a Go regexp, parsed with syntax.Perl and simplified, a set of bytes and a
// length n such that every text the regexp matches has n consecutive bytes in the set (which holds
// every byte >= 0x80). ok is false when no useful requirement exists (n < 2, or a set of more than 200
// byte values).
func requiredRun(re *syntax.Regexp) (set ByteSet, n int, ok bool) {
	seg, ok := bestRun(re)
	if !ok || seg.n < minRunLen {
		return ByteSet{}, 0, false
	}
	return seg.set, seg.n, true
}

// bestRun is the most selective run every match of re contains: the longest, then the one with the
// smaller set.
func bestRun(re *syntax.Regexp) (runSeg, bool) {
	if i := runOf(re); i.classOnly {
		return runSeg{set: withHigh(i.set), n: i.min}, i.min > 0
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return bestRun(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return bestRun(re.Sub[0])
		}
	case syntax.OpAlternate:
		// Every match matches one branch, so it holds that branch's run: the union of the sets, the
		// shortest of the lengths.
		var out runSeg
		for k, sub := range re.Sub {
			s, ok := bestRun(sub)
			if !ok {
				return runSeg{}, false
			}
			if k == 0 {
				out = s
				continue
			}
			out.set = union(out.set, s.set)
			out.n = min(out.n, s.n)
		}
		return out, out.n > 0 && !tooBroad(out.set)
	case syntax.OpConcat:
		return concatRun(flattenConcat(nil, re.Sub))
	}
	return runSeg{}, false
}

// flattenConcat splices the children of captured concatenations into subs: a(bc)d is abcd to runs.
func flattenConcat(out, subs []*syntax.Regexp) []*syntax.Regexp {
	for _, sub := range subs {
		inner := sub
		for inner.Op == syntax.OpCapture {
			inner = inner.Sub[0]
		}
		if inner.Op == syntax.OpConcat {
			out = flattenConcat(out, inner.Sub)
			continue
		}
		out = append(out, sub)
	}
	return out
}

// concatRun splits a concatenation into maximal runs of consecutive class-only children and returns
// the best of them, or of the runs required inside the other children.
func concatRun(subs []*syntax.Regexp) (runSeg, bool) {
	var best runSeg
	found := false
	consider := func(s runSeg) {
		if s.n <= 0 || tooBroad(s.set) {
			return
		}
		if !found || s.n > best.n || s.n == best.n && s.set.Len() < best.set.Len() {
			best, found = s, true
		}
	}
	var cur runSeg
	for _, sub := range subs {
		i := runOf(sub)
		if i.classOnly {
			cur.set = union(cur.set, withHigh(i.set))
			cur.n = satAdd(cur.n, i.min)
			continue
		}
		consider(cur)
		cur = runSeg{}
		if s, ok := bestRun(sub); ok {
			consider(s)
		}
	}
	consider(cur)
	return best, found
}

// runOf classifies a node (see runInfo).
func runOf(re *syntax.Regexp) runInfo {
	var i runInfo
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		for _, r := range re.Rune {
			addRune(&i.set, r, fold)
		}
		i = runInfo{classOnly: true, set: i.set, min: len(re.Rune)}
	case syntax.OpCharClass:
		for k := 0; k+1 < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1] && r < utf8.RuneSelf; r++ {
				i.set.Add(byte(r))
			}
		}
		i.classOnly, i.min = true, 1
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return runInfo{} // every character: too broad
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return runInfo{classOnly: true} // zero width: neither adds to nor breaks a run
	case syntax.OpCapture, syntax.OpPlus:
		return runOf(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		i = runOf(re.Sub[0])
		i.min = 0
	case syntax.OpRepeat:
		i = runOf(re.Sub[0])
		i.min = satMul(i.min, re.Min)
	case syntax.OpAlternate, syntax.OpConcat:
		for k, sub := range re.Sub {
			s := runOf(sub)
			if !s.classOnly {
				return runInfo{}
			}
			i.set = union(i.set, s.set)
			switch {
			case re.Op == syntax.OpConcat:
				i.min = satAdd(i.min, s.min)
			case k == 0:
				i.min = s.min
			default:
				i.min = min(i.min, s.min)
			}
		}
		i.classOnly = true
	default: // OpNoMatch and anything unknown: break runs
		return runInfo{}
	}
	if i.classOnly && tooBroad(withHigh(i.set)) {
		return runInfo{}
	}
	return i
}

// addRune adds r (and with fold its simple case folds) to set when ASCII; non-ASCII runes are covered
// by highBytes.
func addRune(set *ByteSet, r rune, fold bool) {
	if r < utf8.RuneSelf {
		set.Add(byte(r))
	}
	if !fold {
		return
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			set.Add(byte(f))
		}
	}
}

func union(a, b ByteSet) ByteSet {
	return ByteSet{a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]}
}

func withHigh(s ByteSet) ByteSet { return union(s, highBytes) }

func tooBroad(s ByteSet) bool {
	s = withHigh(s)
	return s.Len() > maxRunSetLen
}

func satAdd(a, b int) int { return min(a+b, runLenCap) }

func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > runLenCap/b {
		return runLenCap
	}
	return min(a*b, runLenCap)
}
