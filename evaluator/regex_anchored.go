package evaluator

import (
	"regexp/syntax"
	"slices"
	"strings"
)

// A branch that no byte separates (a gap "[^\n]{0,30}", "\W{0,12}") would run over the whole text once
// its literal sets occur anywhere. When every match of it starts with a literal of one of its sets (its
// lead: "\b(?:complete|continue|start)\b[^\n]{0,30}?..." starts with one of those words), it runs
// instead from each occurrence of a lead literal, anchored there: on the bytes a match from there can
// reach (its longest match plus one byte, for the assertion after it), or, when a run of white space in
// it is unbounded, to the end of the text (the anchored run stops where the branch can no longer match,
// a few words on).

// maxAnchoredWindow bounds the longest match that makes a bounded anchored window.
const maxAnchoredWindow = 4096

// anchoredForm fills br's anchored form from the branch's parse (simplified) and its literal sets, when
// it has one: the branch opens (after an optional \b, checked by hand) with a part every match of which
// starts with one of a set of literals (its lead), and its matches are bounded but for runs of white
// space. It returns the sets with the lead among them (added when it was not: every match holds one of
// its literals, so it is a required set too); room is how many more literals the filter can take.
func anchoredForm(br *regexBranch, prefix, source string, parsed *syntax.Regexp, sets [][]string, room int) [][]string {
	if parsed.Op != syntax.OpConcat || len(parsed.Sub) < 2 {
		return sets
	}
	subs := parsed.Sub
	wb := subs[0].Op == syntax.OpWordBoundary
	if wb {
		// The anchored form is written from the branch's source (printing a parse folds every class
		// again, hundreds of milliseconds for a long one): the \b must be its first two characters.
		if !strings.HasPrefix(source, `\b`) {
			return sets
		}
		subs, source = subs[1:], source[2:]
	}
	lead := prefixLiterals(&syntax.Regexp{Op: syntax.OpConcat, Flags: parsed.Flags, Sub: subs})
	if len(lead) == 0 || slices.Contains(lead, "") || hasLetterLiteral(lead) {
		return sets
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: parsed.Flags, Sub: subs}
	if maxMatchLen(rest, true) < 0 || !wb && maxMatchLen(rest, false) < 0 && !spaceRunsOnly(rest) {
		// An unbounded run of word characters is read once per lead only when leads start words (\b):
		// then a word is read by the few runs that start at the words before it, not by every byte of it.
		return sets
	}
	set := slices.IndexFunc(sets, func(s []string) bool { return sameStrings(s, lead) })
	if set < 0 {
		if len(lead) > room || len(sets) >= 64 {
			return sets
		}
		sets = append(sets, lead)
		set = len(sets) - 1
	}
	if set >= 64 {
		return sets
	}
	br.anchored = newLazyRegexp(prefix + `\A(?:` + source + `)`)
	br.leadSet, br.leadWB = set, wb
	br.reach = maxMatchLen(rest, true)
	br.maxLen = maxMatchLen(rest, false)
	if br.maxLen > maxAnchoredWindow {
		br.maxLen = -1
	}
	return sets
}

// prefixLiterals returns literals (ASCII-lowercased) one of which starts every match of re, or nil: the
// exact leading parts joined (at most maxLiteralProduct strings), then the prefixes of the next part.
func prefixLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass:
		if info := literalsOf(re); info.exact {
			return info.set
		}
		return nil
	case syntax.OpCapture, syntax.OpPlus:
		return prefixLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return prefixLiterals(re.Sub[0])
		}
		return nil
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			p := prefixLiterals(sub)
			if p == nil {
				return nil
			}
			out = unionStrings(out, p)
		}
		return out
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			if info := literalsOf(sub); info.set != nil && info.exact && len(acc)*len(info.set) <= maxLiteralProduct {
				acc = productStrings(acc, info.set)
				continue
			}
			if p := prefixLiterals(sub); p != nil && len(acc)*len(p) <= 8*maxLiteralProduct {
				acc = productStrings(acc, p)
			}
			break
		}
		if slices.Contains(acc, "") {
			return nil
		}
		return acc
	}
	return nil
}

// sameStrings reports whether a and b hold the same strings.
func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// maxMatchLen is the most bytes a match of re holds, or -1 when unbounded; with runs, an unbounded
// repetition of white space or word characters (\s+, \w+) counts as one byte (the bound is then on the
// number of words and spaces, not their length).
func maxMatchLen(re *syntax.Regexp, runs bool) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += maxRuneLen(r, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return maxRuneLen(re.Rune[len(re.Rune)-1], false)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 4
	case syntax.OpCapture:
		return maxMatchLen(re.Sub[0], runs)
	case syntax.OpQuest:
		return maxMatchLen(re.Sub[0], runs)
	case syntax.OpStar, syntax.OpPlus:
		if runs && isWordOrSpaceClass(re.Sub[0]) {
			return 1
		}
		return -1
	case syntax.OpRepeat:
		if re.Max < 0 {
			if runs && isWordOrSpaceClass(re.Sub[0]) {
				return 1
			}
			return -1
		}
		n := maxMatchLen(re.Sub[0], runs)
		if n < 0 {
			return -1
		}
		return satMul(n, re.Max)
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			m := maxMatchLen(sub, runs)
			if m < 0 {
				return -1
			}
			n = satAdd(n, m)
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			m := maxMatchLen(sub, runs)
			if m < 0 {
				return -1
			}
			n = max(n, m)
		}
		return n
	}
	return -1
}

// maxRuneLen is the longest UTF-8 encoding of r or, with fold, of a character it folds to.
func maxRuneLen(r rune, fold bool) int {
	if fold {
		return 4 // the Kelvin sign (3 bytes) for k, the long s (2) for s: simply the most
	}
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// isWordOrSpaceClass reports whether re matches one byte of white space or of a word only (\s, \w,
// [\w-] is not).
func isWordOrSpaceClass(re *syntax.Regexp) bool {
	// Under IGNORECASE, \w also holds the long s and the Kelvin sign, which fold onto s and k.
	return classWithin(re, func(r rune) bool {
		return isSpaceRune(r) || r < 0x80 && isWordByte(byte(r)) || r == '\u017f' || r == '\u212a'
	})
}

// spaceRunsOnly reports whether every unbounded repetition in re is of white space.
func spaceRunsOnly(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus:
		return classWithin(re.Sub[0], isSpaceRune)
	case syntax.OpRepeat:
		if re.Max < 0 {
			return classWithin(re.Sub[0], isSpaceRune)
		}
	}
	for _, sub := range re.Sub {
		if !spaceRunsOnly(sub) {
			return false
		}
	}
	return true
}

func isSpaceRune(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r' || r == '\v'
}

// classWithin reports whether re is a character class or a one-character literal whose every
// character satisfies ok.
func classWithin(re *syntax.Regexp, ok func(rune) bool) bool {
	switch re.Op {
	case syntax.OpCharClass:
		for k := 0; k+1 < len(re.Rune); k += 2 {
			if re.Rune[k+1]-re.Rune[k] > 256 {
				return false
			}
			for r := re.Rune[k]; r <= re.Rune[k+1]; r++ {
				if !ok(r) {
					return false
				}
			}
		}
		return len(re.Rune) > 0
	case syntax.OpLiteral:
		return len(re.Rune) == 1 && ok(re.Rune[0]) && re.Flags&syntax.FoldCase == 0
	}
	return false
}

// isWordByte is the ASCII word character of \b.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// wordBoundaryAt reports whether \b holds at byte i of text.
func wordBoundaryAt(text string, i int) bool {
	before := i > 0 && isWordByte(text[i-1])
	after := i < len(text) && isWordByte(text[i])
	return before != after
}
