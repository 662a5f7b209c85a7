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

// runBound describes a regex with unbounded repetitions (a PEM body, a JWT, generic-api-key's value) so that
// the window after a keyword can end where a match can no longer reach, instead of maxAfter bytes on: every
// match is bounded parts (bounded bytes in all) and at most runs stretches of bytes of class. From a point
// inside the match, its end lies before extent's bound; on prose, where the class's runs are words, the window
// is a few hundred bytes, so that a text dense in keywords costs a few windows per keyword, not maxAfter each.
type runBound struct {
	bounded int
	runs    int
	class   [256]bool
}

// newRunBound analyses pattern; ok is false when the regex has no unbounded repetition.
func newRunBound(pattern string) (rb *runBound, ok bool, err error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, false, err
	}
	rb = &runBound{}
	rb.bounded, rb.runs = rb.split(re)
	return rb, rb.runs > 0, nil
}

// split returns the bounded bytes of re and how many unbounded runs it holds, adding the runs' bytes to
// the class.
func (rb *runBound) split(re *syntax.Regexp) (bounded, runs int) {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus:
		rb.addBytes(re.Sub[0])
		return 0, 1
	case syntax.OpRepeat:
		if re.Max < 0 {
			rb.addBytes(re.Sub[0])
			return 0, 1
		}
		b, r := rb.split(re.Sub[0])
		return b * re.Max, r * re.Max
	case syntax.OpCapture, syntax.OpQuest:
		return rb.split(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			b, r := rb.split(s)
			bounded, runs = bounded+b, runs+r
		}
		return bounded, runs
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			b, r := rb.split(s)
			bounded, runs = max(bounded, b), max(runs, r)
		}
		return bounded, runs
	default:
		n, _ := maxBytes(re)
		return n, 0
	}
}

// addBytes adds every byte a match of re can hold to the run class.
func (rb *runBound) addBytes(re *syntax.Regexp) { addClass(&rb.class, re) }

// addClass adds every byte a match of re can hold to class (all bytes of a multi-byte rune's encoding,
// folded letters in both cases).
func addClass(class *[256]bool, re *syntax.Regexp) {
	addRune := func(r rune) {
		if r >= utf8.RuneSelf {
			for c := 0x80; c < 256; c++ {
				class[c] = true
			}
			return
		}
		class[r] = true
		if re.Flags&syntax.FoldCase != 0 {
			class[lowerByte(byte(r))] = true
			if 'a' <= r && r <= 'z' {
				class[r-'a'+'A'] = true
			}
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			addRune(r)
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				addRune(r)
				if r >= utf8.RuneSelf {
					break
				}
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		for c := range class {
			class[c] = c != '\n' || re.Op == syntax.OpAnyChar
		}
	default:
		for _, s := range re.Sub {
			addClass(class, s)
		}
	}
}

// extent returns a bound (at most limit) on the end of any match that starts at or before from: after
// from, the match holds at most bounded bytes of its bounded parts, so each of its runs starts within
// bounded bytes of the previous bound and ends where the class's bytes end.
func (rb *runBound) extent(text string, from, limit int) int {
	q := from
	for range rb.runs {
		q = min(limit, q+rb.bounded)
		for q < limit && rb.class[text[q]] {
			q++
		}
	}
	return min(limit, q+rb.bounded)
}
