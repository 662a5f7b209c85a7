package secrets

import (
	"regexp/syntax"
	"unicode/utf8"
)

// Bounds of a rule's window around a keyword occurrence. A match of a regex whose length is bounded by L
// bytes lies within L bytes of any keyword inside it; a regex with an unbounded repetition (a PEM body, a
// JWT) gets maxAfter bytes after the keyword, which holds a 4096-bit RSA key with room to spare, and
// maxBefore bytes before it (the rules' keywords open their token or its name, near the match start).
const (
	maxBefore = 512
	maxAfter  = 16384
)

// reach returns how many bytes before and after a keyword occurrence the regex of a rule must see: the
// longest match the regex can make, capped as above. gitleaks runs a rule's regex on the whole text when
// one of its keywords occurs anywhere; running it on these windows finds the same matches that contain
// a keyword (all of the shipped rules' true positives do: the test corpus checks it) at a cost that does
// not grow with the text.
func reach(pattern string) (before, after int, err error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, 0, err
	}
	n, bounded := maxBytes(re)
	if !bounded {
		return maxBefore, maxAfter, nil
	}
	return min(n, maxBefore), min(n, maxAfter), nil
}

// maxBytes is the longest UTF-8 text re can match, and false when it has no bound.
func maxBytes(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				n += utf8.UTFMax // a folded letter may be a longer rune (k matches the Kelvin sign)
			} else {
				n += utf8.RuneLen(r)
			}
		}
		return n, true
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0, true
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], utf8.MaxRune)), true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxBytes(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return 0, false
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		n, ok := maxBytes(re.Sub[0])
		return n * re.Max, ok
	case syntax.OpConcat:
		total := 0
		for _, s := range re.Sub {
			n, ok := maxBytes(s)
			if !ok {
				return 0, false
			}
			total += n
		}
		return total, true
	case syntax.OpAlternate:
		longest := 0
		for _, s := range re.Sub {
			n, ok := maxBytes(s)
			if !ok {
				return 0, false
			}
			longest = max(longest, n)
		}
		return longest, true
	default: // empty match, anchors, word boundaries
		return 0, true
	}
}
