// Package ahocorasick finds which of many literal patterns occur in a text, in one pass over its bytes.
//
// Matching is byte-level and ASCII case-insensitive: 'A'..'Z' are folded to 'a'..'z' on the fly, every
// other byte (including all non-ASCII bytes) is compared exactly. A scan allocates nothing.
//
// Memory stays proportional to the total length of the patterns: input bytes are mapped to equivalence
// classes (bytes that occur in no pattern share one class), the root and the shallow states keep dense
// rows of fully resolved transitions (the hot part of a scan), and deeper states keep only their sorted
// trie edges plus a failure link.
package ahocorasick

import (
	"sort"
)

// denseDepth is the deepest state that gets a dense transition row; denseBudget bounds the number of
// dense row entries so that a huge pattern set does not blow up memory.
const (
	denseDepth  = 3
	denseBudget = 1 << 20
	// allDenseBudget: when every state's row fits in this many entries (256 KB), every state gets one, so
	// that no step of a scan follows failure links (a set of short, common words keeps a scan in deep
	// states most of the time).
	allDenseBudget = 1 << 16
)

// Automaton is an immutable Aho-Corasick automaton, safe for concurrent scans.
type Automaton struct {
	npat    int
	maxLen  int // the longest pattern's length
	ncls    int
	classes [256]uint8

	// Per state.
	fail     []int32
	denseRow []int32 // offset of the state's dense row in dense (row * ncls), or -1
	rowState []int32 // the state of each dense row
	edgeLo   []int32 // sparse edges of the state: edgeCls/edgeTo[edgeLo[s]:edgeLo[s+1]]
	outLo    []int32 // patterns ending exactly here: outPat[outLo[s]:outLo[s+1]]
	report   []int32 // first state on the failure chain (itself included) with outputs, or -1
	dictNext []int32 // next state with outputs on the failure chain after s, or -1

	dense   []int32
	edgeCls []uint8
	edgeTo  []int32
	outPat  []int32
}

func fold(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

type buildEdge struct {
	cls uint8
	to  int32
}

// New builds an automaton over patterns. Pattern i is reported as bit i by Scan. Empty patterns are
// never reported (an empty literal constrains nothing; callers should not filter on it).
func New(patterns []string) *Automaton {
	a := &Automaton{npat: len(patterns)}

	// Equivalence classes: class 0 is every byte that occurs in no pattern.
	var used [256]bool
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			used[fold(p[i])] = true
		}
	}
	n := 1
	for b := 0; b < 256; b++ {
		if used[b] && fold(byte(b)) == byte(b) {
			a.classes[b] = uint8(n)
			n++
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		a.classes[b] = a.classes[b+('a'-'A')]
	}
	a.ncls = n

	// Trie.
	edges := [][]buildEdge{nil}
	depth := []int32{0}
	outs := [][]int32{nil}
	child := func(s int32, c uint8) int32 {
		for _, e := range edges[s] {
			if e.cls == c {
				return e.to
			}
		}
		return -1
	}
	for pi, p := range patterns {
		if p == "" {
			continue
		}
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := a.classes[p[i]]
			t := child(s, c)
			if t < 0 {
				t = int32(len(edges))
				edges = append(edges, nil)
				depth = append(depth, depth[s]+1)
				outs = append(outs, nil)
				edges[s] = append(edges[s], buildEdge{c, t})
			}
			s = t
		}
		outs[s] = append(outs[s], int32(pi))
		a.maxLen = max(a.maxLen, len(p))
	}
	ns := len(edges)
	for s := range edges {
		sort.Slice(edges[s], func(i, j int) bool { return edges[s][i].cls < edges[s][j].cls })
	}

	// Failure links in BFS order; dense rows for shallow states.
	a.fail = make([]int32, ns)
	a.denseRow = make([]int32, ns)
	for i := range a.denseRow {
		a.denseRow[i] = -1
	}
	order := make([]int32, 0, ns)
	order = append(order, 0)
	for qi := 0; qi < len(order); qi++ {
		s := order[qi]
		for _, e := range edges[s] {
			order = append(order, e.to)
		}
	}
	// goto with failure: only called for states whose failure chains are complete.
	next := func(s int32, c uint8) int32 {
		for {
			if r := a.denseRow[s]; r >= 0 {
				return a.dense[int(r)*a.ncls+int(c)]
			}
			if t := child(s, c); t >= 0 {
				return t
			}
			s = a.fail[s]
		}
	}
	allDense := ns*a.ncls <= allDenseBudget
	for _, s := range order {
		// fail[s] was set when s's parent was visited.
		if allDense || depth[s] <= denseDepth && len(a.dense)+a.ncls <= denseBudget || s == 0 {
			row := int32(len(a.dense) / a.ncls)
			for c := 0; c < a.ncls; c++ {
				t := child(s, uint8(c))
				if t < 0 {
					if s == 0 {
						t = 0
					} else {
						t = next(a.fail[s], uint8(c))
					}
				}
				a.dense = append(a.dense, t)
			}
			a.denseRow[s] = row
		}
		for _, e := range edges[s] {
			if s == 0 {
				a.fail[e.to] = 0
			} else {
				a.fail[e.to] = next(a.fail[s], e.cls)
			}
		}
	}

	// Flatten edges and outputs.
	a.edgeLo = make([]int32, ns+1)
	a.outLo = make([]int32, ns+1)
	for s := 0; s < ns; s++ {
		a.edgeLo[s] = int32(len(a.edgeTo))
		if a.denseRow[s] < 0 {
			for _, e := range edges[s] {
				a.edgeCls = append(a.edgeCls, e.cls)
				a.edgeTo = append(a.edgeTo, e.to)
			}
		}
		a.outLo[s] = int32(len(a.outPat))
		a.outPat = append(a.outPat, outs[s]...)
	}
	a.edgeLo[ns] = int32(len(a.edgeTo))
	a.outLo[ns] = int32(len(a.outPat))

	// Output chains, in BFS order so that a state's failure target is done first.
	a.report = make([]int32, ns)
	a.dictNext = make([]int32, ns)
	a.report[0] = -1
	a.dictNext[0] = -1
	for _, s := range order {
		if s == 0 {
			continue
		}
		a.dictNext[s] = a.report[a.fail[s]]
		if len(outs[s]) > 0 {
			a.report[s] = s
		} else {
			a.report[s] = a.dictNext[s]
		}
	}
	// Final encoding of dense transitions: a target that is itself dense and reports nothing is stored
	// as its row offset (>= 0), so that the common step of a scan is a single load; any other target t
	// (it reports patterns, or it has no dense row) is stored as ^t.
	a.rowState = make([]int32, len(a.dense)/a.ncls)
	for st, r := range a.denseRow {
		if r >= 0 {
			a.rowState[r] = int32(st)
			a.denseRow[st] = r * int32(a.ncls)
		}
	}
	for i, t := range a.dense {
		if a.report[t] < 0 && a.denseRow[t] >= 0 {
			a.dense[i] = a.denseRow[t]
		} else {
			a.dense[i] = ^t
		}
	}
	return a
}

// Len returns the number of patterns the automaton was built over.
func (a *Automaton) Len() int { return a.npat }

// States returns the number of states (for memory accounting and tests).
func (a *Automaton) States() int { return len(a.fail) }

// MemoryBytes estimates the memory held by the automaton's tables.
func (a *Automaton) MemoryBytes() int {
	return 4*(len(a.fail)+len(a.denseRow)+len(a.rowState)+len(a.edgeLo)+len(a.outLo)+len(a.report)+len(a.dictNext)) +
		4*len(a.dense) + len(a.edgeCls) + 4*len(a.edgeTo) + 4*len(a.outPat) + 256
}

// Scan reports every pattern that occurs in text by setting bit i of found (found[i/64] bit i%64) for
// pattern i; found must hold at least (Len()+63)/64 words and is not cleared first. It returns whether
// text contains any byte >= 0x80. Scan allocates nothing.
//
// A step of the automaton waits for the table load of the step before it, so one pass runs at the speed
// of that load; a longer text is scanned as two halves in one loop, two independent chains of loads that
// the processor overlaps. The second half starts maxLen-1 bytes early, so a pattern that spans the middle
// is found in it.
func (a *Automaton) Scan(text string, found []uint64) (nonASCII bool) {
	if a.npat == 0 {
		for i := 0; i < len(text); i++ {
			if text[i] >= 0x80 {
				return true
			}
		}
		return false
	}
	var seenBits [seenStates / 64]uint64
	seen := &seenBits
	if len(a.fail) > seenStates {
		seen = nil
	}
	overlap := a.maxLen - 1
	if len(text) < minSplitText || overlap > len(text)/4 {
		_, high := a.scanFrom(a.denseRow[0], text, found, seen)
		return high >= 0x80
	}
	mid := len(text) / 2
	first, second := text[:mid], text[mid-overlap:]
	var high byte
	dense, classes := a.dense, &a.classes
	x, y := a.denseRow[0], a.denseRow[0]
	for i := 0; i < len(first); i++ {
		b, c := first[i], second[i]
		high |= b | c
		if x >= 0 {
			if v := dense[int(x)+int(classes[b])]; v >= 0 {
				x = v
			} else {
				x = a.enter(^v, found, seen)
			}
		} else {
			x = a.enter(a.sparseNext(^x, classes[b]), found, seen)
		}
		if y >= 0 {
			if v := dense[int(y)+int(classes[c])]; v >= 0 {
				y = v
			} else {
				y = a.enter(^v, found, seen)
			}
		} else {
			y = a.enter(a.sparseNext(^y, classes[c]), found, seen)
		}
	}
	_, h := a.scanFrom(y, second[len(first):], found, seen)
	return (high | h) >= 0x80
}

// seenStates bounds the automata whose reporting states are remembered during a scan (a bit each, on the
// stack).
const seenStates = 4096

// minSplitText is the shortest text scanned as two halves.
const minSplitText = 256

// scanFrom runs the automaton over text from x (a dense row offset, or ^state) and returns where it
// ends and the OR of text's bytes.
func (a *Automaton) scanFrom(x int32, text string, found []uint64, seen *[seenStates / 64]uint64) (int32, byte) {
	var high byte
	dense, classes := a.dense, &a.classes
	for i := 0; i < len(text); i++ {
		b := text[i]
		high |= b
		c := classes[b]
		if x >= 0 {
			if v := dense[int(x)+int(c)]; v >= 0 {
				x = v
				continue
			} else {
				x = a.enter(^v, found, seen)
			}
		} else {
			x = a.enter(a.sparseNext(^x, c), found, seen)
		}
	}
	return x, high
}

// enter reports the patterns that end at state s and returns s as a scan holds it: its dense row
// offset, or ^s when it has none.
func (a *Automaton) enter(s int32, found []uint64, seen *[seenStates / 64]uint64) int32 {
	if seen != nil && a.report[s] >= 0 {
		// A state's patterns are reported once per scan: short words ("to", "the") are entered again
		// every few words of prose, and their outputs are already in found.
		w, bit := s>>6, uint64(1)<<(uint(s)&63)
		if seen[w]&bit != 0 {
			goto next
		}
		seen[w] |= bit
	}
	for r := a.report[s]; r >= 0; r = a.dictNext[r] {
		for _, p := range a.outPat[a.outLo[r]:a.outLo[r+1]] {
			found[p>>6] |= 1 << (uint(p) & 63)
		}
	}
next:
	if r := a.denseRow[s]; r >= 0 {
		return r
	}
	return ^s
}

// sparseNext returns the state after s on class c, following trie edges and failure links from a state
// without a dense row.
func (a *Automaton) sparseNext(s int32, c uint8) int32 {
	for {
		if off := a.denseRow[s]; off >= 0 {
			if v := a.dense[int(off)+int(c)]; v >= 0 {
				return a.rowState[int(v)/a.ncls]
			} else {
				return ^v
			}
		}
		for j := a.edgeLo[s]; j < a.edgeLo[s+1]; j++ {
			if ec := a.edgeCls[j]; ec >= c {
				if ec == c {
					return a.edgeTo[j]
				}
				break
			}
		}
		s = a.fail[s]
	}
}
