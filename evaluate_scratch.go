package guard

import (
	"math/rand/v2"

	"github.com/guardrail-control/guard/evaluator"
)

// scratch is the per-evaluation working memory, pooled per snapshot so that an evaluation that runs no
// evaluator and matches nothing allocates nothing.
type scratch struct {
	data     []evaluator.Data // per path: the selected data, computed at most once per evaluation
	dstate   []uint8          // per path: dataUnset, dataReady or dataFailed
	derr     []error          // per path: why the text form failed
	scan     []uint8          // per path: scanUnset, scanASCII or scanNonASCII
	pat      []uint64         // prefilter bitset over every path's literals
	runLen   []int32          // per run set: 1 + the longest run of its path's text, 0 when not measured yet
	runUsed  []int32          // run sets measured by this evaluation, to reset
	used     []int32          // paths touched by this evaluation, to reset
	mark     []uint64         // control bitset used to merge candidate lists
	cand     []int32          // merged candidate list
	ids      *rand.ChaCha8    // random source of control_execution_ids (used by one evaluation at a time)
	recs     []outRec         // Evaluate: the outcomes of the controls evaluated, in order
	live     []uint64         // control bitset of the live index (markLive)
	liveList []int32          // Check: the live candidates
	found    []leafFound      // per span slot (cLeaf.spanSlot): what the leaf's evaluation found
	// payload is the root of the payload of the stage being evaluated (set by candidates): a leaf that
	// can redact it is evaluated with EvaluateSpans. Check never reaches such a leaf (it stops before
	// the decisions that let the step through, the only ones that redact).
	payload selectorRoot
	// sess is the session state the evaluation reads (nil when the snapshot uses none).
	sess *sessionView
}

const (
	dataUnset uint8 = iota
	dataReady
	dataFailed
)

const (
	scanUnset uint8 = iota
	scanASCII
	scanNonASCII
)

func newScratch(s *snapshot) *scratch {
	return &scratch{
		data:   make([]evaluator.Data, len(s.paths)),
		dstate: make([]uint8, len(s.paths)),
		derr:   make([]error, len(s.paths)),
		scan:   make([]uint8, len(s.paths)),
		pat:    make([]uint64, s.patWords),
		runLen: make([]int32, len(s.runSets)),
		mark:   make([]uint64, (len(s.controls)+63)/64),
		live:   make([]uint64, (len(s.controls)+63)/64),
		ids:    newIDSource(),
		found:  make([]leafFound, s.spanSlots),
	}
}

func (s *snapshot) getScratch() *scratch { return s.pool.Get().(*scratch) }

// putScratch resets sc (dropping references to the step) and returns it to the pool.
func (s *snapshot) putScratch(sc *scratch) {
	for _, p := range sc.used {
		sc.data[p] = evaluator.Data{}
		sc.dstate[p] = dataUnset
		sc.derr[p] = nil
		if sc.scan[p] != scanUnset {
			cp := &s.paths[p]
			clear(sc.pat[cp.patBase : cp.patBase+cp.words])
			sc.scan[p] = scanUnset
		}
	}
	sc.used = sc.used[:0]
	for _, k := range sc.runUsed {
		sc.runLen[k] = 0
	}
	sc.runUsed = sc.runUsed[:0]
	clear(sc.recs)  // drop the references to evaluator results
	clear(sc.found) // empty unless the snapshot redacts
	sc.recs = sc.recs[:0]
	sc.sess = nil
	s.pool.Put(sc)
}

// dataFor returns the data path p selects in step, computing it on first use.
func (sc *scratch) dataFor(s *snapshot, step *Step, p int32) (*evaluator.Data, error) {
	switch sc.dstate[p] {
	case dataReady:
		return &sc.data[p], nil
	case dataFailed:
		return nil, sc.derr[p]
	}
	sc.used = append(sc.used, p)
	if sel := s.paths[p].sel.sess; sel != nil {
		return sc.sessionData(p, sel)
	}
	v, text, err := textForm(s.paths[p].sel.resolve(step))
	if err != nil {
		sc.dstate[p] = dataFailed
		sc.derr[p] = err
		return nil, err
	}
	sc.data[p] = evaluator.Data{Value: v, Text: text}
	sc.dstate[p] = dataReady
	return &sc.data[p], nil
}

// scanFor runs path p's automaton over text once per evaluation and reports whether text has any
// non-ASCII byte. dataFor(p) must have been called first.
func (sc *scratch) scanFor(s *snapshot, p int32, text string) uint8 {
	if st := sc.scan[p]; st != scanUnset {
		return st
	}
	cp := &s.paths[p]
	st := scanASCII
	if cp.ac.Scan(text, sc.pat[cp.patBase:cp.patBase+cp.words]) {
		st = scanNonASCII
	}
	sc.scan[p] = st
	return st
}

// anyBit reports whether any literal of a filtered leaf was found.
func (sc *scratch) anyBit(l *cLeaf) bool {
	for _, b := range l.bits {
		if sc.pat[b>>6]&(1<<(uint(b)&63)) != 0 {
			return true
		}
	}
	return false
}
