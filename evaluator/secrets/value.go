package secrets

import (
	"regexp/syntax"
	"strings"
)

// valueShape is a necessary condition on the value of gitleaks' "name = value" rules, checked after the
// assignment operator without running the regex: within a few quote, space or operator bytes, a run of at
// least minLen bytes of the value's class must begin. In prose, where "key," or "token:" is followed by a
// short word ("The api key, as noted, ..."), no window is opened at all, so that text dense in the rules'
// key words costs a pass over its bytes, not a regex run per key word.
type valueShape struct {
	lead    [256]bool // bytes that may come between the operator and the value
	leadMax int
	class   [256]bool // bytes the value may hold
	minLen  int
}

// newValueShape reads the value part of a "name = value" regex (what follows assignTemplate): the elements
// before its first capture group are the lead, the group is the value. ok is false when the part does not
// have that shape (the rule then runs without the check).
func newValueShape(valuePart string, foldCase bool) (*valueShape, bool) {
	flags := syntax.Perl
	if foldCase {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(valuePart, flags)
	if err != nil || re.Op != syntax.OpConcat {
		return nil, false
	}
	vs := &valueShape{}
	// The operator's other bytes (":=", "=>", "||", "?=", ":::=") may follow the one assignmentAfter found.
	for _, c := range []byte(":=>|?") {
		vs.lead[c] = true
	}
	vs.leadMax = 3
	for _, sub := range re.Sub {
		if sub.Op == syntax.OpCapture {
			addClass(&vs.class, sub)
			vs.minLen = minBytes(sub)
			return vs, vs.minLen > 0
		}
		n, bounded := maxBytes(sub)
		if !bounded {
			return nil, false
		}
		addClass(&vs.lead, sub)
		vs.leadMax += n
	}
	return nil, false
}

// possible reports whether a value can follow the operator at text[op].
func (vs *valueShape) possible(text string, op int) bool {
	i := op + 1
	for k := 0; k <= vs.leadMax && i+k <= len(text); k++ {
		j := i + k
		run := 0
		for j < len(text) && run < vs.minLen && vs.class[text[j]] {
			j++
			run++
		}
		if run >= vs.minLen {
			return true
		}
		if i+k >= len(text) || !vs.lead[text[i+k]] {
			return false
		}
	}
	return false
}

// minBytes is the fewest bytes a match of re holds.
func minBytes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(string(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture:
		return minBytes(re.Sub[0])
	case syntax.OpPlus:
		return minBytes(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minBytes(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minBytes(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if m := minBytes(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	default: // star, quest, empty, anchors
		return 0
	}
}

// valuePartOf returns what follows assignTemplate in a regex, in its own case, and whether the regex is a
// "name = value" one.
func valuePartOf(pattern string) (string, bool) {
	i := strings.Index(strings.ToLower(pattern), strings.ToLower(assignTemplate))
	if i < 0 {
		return "", false
	}
	return pattern[i+len(assignTemplate):], true
}
