package evaluator

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// Limits of literal extraction.
const (
	maxLiteralProduct = 16 // most strings made by joining adjacent exact sets (a[bc]d -> abd, acd)
	maxClassExpansion = 4  // a character class of at most this many ASCII characters becomes literals
)

// litInfo is what a regexp/syntax node requires of a text it matches: at least one of set occurs in it
// (set == nil: no requirement known). exact means the node matches exactly one of set, nothing else,
// so adjacent exact nodes can be joined. Strings are ASCII-lowercased: the engine compares them
// ASCII case-insensitively.
type litInfo struct {
	set   []string
	exact bool
}

// requiredLiterals derives from a Go regexp, parsed with syntax.Perl and simplified, a set of literals
// at least one of which occurs (compared ASCII case-insensitively) in every text the regexp matches.
// foldsCase reports that the pattern has case-insensitive parts (Unicode folding: the filter is then
// unsafe on non-ASCII text). ok is false when no useful set exists.
func requiredLiterals(re *syntax.Regexp) (literals []string, foldsCase bool, ok bool) {
	info := literalsOf(re)
	if info.set == nil {
		return nil, false, false
	}
	for _, l := range info.set {
		if l == "" {
			return nil, false, false
		}
	}
	return info.set, hasFoldCase(re), true
}

func hasFoldCase(re *syntax.Regexp) bool {
	if re.Flags&syntax.FoldCase != 0 {
		return true
	}
	for _, s := range re.Sub {
		if hasFoldCase(s) {
			return true
		}
	}
	return false
}

func literalsOf(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return litInfo{}
		}
		if re.Flags&syntax.FoldCase != 0 && hasCaseVariantNonASCII(re.Rune) {
			// Unicode folding of a non-ASCII letter cannot be checked ASCII case-insensitively.
			return litInfo{}
		}
		return litInfo{set: []string{asciiLower(string(re.Rune))}, exact: true}
	case syntax.OpCharClass:
		return classLiterals(re.Rune)
	case syntax.OpCapture:
		return literalsOf(re.Sub[0])
	case syntax.OpPlus:
		i := literalsOf(re.Sub[0])
		i.exact = false
		return i
	case syntax.OpRepeat:
		if re.Min < 1 {
			return litInfo{}
		}
		i := literalsOf(re.Sub[0])
		if re.Min != 1 || re.Max != 1 {
			i.exact = false
		}
		return i
	case syntax.OpConcat:
		return concatLiterals(re.Sub)
	case syntax.OpAlternate:
		out := litInfo{exact: true}
		for _, sub := range re.Sub {
			i := literalsOf(sub)
			if i.set == nil {
				return litInfo{}
			}
			out.set = unionStrings(out.set, i.set)
			out.exact = out.exact && i.exact
		}
		return out
	}
	// OpStar, OpQuest, OpAnyChar, OpEmptyMatch, assertions, OpNoMatch: nothing required.
	return litInfo{}
}

// classLiterals expands a small class of ASCII characters ([abc], (?i)x -> [Xx]) into single-character
// literals.
func classLiterals(ranges []rune) litInfo {
	var set []string
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi >= utf8.RuneSelf {
			return litInfo{}
		}
		n += int(hi-lo) + 1
		if n > maxClassExpansion {
			return litInfo{}
		}
		for r := lo; r <= hi; r++ {
			set = unionStrings(set, []string{asciiLower(string(r))})
		}
	}
	if len(set) == 0 {
		return litInfo{}
	}
	return litInfo{set: set, exact: true}
}

// concatLiterals joins runs of adjacent exact children (bounded by maxLiteralProduct) and picks the best
// candidate: the set whose shortest literal is longest, then the smaller set.
func concatLiterals(subs []*syntax.Regexp) litInfo {
	var cands [][]string
	var run []string
	runs, allExact := 0, true
	flush := func() {
		if run != nil {
			cands = append(cands, run)
			run = nil
		}
	}
	for _, sub := range subs {
		i := literalsOf(sub)
		switch {
		case i.set == nil:
			allExact = false
			flush()
		case !i.exact:
			allExact = false
			flush()
			cands = append(cands, i.set)
		case run == nil:
			run = i.set
			runs++
		case len(run)*len(i.set) > maxLiteralProduct:
			flush()
			run = i.set
			runs++
		default:
			run = productStrings(run, i.set)
		}
	}
	flush()
	var best []string
	for _, c := range cands {
		if best == nil || betterSet(c, best) {
			best = c
		}
	}
	return litInfo{set: best, exact: allExact && runs == 1 && len(cands) == 1}
}

func betterSet(a, b []string) bool {
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(set []string) int {
	m := -1
	for _, s := range set {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

func productStrings(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = unionStrings(out, []string{x + y})
		}
	}
	return out
}

// unionStrings appends to a the strings of b it does not hold yet.
func unionStrings(a, b []string) []string {
outer:
	for _, s := range b {
		for _, t := range a {
			if s == t {
				continue outer
			}
		}
		a = append(a, s)
	}
	return a
}

// hasCaseVariantNonASCII reports whether a non-ASCII rune of rs has another case (é/É, K/Kelvin sign).
func hasCaseVariantNonASCII(rs []rune) bool {
	for _, r := range rs {
		if r >= utf8.RuneSelf && unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// asciiLower lowercases the ASCII letters of s and leaves every other byte as it is.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
