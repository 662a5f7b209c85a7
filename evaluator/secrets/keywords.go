package secrets

import (
	"math/bits"
	"slices"
)

// keywordIndex finds the keywords of a set of rules in one pass over a text, comparing ASCII letters
// case-insensitively: a bitmap of the keywords' first two (lowered) bytes rules out most positions with
// one lookup, a bitmap of their first three bytes (hashed) most of the rest, and only the positions left
// are compared in full. With two hundred rules many pairs of ordinary prose ("ac", "to", "ke") start some
// keyword, few triples do. The entries of a pair are found by rank in the bitmap (the set bits before
// it), not by hashing.
type keywordIndex struct {
	pairs   [1 << 16 / 64]uint64
	triples [1 << 16 / 64]uint64
	rank    [1 << 16 / 64]uint16 // set bits in the words before each word
	byPair  [][]keywordEntry     // by rank
	short   []uint16             // the pairs that are whole keywords (2 bytes: "ey", "q~")
	gated   []*rule              // by rule index: the rule when it has a gate (checked before a hit is kept)
}

// triple hashes three lowered bytes to a bit of keywordIndex.triples.
func triple(a, b, c byte) uint16 {
	return uint16((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 2654435761 >> 16)
}

// keywordEntry is one distinct keyword and the rules (indexes into Evaluator.rules) it gates.
type keywordEntry struct {
	kw    string // lower case, at least 2 bytes
	rules []int32
}

// hit is one occurrence of a rule's keyword.
type hit struct {
	rule, pos, kwLen int32
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func newKeywordIndex(rules []*rule) *keywordIndex {
	ki := &keywordIndex{gated: make([]*rule, len(rules))}
	byPair := map[uint16][]keywordEntry{}
	for ri, r := range rules {
		if r.gate != nil {
			ki.gated[ri] = r
		}
		for _, kw := range r.keywords {
			key := uint16(kw[0])<<8 | uint16(kw[1])
			ki.pairs[key>>6] |= 1 << (key & 63)
			if len(kw) == 2 {
				if !slices.Contains(ki.short, key) {
					ki.short = append(ki.short, key)
				}
			} else {
				t := triple(kw[0], kw[1], kw[2])
				ki.triples[t>>6] |= 1 << (t & 63)
			}
			list := byPair[key]
			found := false
			for i := range list {
				if list[i].kw == kw {
					list[i].rules = append(list[i].rules, int32(ri))
					found = true
				}
			}
			if !found {
				list = append(list, keywordEntry{kw: kw, rules: []int32{int32(ri)}})
			}
			byPair[key] = list
		}
	}
	n := 0
	for w, bitsSet := range ki.pairs {
		ki.rank[w] = uint16(n)
		n += bits.OnesCount64(bitsSet)
	}
	ki.byPair = make([][]keywordEntry, n)
	for key, list := range byPair {
		ki.byPair[ki.slot(key)] = list
	}
	return ki
}

// slot is the index in byPair of a pair whose bit is set.
func (ki *keywordIndex) slot(key uint16) int {
	w := ki.pairs[key>>6]
	return int(ki.rank[key>>6]) + bits.OnesCount64(w&(1<<(key&63)-1))
}

// find appends a hit for every occurrence of every keyword, for each rule the keyword gates.
func (ki *keywordIndex) find(text string, out []hit) []hit {
	if len(text) < 2 {
		return out
	}
	prev := lowerByte(text[0])
	for i := 1; i < len(text); i++ {
		cur := lowerByte(text[i])
		key := uint16(prev)<<8 | uint16(cur)
		prev = cur
		if ki.pairs[key>>6]&(1<<(key&63)) == 0 {
			continue
		}
		if i+1 < len(text) {
			t := triple(lowerByte(text[i-1]), cur, lowerByte(text[i+1]))
			if ki.triples[t>>6]&(1<<(t&63)) == 0 && !slices.Contains(ki.short, key) {
				continue
			}
		}
		start := i - 1
		for _, ent := range ki.byPair[ki.slot(key)] {
			if !hasPrefixFold(text[start:], ent.kw) {
				continue
			}
			for _, r := range ent.rules {
				if g := ki.gated[r]; g != nil && !g.gated(text, start) {
					continue // a bare form's exact-case start ("MT", ":A") is not here: "and", "not"
				}
				out = append(out, hit{rule: r, pos: int32(start), kwLen: int32(len(ent.kw))})
			}
		}
	}
	return out
}

// hasPrefixFold reports whether s starts with the lower-case keyword kw, ASCII case-insensitively.
func hasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if lowerByte(s[i]) != kw[i] {
			return false
		}
	}
	return true
}

// isNameByte reports the bytes gitleaks allows between a keyword and its operator ([ \t\w.-]).
func isNameByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '_' || c == '.' || c == '-' ||
		('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// assignmentAfter checks the shape gitleaks' "name = value" rules require after their keyword: up to 20
// name bytes, up to 3 quotes or spaces, then an operator (=, >, :, ||, ?=, ,). It returns the offset of
// the operator. It is a necessary condition of the regex, checked without running it.
func assignmentAfter(text string, i int) (int, bool) {
	limit := min(len(text), i+20)
	for i < limit && isNameByte(text[i]) {
		i++
	}
	for q := 0; q < 3 && i < len(text); q++ {
		c := text[i]
		if c != '\'' && c != '"' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' {
			break
		}
		i++
	}
	if i < len(text) {
		switch text[i] {
		case '=', '>', ':', '|', '?', ',':
			return i, true
		}
	}
	return 0, false
}
