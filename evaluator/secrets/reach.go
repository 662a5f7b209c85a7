package secrets

import (
	"regexp/syntax"
	"slices"
	"strings"
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

// anchor is what every match of a rule starts with, when the regex says so: one of a few literals
// (compared ASCII case-insensitively when folded), each beginning with one of the rule's keywords, after a
// word boundary when boundary. A keyword occurrence that does not start one of the literals, or that follows
// a word byte when the regex wants a boundary, cannot start a match and needs no regex run; one that does
// needs a window that starts at the occurrence.
type anchor struct {
	literals []literal
	boundary bool
}

// literal is a literal prefix of a match; lower case when fold.
type literal struct {
	s    string
	fold bool
}

// leadingLiteral follows captures and the first element of concatenations down to a literal.
func leadingLiteral(re *syntax.Regexp) (literal, bool) {
	for {
		switch re.Op {
		case syntax.OpCapture:
			re = re.Sub[0]
		case syntax.OpConcat:
			re = re.Sub[0]
		case syntax.OpLiteral:
			l := literal{s: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0}
			for i := 0; i < len(l.s); i++ {
				if l.s[i] >= utf8.RuneSelf {
					return literal{}, false
				}
			}
			if l.fold {
				l.s = strings.ToLower(l.s)
			}
			return l, l.s != ""
		default:
			return literal{}, false
		}
	}
}

// anchorOf returns the anchor of pattern for the given (lower-case) keywords, and false when the regex
// does not start every match with one of them: it starts with a literal, or with an alternation of
// literals (vault's `hvs\.`|`s\.`), after an optional \b.
func anchorOf(pattern string, keywords []string) (anchor, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return anchor{}, false
	}
	var a anchor
	for re.Op == syntax.OpCapture || re.Op == syntax.OpConcat {
		if re.Op == syntax.OpCapture {
			re = re.Sub[0]
			continue
		}
		if re.Sub[0].Op == syntax.OpWordBoundary && !a.boundary && len(re.Sub) > 1 {
			a.boundary = true
			re = &syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[1:]}
			continue
		}
		if re.Sub[0].Op == syntax.OpAlternate || re.Sub[0].Op == syntax.OpCapture || re.Sub[0].Op == syntax.OpConcat {
			re = re.Sub[0]
			continue
		}
		break
	}
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub
	}
	for _, b := range branches {
		l, ok := leadingLiteral(b)
		if !ok || !slices.ContainsFunc(keywords, func(k string) bool { return strings.HasPrefix(strings.ToLower(l.s), k) }) {
			return anchor{}, false
		}
		a.literals = append(a.literals, l)
	}
	return a, true
}

// at reports whether a match can start at text[i:].
func (a *anchor) at(text string, i int) bool {
	prevWord := i > 0 && isWordByte(text[i-1])
	for _, l := range a.literals {
		if a.boundary && isWordByte(l.s[0]) == prevWord {
			continue // \b needs a word byte on exactly one side
		}
		if l.fold && hasPrefixFold(text[i:], l.s) || !l.fold && strings.HasPrefix(text[i:], l.s) {
			return true
		}
	}
	return false
}
