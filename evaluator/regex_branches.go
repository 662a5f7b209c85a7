package evaluator

import (
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/guardrail-control/guard/internal/ahocorasick"
)

// A detector pattern is often a long alternation of rule families (a template's SQL injection or prompt
// injection pattern). Go's regexp runs such a pattern as one NFA whose every branch is tried at every byte,
// so its cost grows with the pattern, and the engine's prefilter (RequiredLiterals) can say nothing of an
// alternation as a whole. branchFilter splits the top-level alternation into its branches, each compiled
// on its own with the literals one of which it requires; one Aho-Corasick pass over the text tells which
// branches can match, and only those run. A text that matches no branch's literals costs one pass.

// maxBranchLiterals bounds the literals of a branch filter (the scan's bit set lives on the stack).
const maxBranchLiterals = 512

// branchFilter is the split form of a top-level alternation.
type branchFilter struct {
	ac       *ahocorasick.Automaton
	branches []regexBranch
	folds    bool // some branch folds case (Unicode): see asciiFoldsIn
	// uses are, per literal, the branches it gates (regex_segments.go); branchLits, per branch, its
	// literals; seps the distinct separator sets of the branches.
	lits       []string
	uses       [][]branchUse
	branchLits [][maxBranchLiterals / 64]uint64
	seps       []ByteSet
}

// regexBranch is one top-level branch: its regexp and the literal ids one of which it requires (none:
// it always runs).
type regexBranch struct {
	re *lazyRegexp
	// sets are the literal sets the branch requires, all of them: of each set one literal must occur
	// (a branch "ignore ... previous ... instructions" needs a word of each list). None: it always runs.
	sets [][]int32
	// full has a bit for each of the first 64 sets (any of them are required, so fewer still filter);
	// sep is the index of the branch's separator set in branchFilter.seps.
	full uint64
	sep  int
	// atStart: every match starts at the start of the text (the branch opens with ^ without MULTILINE,
	// or \A), so only the first segment can hold one.
	atStart bool
	// anchored, when not nil, is the branch from its lead on, anchored at the start (regex_anchored.go):
	// it runs from each occurrence of a literal of sets[leadSet], on maxLen+1 bytes (maxLen < 0: to the
	// end of the text), where \b holds first when leadWB.
	anchored *lazyRegexp
	leadSet  int
	leadWB   bool
	maxLen   int
	reach    int // maxLen with each unbounded run of white space counted as one byte (for counting work)
}

// newBranchFilter splits pattern (compiled with the flags prefix) into its top-level branches; nil when it
// has fewer than two, or when a branch fails to compile alone, or when too few branches have literals
// for the split to pay.
func newBranchFilter(pattern, prefix string) *branchFilter {
	parts := splitTopLevel(pattern)
	if len(parts) < 2 {
		return nil
	}
	f := &branchFilter{}
	ids := map[string]int32{}
	var lits []string
	filtered := 0
	// leadRoom keeps room in the filter for the other branches' literals: a lead set is added only while
	// the literals stay well below maxBranchLiterals.
	leadRoom := maxBranchLiterals / 4
	for _, p := range parts {
		// A branch that does not parse alone (a split this scanner got wrong) leaves the pattern whole.
		parsed, err := syntax.Parse(prefix+p, syntax.Perl)
		if err != nil {
			return nil
		}
		br := regexBranch{re: newLazyRegexp(prefix + p)}
		{
			parsed = parsed.Simplify()
			f.folds = f.folds || hasFoldCase(parsed)
			sets := selectiveSets(requiredSets(parsed))
			br.atStart = startsAtBeginText(parsed)
			sep := separatorsOf(parsed, sets)
			br.sep = f.sepIndex(sep)
			if !sep.Contains('.') && !sep.Contains('\n') {
				// Nothing ends its segments in prose: run it from its lead literals when it has them.
				sets = anchoredForm(&br, prefix, p, parsed, sets, maxBranchLiterals-len(lits)-leadRoom)
			}
			for _, set := range sets {
				var idset []int32
				for _, l := range set {
					id, ok := ids[l]
					if !ok {
						id = int32(len(lits))
						ids[l] = id
						lits = append(lits, l)
					}
					idset = append(idset, id)
				}
				br.sets = append(br.sets, idset)
			}
			if len(br.sets) > 0 {
				filtered++
			}
		}
		f.branches = append(f.branches, br)
	}
	if filtered == 0 || len(lits) > maxBranchLiterals {
		return nil
	}
	f.ac = ahocorasick.New(lits)
	f.lits = lits
	f.uses = make([][]branchUse, len(lits))
	f.branchLits = make([][maxBranchLiterals / 64]uint64, len(f.branches))
	for b := range f.branches {
		br := &f.branches[b]
		for si, set := range br.sets[:min(len(br.sets), 64)] {
			br.full |= 1 << uint(si)
			for _, id := range set {
				f.branchLits[b][id>>6] |= 1 << (uint(id) & 63)
				u := f.uses[id]
				if n := len(u); n > 0 && u[n-1].b == int32(b) {
					u[n-1].mask |= 1 << uint(si)
				} else {
					f.uses[id] = append(u, branchUse{b: int32(b), mask: 1 << uint(si)})
				}
			}
		}
	}
	return f
}

// sepIndex returns the index of set in f.seps, adding it when new.
func (f *branchFilter) sepIndex(set ByteSet) int {
	for i, s := range f.seps {
		if s == set {
			return i
		}
	}
	f.seps = append(f.seps, set)
	return len(f.seps) - 1
}

// match reports whether some branch matches text; ok is false when the filter cannot decide (non-ASCII
// text and a case-folding branch) and the whole pattern must run.
func (f *branchFilter) match(text string) (matched, ok bool) {
	return f.matchCounting(text, nil, nil)
}

// matchCounting is match, counting its work in work when not nil; with changed, text is a normalised
// text whose original did not match (see matchWindows).
func (f *branchFilter) matchCounting(text string, changed []int32, work *regexWork) (matched, ok bool) {
	var found [maxBranchLiterals / 64]uint64
	if work != nil {
		work.scanned += len(text)
	}
	if nonASCII := f.ac.Scan(text, found[:]); nonASCII && f.folds && asciiFoldsIn(text) {
		return false, false
	}
	var candBuf [128]bool
	cand := candBuf[:0]
	if len(f.branches) > len(candBuf) {
		cand = make([]bool, 0, len(f.branches))
	}
	windowed := false
	for i := range f.branches {
		br := &f.branches[i]
		if len(br.sets) == 0 {
			// No literal gates it: it runs over the whole text.
			if work != nil {
				work.runs++
				work.bytes += len(text)
				work.whole += len(text)
			}
			if br.re.get().MatchString(text) {
				return true, true
			}
			cand = append(cand, false)
			continue
		}
		ok := allSetsHit(br.sets, &found)
		cand = append(cand, ok)
		windowed = windowed || ok
	}
	if !windowed {
		return false, true
	}
	return f.matchWindows(text, cand, &found, changed, work), true
}

// allSetsHit reports whether every set has a literal in found.
func allSetsHit(sets [][]int32, found *[maxBranchLiterals / 64]uint64) bool {
	for _, set := range sets {
		hit := false
		for _, id := range set {
			if found[id>>6]&(1<<(uint(id)&63)) != 0 {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// requiredSets returns literal sets that every match of re requires, each of them: for a concatenation
// the set of each part that has one, else the single set requiredLiterals finds. A set with an empty
// literal requires nothing and is left out.
func requiredSets(re *syntax.Regexp) [][]string {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	var out [][]string
	add := func(set []string) {
		for _, l := range set {
			if l == "" {
				return
			}
		}
		if len(set) > 0 {
			out = append(out, set)
		}
	}
	if re.Op == syntax.OpConcat {
		for _, sub := range re.Sub {
			add(literalsOf(sub).set)
		}
	}
	if set, _, ok := requiredLiterals(re); ok {
		add(set)
	}
	return out
}

// Literal sets that gate a branch cost a scan step whenever one of their literals occurs. A set with a
// one-letter literal ("s" of "rules?", "i") occurs in nearly every text, so it filters nothing and slows
// the scan; selectiveSets leaves such sets out and keeps each other set once. A one-character set of
// punctuation ("'", "=") stays: in prose it is rare, and it is what gates a SQL injection family. A
// branch with no other set keeps its first one. Any subset of the required sets is still required, so
// the filter stays exact.
func selectiveSets(sets [][]string) [][]string {
	var out [][]string
	for _, set := range sets {
		if hasLetterLiteral(set) || slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, set) }) {
			continue
		}
		out = append(out, set)
	}
	if len(out) == 0 && len(sets) > 0 {
		out = sets[:1]
	}
	return out
}

// hasLetterLiteral reports whether set holds a one-byte literal that is a letter or a digit.
func hasLetterLiteral(set []string) bool {
	for _, l := range set {
		if len(l) == 1 && ('a' <= l[0] && l[0] <= 'z' || 'A' <= l[0] && l[0] <= 'Z' || '0' <= l[0] && l[0] <= '9') {
			return true
		}
	}
	return false
}

// asciiFoldsIn reports whether text holds one of the two non-ASCII characters that Unicode case folding
// maps onto ASCII letters (the Kelvin sign onto k, the long s onto s): only then can a case-folding branch
// match where its ASCII literals do not occur.
func asciiFoldsIn(text string) bool {
	return strings.Contains(text, "\u212a") || strings.Contains(text, "\u017f")
}

// splitTopLevel splits a regexp at the '|' that are outside groups and character classes; a pattern with
// a flag group that spans branches ("(?i)a|b" is fine, "a(?i)|b" changes the flags of what follows) is
// not split, nor one with a syntax this scanner does not follow.
func splitTopLevel(p string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && p[i+1] == 'Q' {
				return nil // \Q...\E quotes '|' and parentheses: not followed here
			}
			i++
		case '[':
			i = skipClass(p, i)
			if i < 0 {
				return nil
			}
		case '(':
			if depth == 0 && i+2 < len(p) && p[i+1] == '?' && isFlagGroup(p[i+2:]) {
				return nil
			}
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil
			}
		case '|':
			if depth == 0 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil
	}
	return append(parts, p[start:])
}

// skipClass returns the index of the ']' closing the class that opens at i, or -1.
func skipClass(p string, i int) int {
	j := i + 1
	if j < len(p) && p[j] == '^' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '[':
			if j+1 < len(p) && p[j+1] == ':' { // [:alpha:]
				end := indexFrom(p, j+2, ":]")
				if end < 0 {
					return -1
				}
				j = end + 1
			}
		case ']':
			return j
		}
	}
	return -1
}

func indexFrom(s string, from int, sub string) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// isFlagGroup reports whether s (after "(?") starts a bare flag setting such as "i)" or "-i)", which
// applies to the rest of the enclosing group; "i:" opens a scoped group and is fine.
func isFlagGroup(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ')':
			return true
		case c == ':':
			return false
		case c == '-' || c == 'i' || c == 'm' || c == 's' || c == 'U':
		default:
			return false
		}
	}
	return false
}

// startsAtBeginText reports whether every match of re starts at the start of the text: re is, or opens
// with, \A (or ^ without MULTILINE).
func startsAtBeginText(re *syntax.Regexp) bool {
	for {
		switch re.Op {
		case syntax.OpBeginText:
			return true
		case syntax.OpCapture:
			re = re.Sub[0]
		case syntax.OpConcat:
			if len(re.Sub) == 0 {
				return false
			}
			re = re.Sub[0]
		case syntax.OpAlternate:
			for _, sub := range re.Sub {
				if !startsAtBeginText(sub) {
					return false
				}
			}
			return true
		default:
			return false
		}
	}
}
